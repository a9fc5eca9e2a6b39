//! Every variable of the reference's environment-variable table
//! (`04-environment-variables.md`), checked against the real binary: each one is set and
//! its effect observed (in `--info`, in the request the fake provider recorded, or in the
//! files a run leaves). Variables of features loki does not have yet are listed as pending,
//! so the list stays complete.

use std::path::Path;

use crate::common::fake_llm::openai;
use crate::common::{TestEnv, default_config, stdout};

/// How a variable of the table is covered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    /// Checked by [`check`].
    Checked,
    /// The feature it configures does not exist yet.
    Pending(&'static str),
}

use Status::{Checked, Pending};

/// The reference table, section by section, in its order. `{client}` rows are checked with
/// the test client `fake`; `<AGENT_NAME>` rows with an agent called `sql`.
const REFERENCE_TABLE: &[(&str, Status)] = &[
    // Global configuration.
    ("LOKI_MODEL", Checked),
    ("LOKI_TEMPERATURE", Checked),
    ("LOKI_TOP_P", Checked),
    ("LOKI_STREAM", Checked),
    ("LOKI_SAVE", Checked),
    ("LOKI_EDITOR", Checked),
    ("LOKI_WRAP", Checked),
    ("LOKI_WRAP_CODE", Checked),
    ("LOKI_SAVE_SESSION", Checked),
    ("LOKI_COMPRESSION_THRESHOLD", Checked),
    ("LOKI_FUNCTION_CALLING_SUPPORT", Checked),
    ("LOKI_ENABLED_TOOLS", Checked),
    ("LOKI_MCP_SERVER_SUPPORT", Checked),
    ("LOKI_ENABLED_MCP_SERVERS", Checked),
    ("LOKI_RAG_EMBEDDING_MODEL", Checked),
    ("LOKI_RAG_RERANKER_MODEL", Checked),
    ("LOKI_RAG_TOP_K", Checked),
    ("LOKI_RAG_CHUNK_SIZE", Checked),
    ("LOKI_RAG_CHUNK_OVERLAP", Checked),
    ("LOKI_HIGHLIGHT", Checked),
    ("LOKI_THEME", Checked),
    // The value is read (shown in --info); nothing listens on it before the server exists.
    ("LOKI_SERVE_ADDR", Checked),
    ("LOKI_USER_AGENT", Checked),
    ("LOKI_SAVE_SHELL_HISTORY", Checked),
    ("LOKI_SYNC_MODELS_URL", Checked),
    // Clients.
    ("{client}_API_KEY", Checked),
    ("LOKI_PLATFORM", Checked),
    ("LOKI_PATCH_{client}_CHAT_COMPLETIONS", Checked),
    ("LOKI_SHELL", Checked),
    // Files and directories.
    ("LOKI_CONFIG_DIR", Checked),
    ("LOKI_ENV_FILE", Checked),
    ("LOKI_CONFIG_FILE", Checked),
    ("LOKI_ROLES_DIR", Checked),
    ("LOKI_SESSIONS_DIR", Checked),
    ("LOKI_RAGS_DIR", Checked),
    ("LOKI_FUNCTIONS_DIR", Checked),
    // Agents.
    ("<AGENT_NAME>_CONFIG_FILE", Pending("agents")),
    ("<AGENT_NAME>_MODEL", Pending("agents")),
    ("<AGENT_NAME>_TEMPERATURE", Pending("agents")),
    ("<AGENT_NAME>_TOP_P", Pending("agents")),
    ("<AGENT_NAME>_GLOBAL_TOOLS", Pending("agents")),
    ("<AGENT_NAME>_MCP_SERVERS", Pending("agents")),
    ("<AGENT_NAME>_AGENT_SESSION", Pending("agents")),
    ("<AGENT_NAME>_INSTRUCTIONS", Pending("agents")),
    ("<AGENT_NAME>_VARIABLES", Pending("agents")),
    // Logging.
    ("LOKI_LOG_LEVEL", Checked),
    ("LOKI_LOG_FILE", Checked),
    // Miscellaneous.
    (
        "AUTO_CONFIRM",
        Pending("bash tool helpers (guard_* prompts)"),
    ),
    ("LLM_TOOL_DATA_FILE", Pending("Windows tool-call data file")),
];

