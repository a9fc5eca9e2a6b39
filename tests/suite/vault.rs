//! The vault: secrets encrypted with age (scrypt passphrase) in `<config>/vault.age`,
//! managed from the command line and the REPL, and used through `{{NAME}}` placeholders.

use std::io::Read;

use age::secrecy::SecretString;
use serde_json::json;

use crate::common::fake_llm::openai;
use crate::common::pty::Pty;
use crate::common::{TestEnv, assert_private, stderr, stdout};

const PASSWORD: &str = "correct horse battery";

/// A test environment whose config names a password file holding [`PASSWORD`].
fn vault_env(extra: &str) -> TestEnv {
    let env = TestEnv::new();
    crate::common::write_private(
        &env.config_dir().join("vault-pass"),
        format!("{PASSWORD}\n"),
    );
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("vault_password_file: vault-pass\n{extra}{cfg}"));
    env
}

fn vault_file(env: &TestEnv) -> std::path::PathBuf {
    env.config_dir().join("vault.age")
}

/// Decrypts the vault with the age crate directly (not through loki), and with an
/// implementation of the age format written from its specification
/// (`tests/common/age_format.rs`); both must agree.
fn decrypt_independently(env: &TestEnv, password: &str) -> serde_yaml::Value {
    let bytes = std::fs::read(vault_file(env)).unwrap();
    let by_spec = crate::common::age_format::decrypt_with_passphrase(&bytes, password)
        .unwrap_or_else(|e| panic!("the vault is not a standard age file: {e}"));
    assert!(
        crate::common::age_format::decrypt_with_passphrase(&bytes, "not the password").is_err()
    );
    let identity = age::scrypt::Identity::new(SecretString::from(password.to_string()));
    let decryptor =
        age::Decryptor::new_buffered(age::armor::ArmoredReader::new(&bytes[..])).unwrap();
    let mut plain = String::new();
    decryptor
        .decrypt(std::iter::once(&identity as &dyn age::Identity))
        .unwrap()
        .read_to_string(&mut plain)
        .unwrap();
    assert_eq!(String::from_utf8(by_spec).unwrap(), plain);
    serde_yaml::from_str(&plain).unwrap()
}

fn add(env: &TestEnv, name: &str, value: &str) {
    env.loki()
        .args(["--add-secret", name])
        .write_stdin(value)
        .assert()
        .success();
}

/// The config with the fake client's key replaced by a placeholder.
fn use_key_placeholder(env: &TestEnv, name: &str) {
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&cfg.replace("api_key: test-key", &format!("api_key: '{{{{{name}}}}}'")));
}

