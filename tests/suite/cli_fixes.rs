//! First run, the CLI and errors (issue 14, items 12–16).

use crate::common::{TestEnv, stdout};

/// Every long flag `loki --help` prints.
fn help_flags(env: &TestEnv) -> Vec<String> {
    let out = env.loki().arg("--help").assert().success();
    let mut flags: Vec<String> = stdout(&out)
        .split(|c: char| c.is_whitespace() || c == ',' || c == '[' || c == '<' || c == '=')
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| {
            w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
                .to_string()
        })
        .collect();
    flags.sort();
    flags.dedup();
    flags
}

#[test]
fn every_cli_flag_and_config_key_is_documented() {
    let env = TestEnv::new();
    let root = env!("CARGO_MANIFEST_DIR");
    let usage = std::fs::read_to_string(format!("{root}/docs/usage.md")).unwrap();
    let config = std::fs::read_to_string(format!("{root}/docs/configuration.md")).unwrap();
    let flags = help_flags(&env);
    assert!(flags.len() > 20, "{flags:?}");
    let undocumented: Vec<_> = flags
        .iter()
        .filter(|f| !usage.contains(&format!("`{f}")) && !usage.contains(&format!(", {f}")))
        .collect();
    assert!(
        undocumented.is_empty(),
        "flags missing from docs/usage.md: {undocumented:?}"
    );

    let (_, not_yet) = config
        .split_once("### Accepted now")
        .expect("section of keys nothing acts on");
    let not_yet = not_yet.split("\n## ").next().unwrap_or_default();
    let mut missing = Vec::new();
    for (key, _) in loki::config::keys::KEYS {
        let cell = format!("`{key}`");
        if !config.contains(&cell) {
            missing.push(*key);
        }
        // Keys that work must not be listed as "nothing acts on them yet".
        let works = !matches!(*key, "agent_session" | "vault_password_file" | "serve_addr");
        assert!(
            !(works && not_yet.contains(&cell)),
            "`{key}` works but docs/configuration.md says nothing acts on it"
        );
    }
    assert!(
        missing.is_empty(),
        "keys missing from docs/configuration.md: {missing:?}"
    );
}