/// Variables the issue and FEATURES.md name beyond the table.
const ALSO_CHECKED: &[&str] = &[
    "LOKI_PROVIDER",
    "LOKI_LOG_PATH",
    "LOKI_MACROS_DIR",
    "LOKI_MESSAGES_FILE",
    "LOKI_LIGHT_THEME",
    "XDG_CONFIG_HOME",
    "NO_COLOR",
    "COLORFGBG",
    ".env",
];

/// The `--info` value of `key` with extra variables set.
fn info(env: &TestEnv, vars: &[(&str, &str)], key: &str) -> String {
    let mut cmd = env.loki();
    cmd.arg("--info");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.assert().success();
    let text = stdout(&out);
    text.lines()
        .find_map(|line| {
            let (name, value) = line.split_once(' ')?;
            (name == key).then(|| value.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no `{key}` in --info: {text}"))
}

/// Runs a one-shot prompt with `vars`; returns the JSON body of the request it sent.
fn request(env: &TestEnv, vars: &[(&str, &str)]) -> crate::common::fake_llm::Recorded {
    let stream = !vars.contains(&("LOKI_STREAM", "false"));
    env.server.push(if stream {
        openai::text_stream(&["ok"])
    } else {
        openai::text_json("ok")
    });
    let before = env.server.requests().len();
    let mut cmd = env.loki();
    cmd.arg("hello");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.assert().success();
    let requests = env.server.requests();
    assert_eq!(requests.len(), before + 1, "one request");
    requests[before].clone()
}

fn info_shows(var: &str, value: &str, key: &str, shown: &str) {
    let env = TestEnv::new();
    assert_eq!(info(&env, &[(var, value)], key), shown, "{var}={value}");
}

fn write(path: &Path, text: &str) {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(path, text).unwrap();
}

/// Sets `name` and asserts its effect; panics with the reason when it has none.
fn check(name: &str) {
    match name {
        "LOKI_MODEL" => {
            let env = TestEnv::new();
            assert_eq!(
                info(&env, &[(name, "fake:text-only")], "model"),
                "fake:text-only"
            );
            let body = request(&env, &[(name, "fake:text-only")]).json();
            assert_eq!(body["model"], "text-only");
        }
        "LOKI_TEMPERATURE" | "LOKI_TOP_P" => {
            let env = TestEnv::new();
            let body = request(&env, &[(name, "0.25")]).json();
            let field = name.trim_start_matches("LOKI_").to_ascii_lowercase();
            assert_eq!(body[field.as_str()], 0.25, "{body}");
        }
        "LOKI_STREAM" => {
            let env = TestEnv::new();
            let body = request(&env, &[(name, "false")]).json();
            assert_ne!(body["stream"], true, "{body}");
            assert_eq!(request(&env, &[]).json()["stream"], true);
        }
        "LOKI_SAVE" => {
            let env = TestEnv::new();
            let log = env.root().join("cache/loki/messages.md");
            request(&env, &[]);
            assert!(!log.exists());
            request(&env, &[(name, "true")]);
            assert!(std::fs::read_to_string(&log).unwrap().contains("hello"));
        }
        "LOKI_EDITOR" => info_shows(name, "my-editor", "editor", "my-editor"),
        "LOKI_WRAP" => info_shows(name, "42", "wrap", "42"),
        "LOKI_WRAP_CODE" => info_shows(name, "true", "wrap_code", "true"),
        "LOKI_SAVE_SESSION" => info_shows(name, "false", "save_session", "false"),
        "LOKI_COMPRESSION_THRESHOLD" => info_shows(name, "1234", "compression_threshold", "1234"),
        "LOKI_FUNCTION_CALLING_SUPPORT" => {
            info_shows(name, "false", "function_calling_support", "false")
        }
        "LOKI_ENABLED_TOOLS" => info_shows(name, "web_search", "enabled_tools", "web_search"),
        "LOKI_MCP_SERVER_SUPPORT" => info_shows(name, "false", "mcp_server_support", "false"),
        "LOKI_ENABLED_MCP_SERVERS" => info_shows(name, "github", "enabled_mcp_servers", "github"),
        "LOKI_RAG_EMBEDDING_MODEL" => {
            info_shows(name, "fake:emb", "rag_embedding_model", "fake:emb")
        }
        "LOKI_RAG_RERANKER_MODEL" => info_shows(name, "fake:rr", "rag_reranker_model", "fake:rr"),
        "LOKI_RAG_TOP_K" => info_shows(name, "9", "rag_top_k", "9"),
        "LOKI_RAG_CHUNK_SIZE" => info_shows(name, "900", "rag_chunk_size", "900"),
        "LOKI_RAG_CHUNK_OVERLAP" => info_shows(name, "90", "rag_chunk_overlap", "90"),
        "LOKI_HIGHLIGHT" => info_shows(name, "false", "highlight", "false"),
        "LOKI_THEME" => info_shows(name, "light", "theme", "light"),
        "LOKI_LIGHT_THEME" => info_shows(name, "true", "theme", "light"),
        "COLORFGBG" => info_shows(name, "0;15", "theme", "light"),
        "LOKI_SERVE_ADDR" => info_shows(name, "127.0.0.1:9999", "serve_addr", "127.0.0.1:9999"),
        "LOKI_USER_AGENT" => {
            let env = TestEnv::new();
            let req = request(&env, &[(name, "env-agent/1.0")]);
            assert_eq!(req.header("user-agent"), Some("env-agent/1.0"));
        }
        "LOKI_SAVE_SHELL_HISTORY" => info_shows(name, "false", "save_shell_history", "false"),
        "LOKI_SYNC_MODELS_URL" => info_shows(
            name,
            "http://127.0.0.1:9/m.yaml",
            "sync_models_url",
            "http://127.0.0.1:9/m.yaml",
        ),
        "{client}_API_KEY" => {
            let env = TestEnv::new();
            env.write_config(
                &default_config(&env.server.base_url()).replace("    api_key: test-key\n", ""),
            );
            let req = request(&env, &[("FAKE_API_KEY", "sk-from-env")]);
            assert_eq!(req.header("authorization"), Some("Bearer sk-from-env"));
        }
        "LOKI_PLATFORM" | "LOKI_PROVIDER" => {
            let env = TestEnv::bare();
            let base = env.server.base_url();
            let vars = [
                (name, "openai:gpt-env"),
                ("OPENAI_API_KEY", "sk-platform"),
                ("OPENAI_API_BASE", base.as_str()),
            ];
            let req = request(&env, &vars);
            assert_eq!(req.json()["model"], "gpt-env");
            assert_eq!(req.header("authorization"), Some("Bearer sk-platform"));
            // Ignored when a configuration file exists.
            let env = TestEnv::new();
            assert_eq!(info(&env, &[(name, "bogus")], "model"), "fake:gpt-4o-mini");
        }
        "LOKI_PATCH_{client}_CHAT_COMPLETIONS" => {
            let env = TestEnv::new();
            let patch = r#"{".*": {"body": {"seed": 7}}}"#;
            let body = request(&env, &[("LOKI_PATCH_FAKE_CHAT_COMPLETIONS", patch)]).json();
            assert_eq!(body["seed"], 7, "{body}");
        }
        "LOKI_SHELL" => {
            // The shell named in the `-e` prompt.
            let env = TestEnv::new();
            env.server.push(openai::text_stream(&["ls"]));
            env.loki()
                .args(["-e", "list files"])
                .env("LOKI_SHELL", "/opt/bin/envshell")
                .assert()
                .success();
            let req = env.server.requests().pop().unwrap();
            assert!(
                String::from_utf8_lossy(&req.body).contains("envshell"),
                "{}",
                String::from_utf8_lossy(&req.body)
            );
        }
        "LOKI_CONFIG_DIR" => {
            let env = TestEnv::new();
            let other = env.root().join("other-config");
            write(
                &other.join("config.yaml"),
                &default_config(&env.server.base_url())
                    .replace("model: fake:gpt-4o-mini", "model: fake:priced"),
            );
            let dir = other.display().to_string();
            assert_eq!(info(&env, &[(name, &dir)], "model"), "fake:priced");
            assert_eq!(info(&env, &[(name, &dir)], "config_dir"), dir);
        }
        "XDG_CONFIG_HOME" => {
            let env = TestEnv::new();
            let xdg = env.root().join("xdg");
            let mut cmd = env.loki();
            cmd.arg("--info")
                .env_remove("LOKI_CONFIG_DIR")
                .env(name, &xdg);
            let text = stdout(&cmd.assert().success());
            let expected = xdg.join("loki").display().to_string();
            assert!(
                text.lines()
                    .any(|l| l.starts_with("config_dir") && l.ends_with(&expected)),
                "{text}"
            );
        }
        "LOKI_ENV_FILE" => {
            let env = TestEnv::new();
            let file = env.root().join("elsewhere.env");
            write(&file, "LOKI_TEMPERATURE=0.42\n");
            let path = file.display().to_string();
            assert_eq!(info(&env, &[(name, &path)], "temperature"), "0.42");
            assert_eq!(info(&env, &[(name, &path)], "env_file"), path);
        }
        ".env" => {
            // `.env` in the config dir is read; the process environment wins over it; it
            // may move the other directories.
            let env = TestEnv::new();
            let roles = env.root().join("dotenv-roles").display().to_string();
            write(
                &env.config_dir().join(".env"),
                &format!("LOKI_TEMPERATURE=0.11\nLOKI_TOP_P=0.5\nLOKI_ROLES_DIR={roles}\n"),
            );
            assert_eq!(info(&env, &[], "temperature"), "0.11");
            assert_eq!(
                info(&env, &[("LOKI_TEMPERATURE", "0.22")], "temperature"),
                "0.22"
            );
            assert_eq!(info(&env, &[], "roles_dir"), roles);
        }
        "LOKI_CONFIG_FILE" => {
            let env = TestEnv::new();
            let file = env.root().join("alt.yaml");
            write(
                &file,
                &default_config(&env.server.base_url())
                    .replace("model: fake:gpt-4o-mini", "model: fake:text-only"),
            );
            let path = file.display().to_string();
            assert_eq!(info(&env, &[(name, &path)], "model"), "fake:text-only");
            assert_eq!(info(&env, &[(name, &path)], "config_file"), path);
        }
        "LOKI_ROLES_DIR" => {
            let env = TestEnv::new();
            let dir = env.root().join("my-roles");
            write(&dir.join("envrole.md"), "You answer tersely.\n");
            let out = env
                .loki()
                .arg("--list-roles")
                .env(name, &dir)
                .assert()
                .success();
            assert!(stdout(&out).contains("envrole"), "{}", stdout(&out));
        }
        "LOKI_SESSIONS_DIR" => {
            let env = TestEnv::new();
            let dir = env.root().join("my-sessions");
            env.server.push(openai::text_stream(&["ok"]));
            env.loki()
                .args(["-s", "envsess", "hello"])
                .env(name, &dir)
                .assert()
                .success();
            assert!(
                crate::common::tree(&dir)
                    .iter()
                    .any(|(p, _)| p.contains("envsess")),
                "{:?}",
                crate::common::tree(&dir)
            );
            assert!(
                !env.config_dir()
                    .join("sessions")
                    .join("by-name")
                    .join("envsess")
                    .exists()
            );
        }
        "LOKI_RAGS_DIR" | "LOKI_FUNCTIONS_DIR" | "LOKI_MACROS_DIR" => {
            let env = TestEnv::new();
            let dir = env.root().join("moved").display().to_string();
            let key = name.trim_start_matches("LOKI_").to_ascii_lowercase();
            assert_eq!(info(&env, &[(name, &dir)], &key), dir);
        }
        "LOKI_MESSAGES_FILE" => {
            let env = TestEnv::new();
            let file = env.root().join("msgs.md");
            let path = file.display().to_string();
            request(&env, &[("LOKI_SAVE", "true"), (name, &path)]);
            assert!(std::fs::read_to_string(&file).unwrap().contains("hello"));
        }
        "LOKI_LOG_LEVEL" => {
            let env = TestEnv::new();
            let log = env.root().join("level.log");
            let path = log.display().to_string();
            request(&env, &[(name, "debug"), ("LOKI_LOG_PATH", &path)]);
            let text = std::fs::read_to_string(&log).unwrap();
            assert!(text.contains("DEBUG"), "{text}");
            std::fs::remove_file(&log).unwrap();
            request(&env, &[(name, "off"), ("LOKI_LOG_PATH", &path)]);
            assert!(!log.exists(), "`off` writes no log");
        }
        "LOKI_LOG_FILE" | "LOKI_LOG_PATH" => {
            let env = TestEnv::new();
            let log = env.root().join("custom.log");
            let path = log.display().to_string();
            assert_eq!(info(&env, &[(name, &path)], "log_path"), path);
            request(&env, &[(name, &path), ("LOKI_LOG_LEVEL", "debug")]);
            assert!(std::fs::read_to_string(&log).unwrap().contains("DEBUG"));
        }
        "NO_COLOR" => {
            let env = TestEnv::new();
            env.server.push(openai::text_stream(&["# Title\n"]));
            let mut pty = crate::common::pty::Pty::spawn(&env, &["hi"], &[("NO_COLOR", "1")]);
            let screen = pty.read_to_end();
            assert!(
                screen.contains("# Title") && !screen.contains('\x1b'),
                "{screen:?}"
            );
        }
        other => panic!("no check for {other}"),
    }
}

#[test]
fn every_variable_of_the_reference_table_works() {
    let mut failed = Vec::new();
    for (name, status) in REFERENCE_TABLE {
        if *status != Checked {
            continue;
        }
        if let Err(panic) = std::panic::catch_unwind(|| check(name)) {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(ToString::to_string))
                .unwrap_or_default();
            failed.push(format!("{name}: {why}"));
        }
    }
    assert!(
        failed.is_empty(),
        "failing variables:\n{}",
        failed.join("\n")
    );
}

#[test]
fn the_variables_named_beyond_the_table_work() {
    for name in ALSO_CHECKED {
        check(name);
    }
}

/// Documented variables no test here sets yet, each with why.
const DOCUMENTED_UNCHECKED: &[(&str, &str)] = &[
    ("LOKI_AGENTS_DIR", "reserved: agents do not exist yet"),
    (
        "LOKI_EMBEDDINGS_RETRY_LIMIT",
        "needs a failing embeddings server; not covered yet",
    ),
    ("LOKI_LOG_FILTER", "log filtering; not covered yet"),
];

/// The `LOKI_*` names in the backticks of `docs/environment-variables.md`.
fn documented_variables() -> Vec<String> {
    let docs = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/environment-variables.md"),
    )
    .unwrap();
    let mut names: Vec<String> = docs
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| {
            quoted.len() > "LOKI_".len()
                && quoted.starts_with("LOKI_")
                && quoted
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

#[test]
fn the_table_matches_the_documentation_and_pending_rows_say_why() {
    use loki::config::keys::{KEYS, env_var_for};
    let documented = documented_variables();
    let key_variables: Vec<String> = KEYS.iter().map(|(key, _)| env_var_for(key)).collect();
    // Every variable the tests check is documented: by name, or as the `LOKI_<KEY>` of a
    // config key.
    let checked = REFERENCE_TABLE
        .iter()
        .filter(|(_, status)| *status == Checked)
        .map(|(name, _)| *name)
        .chain(ALSO_CHECKED.iter().copied())
        .filter(|name| name.starts_with("LOKI_") && !name.contains('{'));
    let undocumented: Vec<&str> = checked
        .filter(|name| !documented.iter().any(|d| d == name))
        .filter(|name| !key_variables.iter().any(|k| k == name))
        .collect();
    assert!(
        undocumented.is_empty(),
        "checked but not in docs/environment-variables.md: {undocumented:?}"
    );
    // Every variable the documentation names is checked here (or is a config key's,
    // checked by `every_typed_config_key_reads_its_loki_variable`).
    let unchecked: Vec<&String> = documented
        .iter()
        .filter(|name| {
            !REFERENCE_TABLE.iter().any(|(n, _)| n == name)
                && !ALSO_CHECKED.contains(&name.as_str())
                && !key_variables.contains(name)
                && !DOCUMENTED_UNCHECKED.iter().any(|(n, _)| n == name)
        })
        .collect();
    assert!(
        unchecked.is_empty(),
        "documented but not checked: {unchecked:?}"
    );
    for (name, status) in REFERENCE_TABLE {
        if let Pending(feature) = status {
            assert!(
                !feature.trim().is_empty(),
                "{name} is pending without a reason"
            );
        }
    }
}

#[test]
fn every_typed_config_key_reads_its_loki_variable() {
    use loki::config::keys::{KEYS, KeyKind, env_var_for};
    let env = TestEnv::new();
    let mut unread = Vec::new();
    for (key, kind) in KEYS {
        let bad = match kind {
            KeyKind::Bool | KeyKind::Float | KeyKind::Int => "not-a-value",
            KeyKind::Json => "{not json",
            KeyKind::Str | KeyKind::Scalar => continue,
        };
        let var = env_var_for(key);
        let out = env.loki().arg("--info").env(&var, bad).assert();
        let err = crate::common::stderr(&out);
        if out.get_output().status.success() || !err.contains(&var) {
            unread.push(var);
        }
    }
    assert!(unread.is_empty(), "not read: {unread:?}");
}