#[test]
fn vault_round_trip_from_a_terminal_to_config_and_mcp_json() {
    let env = TestEnv::new();
    // Added on a terminal: a new vault password typed twice, then the masked value.
    let mut pty = Pty::spawn(&env, &["--add-secret", "API_TOKEN"], &[]);
    pty.expect("New vault password:");
    pty.send(&format!("{PASSWORD}\r"));
    pty.expect("Repeat the vault password:");
    pty.send(&format!("{PASSWORD}\r"));
    pty.expect("Enter the secret value:");
    pty.send("tok-first-value-123\r");
    let out = pty.read_to_end();
    assert!(
        out.contains("Secret 'API_TOKEN' added to the vault."),
        "{out}"
    );
    assert!(
        !out.contains("tok-first-value-123"),
        "the value was echoed: {out}"
    );
    assert_eq!(pty.exit_code(), 0);

    // At rest: an armoured age file, private, readable by any age implementation.
    let path = vault_file(&env);
    assert_private(&path);
    let raw = std::fs::read_to_string(&path).unwrap();
    assert!(
        raw.starts_with("-----BEGIN AGE ENCRYPTED FILE-----"),
        "{raw}"
    );
    assert!(!raw.contains("tok-first-value-123") && !raw.contains("API_TOKEN"));
    assert_eq!(
        decrypt_independently(&env, PASSWORD)["API_TOKEN"].as_str(),
        Some("tok-first-value-123")
    );

    // From now on the password comes from a file.
    crate::common::write_private(&env.config_dir().join("pw"), PASSWORD);
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("vault_password_file: pw\n{cfg}"));
    let out = env.loki().arg("--list-secrets").assert().success();
    assert_eq!(stdout(&out), "API_TOKEN\n");
    let out = env
        .loki()
        .args(["--get-secret", "API_TOKEN"])
        .assert()
        .success();
    assert_eq!(stdout(&out), "tok-first-value-123\n");

    // config.yaml: the key comes from the vault, before the environment.
    use_key_placeholder(&env, "API_TOKEN");
    env.server.push(openai::text_stream(&["hi"]));
    env.loki()
        .env("API_TOKEN", "from-the-environment")
        .arg("hello")
        .assert()
        .success();
    assert_eq!(
        env.server.last_request().header("authorization"),
        Some("Bearer tok-first-value-123")
    );

    // functions/mcp.json: the server's environment gets the vault value; what the tool
    // returns reaches the model redacted.
    let functions = env.config_dir().join("functions");
    std::fs::create_dir_all(&functions).unwrap();
    std::fs::write(
        functions.join("mcp.json"),
        json!({"mcpServers": {"test": {"type": "stdio", "command": super::mcp::server_bin(),
            "env": {"SECRET_TOKEN": "{{API_TOKEN}}"}}}})
        .to_string(),
    )
    .unwrap();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "enabled_mcp_servers: test\nmcp_start_wait: 30\n{cfg}"
    ));
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "test_env_value",
        r#"{"name":"SECRET_TOKEN"}"#,
    )]));
    env.server.push(openai::text_stream(&["set"]));
    env.loki().arg("token?").assert().success();
    assert_eq!(
        super::mcp::tool_result(&env.server.last_request().json()),
        "«secret:API_TOKEN»"
    );

    // Update: the new value is used.
    let out = env
        .loki()
        .args(["--update-secret", "API_TOKEN"])
        .write_stdin("tok-second-value-456\n")
        .assert()
        .success();
    assert!(stderr(&out).contains("Secret 'API_TOKEN' updated in the vault."));
    env.server.push(openai::text_stream(&["hi"]));
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&cfg.replace("enabled_mcp_servers: test\n", ""));
    env.loki().arg("hello").assert().success();
    assert_eq!(
        env.server.last_request().header("authorization"),
        Some("Bearer tok-second-value-456")
    );

    // Delete: gone from the vault, and config.yaml now names what is missing.
    let out = env
        .loki()
        .args(["--delete-secret", "API_TOKEN"])
        .assert()
        .success();
    assert!(stderr(&out).contains("Secret 'API_TOKEN' deleted from the vault."));
    let out = env.loki().arg("--list-secrets").assert().success();
    assert_eq!(stdout(&out), "");
    assert!(stderr(&out).contains("The vault is empty."));
    let before = env.server.request_count();
    let out = env.loki().arg("hello").assert().failure();
    let err = stderr(&out);
    assert!(
        err.contains(
            "references secrets that are in neither the vault nor the environment: API_TOKEN"
        ),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert_eq!(env.server.request_count(), before);
}

