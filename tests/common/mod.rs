//! Shared test kit: a hermetic environment per test (temp config and cache dirs, scrubbed
//! environment), a runner for the real binary, and the fake provider server.
#![allow(dead_code)]

pub mod age_format;
pub mod browser;
pub mod clients;
pub mod fake_llm;
pub mod http;
pub mod postgres;
pub mod proxy;
pub mod pty;

use std::path::{Path, PathBuf};

use fake_llm::FakeLlm;

/// Path of the binary under test.
pub const LOKI: &str = env!("CARGO_BIN_EXE_loki");

/// A temp config dir, a fake provider, and a way to run loki against both.
pub struct TestEnv {
    pub dir: tempfile::TempDir,
    pub server: FakeLlm,
}

impl TestEnv {
    /// A config with one client `fake` (OpenAI-compatible) pointing at the fake server.
    pub fn new() -> Self {
        let env = Self::bare();
        env.write_config(&default_config(&env.server.base_url()));
        env
    }

    /// No config file at all.
    pub fn bare() -> Self {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(dir.path().join("config")).expect("config dir");
        std::fs::create_dir_all(dir.path().join("work")).expect("work dir");
        Self {
            dir,
            server: FakeLlm::start(),
        }
    }

    pub fn config_dir(&self) -> PathBuf {
        self.dir.path().join("config")
    }

    /// Working directory the binary runs in.
    pub fn work_dir(&self) -> PathBuf {
        self.dir.path().join("work")
    }

    /// The state file the session alias `name` points at (a path that does not exist if
    /// there is no such alias).
    pub fn session_file(&self, name: &str) -> PathBuf {
        let sessions = self.config_dir().join("sessions");
        match std::fs::read_to_string(sessions.join("by-name").join(name)) {
            Ok(id) => sessions.join("by-id").join(id.trim()).join("state.yaml"),
            Err(_) => sessions.join("by-name").join(format!("{name}.missing")),
        }
    }

    pub fn config_path(&self) -> PathBuf {
        self.config_dir().join("config.yaml")
    }

    pub fn write_config(&self, yaml: &str) {
        std::fs::write(self.config_path(), yaml).expect("write config");
    }

    /// Writes a file relative to the working directory.
    pub fn write(&self, rel: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.work_dir().join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&path, contents).expect("write");
        path
    }

    /// The binary with a scrubbed environment: only PATH, HOME and loki's dirs are set.
    pub fn loki(&self) -> assert_cmd::Command {
        let mut cmd = assert_cmd::Command::new(LOKI);
        self.scrub(cmd.env_clear());
        cmd.current_dir(self.work_dir());
        cmd
    }

    /// The same, as a std command (for spawning and signalling).
    pub fn loki_std(&self) -> std::process::Command {
        let mut cmd = std::process::Command::new(LOKI);
        cmd.env_clear();
        for (k, v) in self.env_pairs() {
            cmd.env(k, v);
        }
        cmd.current_dir(self.work_dir());
        cmd
    }

    fn scrub<'a>(&self, cmd: &'a mut assert_cmd::Command) -> &'a mut assert_cmd::Command {
        for (k, v) in self.env_pairs() {
            cmd.env(k, v);
        }
        cmd
    }

    /// The variables every run gets.
    /// The temporary directory holding home, config, cache and work dirs.
    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// The library's shared state for this environment, as the binary builds it (the
    /// vault never prompts).
    pub fn library_state(&self) -> loki::state::AppState {
        // Confined commands start the loki binary as their wrapper, not this test program.
        loki::sandbox::use_wrapper(env!("CARGO_BIN_EXE_loki").into());
        let env = loki::config::Env::from_pairs(self.env_pairs());
        let paths = loki::config::Paths::resolve(&env);
        let (loaded, vault) =
            loki::vault::load_config(&paths, &env, loki::vault::NoPrompt).expect("config");
        let config = loaded.expect("a config file").config;
        loki::state::AppState::new(
            config,
            paths,
            env,
            "test".into(),
            std::sync::Arc::new(vault),
        )
    }

    pub fn env_pairs(&self) -> Vec<(String, String)> {
        let root = self.dir.path();
        vec![
            ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
            ("HOME".into(), root.join("home").display().to_string()),
            (
                "LOKI_CONFIG_DIR".into(),
                self.config_dir().display().to_string(),
            ),
            (
                "XDG_CACHE_HOME".into(),
                root.join("cache").display().to_string(),
            ),
            // Keep the zero-config probe away from any real local server.
            ("OLLAMA_API_BASE".into(), "http://127.0.0.1:9/v1".into()),
            ("LLAMACPP_API_BASE".into(), "http://127.0.0.1:9/v1".into()),
        ]
    }
}

/// The standard test config.
pub fn default_config(base_url: &str) -> String {
    format!(
        r#"model: fake:gpt-4o-mini
clients:
  - type: openai-compatible
    name: fake
    api_base: {base_url}
    api_key: test-key
    models:
      - name: gpt-4o-mini
        supports_vision: true
        supports_function_calling: true
      - name: text-only
      - name: priced
        input_price: 2
        output_price: 8
    extra:
      max_retries: 2
      retry_base_delay_ms: 10
"#
    )
}

/// The names of the functions a chat request offered (`tools[].function.name`).
pub fn tool_names(body: &serde_json::Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|t| t["function"]["name"].as_str().map(str::to_string))
        .collect()
}

/// stdout of an assert as text.
pub fn stdout(out: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&out.get_output().stdout).into_owned()
}

/// stderr of an assert as text.
pub fn stderr(out: &assert_cmd::assert::Assert) -> String {
    String::from_utf8_lossy(&out.get_output().stderr).into_owned()
}

/// Asserts that no ANSI escape reached a pipe.
pub fn assert_plain(text: &str) {
    assert!(!text.contains('\x1b'), "unexpected ANSI escape in {text:?}");
}

/// Asserts that a file is private to its owner (mode 0600) on Unix.
pub fn assert_private(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{} is not private", path.display());
    }
}

/// Writes a file only its owner can read (0600), as a password file should be.
pub fn write_private(path: &Path, contents: impl AsRef<[u8]>) {
    std::fs::write(path, contents).expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    }
}

/// Every file under `dir` with its size, sorted: to assert that a command wrote nothing.
pub fn tree(dir: &Path) -> Vec<(String, u64)> {
    let mut files: Vec<(String, u64)> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| {
            let rel = e.path().strip_prefix(dir).unwrap().display().to_string();
            (rel, e.metadata().map(|m| m.len()).unwrap_or(0))
        })
        .collect();
    files.sort();
    files
}
