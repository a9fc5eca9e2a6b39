//! Shared state for the core's unit tests: an `AppState` over a temporary config directory
//! with one OpenAI-compatible client (never contacted) and two roles.

use std::sync::Arc;

use crate::config::{Env, Paths};
use crate::state::AppState;
use crate::vault::{Access, Keyring, NoPrompt};

const CONFIG: &str = "model: fake:m1
clients:
  - type: openai-compatible
    name: fake
    api_base: http://127.0.0.1:9/v1
    api_key: test-key
    models:
      - name: m1
        supports_function_calling: true
      - name: m2
";

/// A temporary config directory and the state built from it.
pub(crate) struct Fixture {
    pub dir: tempfile::TempDir,
    pub state: Arc<AppState>,
}

impl Fixture {
    /// The state, with `extra` lines appended to the configuration.
    pub fn with_config(extra: &str) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        let env = Env::from_pairs([("LOKI_CONFIG_DIR", dir.path().display().to_string())]);
        let paths = Paths::resolve(&env);
        std::fs::create_dir_all(&paths.roles_dir).expect("roles dir");
        std::fs::write(paths.roles_dir.join("poet.md"), "You answer in verse.").expect("role");
        std::fs::write(
            paths.roles_dir.join("picky.md"),
            "---\nmodel: fake:m2\ntemperature: 0.2\nenabled_tools: fs_cat\n---\nBe picky.",
        )
        .expect("role");
        let text = format!("{CONFIG}{extra}");
        let config = crate::config::load::parse(&text, &paths.config_file, &env)
            .expect("config")
            .config;
        let vault = Arc::new(Keyring::new(Access::new(&paths, None), NoPrompt));
        let state = Arc::new(AppState::new(config, paths, env, "test".into(), vault));
        Self { dir, state }
    }

    /// The state with the base configuration.
    pub fn new() -> Self {
        Self::with_config("")
    }
}

/// A temporary directory holding `files`: see [`write_tree`].
pub(crate) fn tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    write_tree(dir.path(), files);
    dir
}

/// Writes each `(path, contents)` of `files` under `root`, making its parent directories
/// first; a path ending in `/` is made as an empty directory. Tests of what walks a project
/// (listings, globs, completion, surveys) declare the tree they walk in one place.
pub(crate) fn write_tree(root: &std::path::Path, files: &[(&str, &str)]) {
    for (path, contents) in files {
        let full = root.join(path);
        if path.ends_with('/') {
            std::fs::create_dir_all(&full).expect("directory");
            continue;
        }
        if let Some(parent) = full.parent() {
            std::fs::create_dir_all(parent).expect("directory");
        }
        std::fs::write(&full, contents).expect("file");
    }
}