#[test]
fn add_get_update_delete_report_bad_names_and_duplicates() {
    let env = vault_env("");
    add(&env, "GITHUB_TOKEN", "ghp_0123456789abcdef");
    let out = env
        .loki()
        .args(["--add-secret", "GITHUB_TOKEN"])
        .write_stdin("other-value-000")
        .assert()
        .failure();
    assert!(stderr(&out).contains("already in the vault; use --update-secret GITHUB_TOKEN"));
    let out = env
        .loki()
        .args(["--add-secret", "bad name"])
        .write_stdin("x")
        .assert()
        .failure();
    assert!(stderr(&out).contains("invalid secret name 'bad name'"));
    for flag in ["--get-secret", "--update-secret", "--delete-secret"] {
        let out = env
            .loki()
            .args([flag, "NOPE"])
            .write_stdin("x")
            .assert()
            .failure();
        assert!(
            stderr(&out).contains("no secret named 'NOPE' in the vault"),
            "{flag}: {}",
            stderr(&out)
        );
    }
    // A short value is stored, with a note that it cannot be redacted.
    let out = env
        .loki()
        .args(["--add-secret", "PIN"])
        .write_stdin("1234")
        .assert()
        .success();
    assert!(stderr(&out).contains("not redacted"), "{}", stderr(&out));
    assert_eq!(
        decrypt_independently(&env, PASSWORD)["GITHUB_TOKEN"].as_str(),
        Some("ghp_0123456789abcdef")
    );
}

/// A vault written by the reference age implementation (work factor 2^10, a payload
/// longer than one 64 KiB chunk) opens in loki, and loki's rewrite opens in age again.
#[test]
fn a_vault_written_by_the_age_reference_implementation_opens_and_round_trips() {
    use std::io::Write as _;
    let env = vault_env("");
    let long = "x".repeat(70_000);
    let plain = format!("TOKEN: value-from-age-0123\nLONG: {long}\n");
    let mut recipient = age::scrypt::Recipient::new(SecretString::from(PASSWORD.to_string()));
    recipient.set_work_factor(10);
    let encryptor = age::Encryptor::with_recipients(std::iter::once(&recipient as _)).unwrap();
    let mut armored = Vec::new();
    let writer =
        age::armor::ArmoredWriter::wrap_output(&mut armored, age::armor::Format::AsciiArmor)
            .unwrap();
    let mut sink = encryptor.wrap_output(writer).unwrap();
    sink.write_all(plain.as_bytes()).unwrap();
    sink.finish()
        .and_then(age::armor::ArmoredWriter::finish)
        .unwrap();
    crate::common::write_private(&vault_file(&env), &armored);

    let out = env
        .loki()
        .args(["--get-secret", "TOKEN"])
        .assert()
        .success();
    assert_eq!(stdout(&out).trim(), "value-from-age-0123");
    let out = env.loki().args(["--get-secret", "LONG"]).assert().success();
    assert_eq!(stdout(&out).trim().len(), long.len());
    add(&env, "OTHER", "value-from-loki-4567");
    let back = decrypt_independently(&env, PASSWORD);
    assert_eq!(back["TOKEN"].as_str(), Some("value-from-age-0123"));
    assert_eq!(back["OTHER"].as_str(), Some("value-from-loki-4567"));
    assert_eq!(back["LONG"].as_str().map(str::len), Some(long.len()));
}

#[test]
fn a_wrong_password_or_a_damaged_vault_is_one_line_and_the_file_is_untouched() {
    let env = vault_env("");
    add(&env, "TOKEN", "value-0123456789");
    use_key_placeholder(&env, "TOKEN");
    let path = vault_file(&env);
    let original = std::fs::read(&path).unwrap();

    crate::common::write_private(&env.config_dir().join("vault-pass"), "not the password\n");
    for args in [
        vec!["--list-secrets"],
        vec!["--add-secret", "OTHER"],
        vec!["--delete-secret", "TOKEN"],
        vec!["hello"],
    ] {
        let out = env.loki().args(&args).write_stdin("v").assert().failure();
        let err = stderr(&out);
        assert!(err.contains("wrong vault password"), "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert_eq!(std::fs::read(&path).unwrap(), original, "{args:?}");
    }

    crate::common::write_private(&env.config_dir().join("vault-pass"), PASSWORD);
    let mut damaged = original;
    let middle = damaged.len() / 2;
    damaged[middle] = if damaged[middle] == b'A' { b'B' } else { b'A' };
    for bytes in [damaged, b"this is not an age file\n".to_vec()] {
        std::fs::write(&path, &bytes).unwrap();
        for args in [vec!["--get-secret", "TOKEN"], vec!["--add-secret", "OTHER"]] {
            let out = env.loki().args(&args).write_stdin("v").assert().failure();
            let err = stderr(&out);
            assert!(
                err.contains("vault.age is damaged or not a loki vault")
                    || err.contains("wrong vault password"),
                "{err}"
            );
            assert_eq!(err.trim().lines().count(), 1, "{err}");
            assert_eq!(std::fs::read(&path).unwrap(), bytes);
        }
    }
    // Plain garbage is always reported as damage.
    let out = env.loki().args(["--list-secrets"]).assert().failure();
    assert!(stderr(&out).contains("is damaged or not a loki vault ("));
}

#[test]
fn password_sources_are_checked() {
    let env = vault_env("");
    add(&env, "TOKEN", "value-0123456789");
    // No password file and no terminal.
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    let without = cfg.replace("vault_password_file: vault-pass\n", "");
    env.write_config(&without);
    let out = env.loki().arg("--list-secrets").assert().failure();
    assert!(
        stderr(&out).contains("the vault needs its password: set `vault_password_file`"),
        "{}",
        stderr(&out)
    );
    // A placeholder in vault_password_file is refused.
    env.write_config(&format!(
        "vault_password_file: '{{{{PASS_FILE}}}}'\n{without}"
    ));
    let out = env
        .loki()
        .env("PASS_FILE", "vault-pass")
        .arg("--list-secrets")
        .assert()
        .failure();
    assert!(
        stderr(&out).contains("`vault_password_file` cannot use a {{…}} placeholder"),
        "{}",
        stderr(&out)
    );
    // A missing or empty password file is named.
    env.write_config(&format!("vault_password_file: nowhere\n{without}"));
    let out = env.loki().arg("--list-secrets").assert().failure();
    assert!(
        stderr(&out).contains("nowhere' does not exist"),
        "{}",
        stderr(&out)
    );
    crate::common::write_private(&env.config_dir().join("empty"), "");
    env.write_config(&format!("vault_password_file: empty\n{without}"));
    let out = env.loki().arg("--list-secrets").assert().failure();
    assert!(stderr(&out).contains("is empty"), "{}", stderr(&out));
    // LOKI_VAULT_PASSWORD_FILE works too.
    let out = env
        .loki()
        .env(
            "LOKI_VAULT_PASSWORD_FILE",
            env.config_dir().join("vault-pass"),
        )
        .arg("--list-secrets")
        .assert()
        .success();
    assert_eq!(stdout(&out), "TOKEN\n");
}

#[test]
fn tool_env_file_placeholders_come_from_the_vault() {
    let env = vault_env("enabled_tools: all\n");
    add(&env, "DB_PASSWORD", "db-pass-0123456789");
    let functions = env.config_dir().join("functions");
    std::fs::create_dir_all(functions.join("tools")).unwrap();
    std::fs::write(functions.join(".env"), "DB_PASSWORD={{DB_PASSWORD}}\n").unwrap();
    std::fs::write(
        functions.join("tools/show.sh"),
        "#!/usr/bin/env bash\n# @describe Show the password.\nmain() { echo \"pw=$DB_PASSWORD\" >> \"$LLM_OUTPUT\"; }\neval \"$(argc --argc-eval \"$0\" \"$@\")\"\n",
    )
    .unwrap();
    env.server
        .push(openai::tool_call_stream(&[("s", "show", "{}")]));
    env.server.push(openai::text_stream(&["ok"]));
    env.loki().args(["--yolo", "show it"]).assert().success();
    let results = super::tools::tool_results(&env.server.last_request().json());
    assert_eq!(results[0].1, "pw=«secret:DB_PASSWORD»\n");
}

#[test]
fn sigterm_or_sighup_while_the_repl_asks_for_a_secret_or_documents_ends_loki() {
    const PROMPT: &str = "fake:gpt-4o-mini)> ";
    for (signal, code) in [("TERM", 143), ("HUP", 129)] {
        let env = vault_env("rag_chunk_size: 500\nrag_chunk_overlap: 50\n");
        let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
        pty.expect(PROMPT);
        pty.send(".vault add WAITING\r");
        pty.expect("Enter the secret value:");
        let pid = pty.session.get_process().pid().as_raw().to_string();
        let sent = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .unwrap();
        assert!(sent.success());
        pty.read_to_end();
        assert_eq!(pty.exit_code(), code, "{signal} at the secret prompt");

        let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
        pty.expect(PROMPT);
        pty.send(".rag fresh\r");
        pty.expect("keyword search only");
        pty.send("\r");
        pty.expect("Add documents:");
        let pid = pty.session.get_process().pid().as_raw().to_string();
        let sent = std::process::Command::new("kill")
            .args([&format!("-{signal}"), &pid])
            .status()
            .unwrap();
        assert!(sent.success());
        pty.read_to_end();
        assert_eq!(pty.exit_code(), code, "{signal} at Add documents");
    }
}

#[test]
fn repl_vault_commands() {
    const PROMPT: &str = "fake:gpt-4o-mini)> ";
    let env = vault_env("");
    add(&env, "FIRST", "first-value-0123");
    let mut pty = Pty::spawn(&env, &[], &[("NO_COLOR", "1")]);
    pty.expect(PROMPT);
    let mut submit = |line: &str, until: &str| {
        pty.send(line);
        pty.send("\r");
        let out = pty.expect(until);
        pty.expect(PROMPT);
        out
    };
    submit(".vault list", "FIRST");
    pty.send(".vault add SECOND\r");
    pty.expect("Enter the secret value:");
    pty.send("second-value-4567\r");
    pty.expect("Secret 'SECOND' added to the vault.");
    pty.expect(PROMPT);
    let mut submit = |line: &str, until: &str| {
        pty.send(line);
        pty.send("\r");
        let out = pty.expect(until);
        pty.expect(PROMPT);
        out
    };
    submit(".vault get SECOND", "second-value-4567");
    submit(
        ".vault delete FIRST",
        "Secret 'FIRST' deleted from the vault.",
    );
    submit(".vault get", "Usage: .vault get <name>");
    submit(
        ".vault frob",
        "Usage: .vault <add|get|update|delete|list> [name]",
    );
    // Tab completes the names of the opened vault.
    pty.send(".vault get SEC\t");
    pty.expect("SECOND");
    pty.send("\r");
    pty.expect("second-value-4567");
    pty.expect(PROMPT);
    pty.send(".exit\r");
    pty.read_to_end();
    let vault = decrypt_independently(&env, PASSWORD);
    assert_eq!(vault["SECOND"].as_str(), Some("second-value-4567"));
    assert!(vault.get("FIRST").is_none());
}

#[test]
fn first_run_setup_keeps_the_api_key_in_a_new_vault() {
    let env = TestEnv::bare();
    env.server.push(openai::text_stream(&["configured!"]));
    let base = env.server.base_url();
    let mut pty = Pty::spawn(&env, &["hi"], &[("OPENAI_API_BASE", &base)]);
    pty.expect("Which provider");
    pty.send("\r"); // openai is first
    pty.expect("API key");
    pty.send("sk-wizard-0123456\r");
    pty.expect("Default model");
    pty.send("\r");
    pty.expect("encrypted vault");
    pty.send("y\r");
    pty.expect("New vault password:");
    pty.send(&format!("{PASSWORD}\r"));
    pty.expect("Repeat the vault password:");
    pty.send(&format!("{PASSWORD}\r"));
    let screen = pty.read_to_end();
    assert!(screen.contains("configured!"), "{screen:?}");
    assert!(screen.contains("Saved the vault password in"), "{screen:?}");
    assert_eq!(pty.exit_code(), 0);
    let config = std::fs::read_to_string(env.config_path()).unwrap();
    assert!(config.contains("api_key: '{{OPENAI_API_KEY}}'"), "{config}");
    assert!(!config.contains("sk-wizard"), "{config}");
    assert_eq!(
        decrypt_independently(&env, PASSWORD)["OPENAI_API_KEY"].as_str(),
        Some("sk-wizard-0123456")
    );
    assert_eq!(
        env.server.last_request().header("authorization"),
        Some("Bearer sk-wizard-0123456")
    );
    // Item 26.6: the password went into a 0600 file that config.yaml names, so a later
    // run in a script neither asks nor fails.
    assert!(
        config.contains("vault_password_file: vault-password"),
        "{config}"
    );
    let file = env.config_dir().join("vault-password");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        format!("{PASSWORD}\n")
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    env.server.push(openai::text_stream(&["scripted"]));
    let out = env
        .loki()
        .env("OPENAI_API_BASE", &base)
        .arg("again")
        .assert()
        .success();
    assert!(crate::common::stdout(&out).contains("scripted"));
    assert_eq!(
        env.server.last_request().header("authorization"),
        Some("Bearer sk-wizard-0123456")
    );
}

/// Issue 26 items 7 and 8: a run that reads no secret never opens the vault. With no
/// password file, `--list-roles` and a question that starts no MCP server needing one
/// are not asked for the password, although mcp.json and config.yaml have placeholders;
/// enabling that server asks once, before the answer.
#[test]
fn the_vault_is_opened_only_when_a_secret_is_read() {
    let env = vault_env("");
    add(&env, "API_TOKEN", "tok-lazy-value-789");
    // From now on nothing says where the password is: only a person can unlock.
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "{}mcp_start_wait: 30\n",
        cfg.replace("vault_password_file: vault-pass\n", "")
    ));
    let functions = env.config_dir().join("functions");
    std::fs::create_dir_all(&functions).unwrap();
    std::fs::write(
        functions.join("mcp.json"),
        json!({"mcpServers": {
            "secretive": {"type": "stdio", "command": super::mcp::server_bin(),
                "env": {"SECRET_TOKEN": "{{API_TOKEN}}"}},
            "plain": {"type": "stdio", "command": super::mcp::server_bin()}
        }})
        .to_string(),
    )
    .unwrap();

    let mut pty = Pty::spawn(&env, &["--list-roles"], &[]);
    let screen = pty.read_to_end();
    assert!(!screen.contains("Vault password"), "{screen:?}");
    assert_eq!(pty.exit_code(), 0, "{screen:?}");

    // A server without placeholders starts without the vault.
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "enabled_mcp_servers: plain
{cfg}"
    ));
    env.server.push(openai::text_stream(&["no secrets needed"]));
    let mut pty = Pty::spawn(&env, &["hi"], &[]);
    let screen = pty.read_to_end();
    assert!(screen.contains("no secrets needed"), "{screen:?}");
    assert!(!screen.contains("Vault password"), "{screen:?}");

    // The server that needs the secret: asked once, before the answer.
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&cfg.replace(
        "enabled_mcp_servers: plain",
        "enabled_mcp_servers: secretive",
    ));
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "secretive_env_value",
        r#"{"name":"SECRET_TOKEN"}"#,
    )]));
    env.server.push(openai::text_stream(&["got it"]));
    let mut pty = Pty::spawn(&env, &["token?"], &[]);
    pty.expect("Vault password:");
    pty.send(&format!("{PASSWORD}\r"));
    let screen = pty.read_to_end();
    assert!(screen.contains("got it"), "{screen:?}");
    assert_eq!(
        super::mcp::tool_result(&env.server.last_request().json()),
        "«secret:API_TOKEN»"
    );
}

/// Issue 27 item 8: a password file other users can read is named with the fix, once,
/// and still works.
#[test]
fn a_password_file_others_can_read_is_warned_about() {
    use std::os::unix::fs::PermissionsExt;
    let env = vault_env("");
    env.loki()
        .args(["--add-secret", "TOKEN"])
        .write_stdin("value-1")
        .assert()
        .success();
    let pass = env.config_dir().join("vault-pass");
    let out = env.loki().arg("--list-secrets").assert().success();
    assert_eq!(stderr(&out), "", "a private file gives no warning");
    std::fs::set_permissions(&pass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = env.loki().arg("--list-secrets").assert().success();
    assert_eq!(stdout(&out), "TOKEN\n");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("can be read by other users (mode 644)")
            && err.contains(&format!("chmod 600 {}", pass.display())),
        "{err}"
    );
    // Every run that reads config.yaml says it, not only the vault commands.
    let out = env.loki().arg("--list-roles").assert().success();
    assert!(
        stderr(&out).contains("can be read by other users"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_empty_value_is_named_as_the_value_not_the_password() {
    let env = vault_env("");
    let out = env
        .loki()
        .args(["--add-secret", "EMPTY"])
        .write_stdin("")
        .assert()
        .failure();
    let err = stderr(&out);
    assert!(err.contains("the value of 'EMPTY' is empty"), "{err}");
    assert!(!err.contains("password"), "{err}");
}

/// Loki's secret injection into agents: a variable whose default is `{{NAME}}` takes the
/// vault secret (else the environment variable); its tools see it as
/// `LLM_AGENT_VAR_<NAME>`; the session never keeps it; a name found nowhere is an error.
#[test]
fn an_agent_variable_defaulting_to_a_secret_takes_it_from_the_vault() {
    let env = vault_env("");
    add(&env, "MY_USERNAME", "ada-from-vault");
    let dir = env.config_dir().join("agents/who");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.yaml"),
        "instructions: You serve {{username}} in {{region}}.\nvariables:\n  - name: username\n    default: '{{MY_USERNAME}}'\n  - name: region\n    default: '{{MY_REGION}}'\n",
    )
    .unwrap();
    env.server.push(openai::text_stream(&["ok"]));
    env.loki()
        .args(["-a", "who", "-s", "work", "hello"])
        .env("MY_REGION", "eu-west")
        .assert()
        .success();
    let body = env.server.last_request().json();
    assert_eq!(
        body["messages"][0]["content"], "You serve ada-from-vault in eu-west.",
        "{body}"
    );
    let saved: String = walkdir::WalkDir::new(dir.join("sessions"))
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(saved.contains("hello"), "the session was saved: {saved}");
    assert!(!saved.contains("ada-from-vault"), "{saved}");
    assert!(!saved.contains("username"), "{saved}");

    // Resumed, the secret is looked up again (the vault's current value).
    env.loki()
        .args(["--update-secret", "MY_USERNAME"])
        .write_stdin("bo-from-vault")
        .assert()
        .success();
    env.server.push(openai::text_stream(&["ok"]));
    env.loki()
        .args(["-a", "who", "-s", "work", "again"])
        .env("MY_REGION", "eu-west")
        .assert()
        .success();
    let body = env.server.last_request().json();
    assert_eq!(
        body["messages"][0]["content"],
        "You serve bo-from-vault in eu-west."
    );

    // A secret found nowhere: one line naming it, nothing sent.
    let sent = env.server.requests().len();
    let out = env
        .loki()
        .args(["-a", "who", "hello"])
        .env_remove("MY_REGION")
        .assert()
        .failure();
    let err = stderr(&out);
    assert!(
        err.contains("variable `region` defaults to the secret(s) MY_REGION")
            && err.contains("--add-secret"),
        "{err}"
    );
    assert_eq!(env.server.requests().len(), sent);
}
