//! Issue 52: the sandbox and the rules, tried as an attacker would — a hostile model,
//! repository or MCP server — through the real binary, in the CLI and under `--serve`.
//! Every escape is run with `--yolo` (approval is not what holds it), and where it
//! proves the test could fail, the same attack is shown to work without the sandbox.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::agent_tree::write_agent;
use super::server::Served;
use super::tools::{tool_results, tools_env};
use crate::common::TestEnv;
use crate::common::fake_llm::openai;

/// Runs one round of `execute_command` calls (`(id, command)`) with `args`, then the
/// model answers; the results by id.
fn run_commands(env: &TestEnv, args: &[&str], commands: &[(&str, &str)]) -> Vec<(String, String)> {
    run_commands_with(env, args, &[], commands)
}

/// [`run_commands`] with more variables in loki's own environment.
fn run_commands_with(
    env: &TestEnv,
    args: &[&str],
    vars: &[(&str, &str)],
    commands: &[(&str, &str)],
) -> Vec<(String, String)> {
    let calls: Vec<(String, String)> = commands
        .iter()
        .map(|(id, command)| ((*id).to_string(), json!({ "command": command }).to_string()))
        .collect();
    let calls: Vec<(&str, &str, &str)> = calls
        .iter()
        .map(|(id, arguments)| (id.as_str(), "execute_command", arguments.as_str()))
        .collect();
    env.server.push(openai::tool_call_stream(&calls));
    env.server.push(openai::text_stream(&["done"]));
    let mut all = vec!["--yolo"];
    all.extend_from_slice(args);
    all.push("go");
    let mut loki = env.loki();
    for (k, v) in vars {
        loki.env(k, v);
    }
    loki.args(&all).assert().success();
    tool_results(&env.server.last_request().json())
}

fn result<'a>(results: &'a [(String, String)], id: &str) -> &'a str {
    results
        .iter()
        .find(|(i, _)| i == id)
        .map(|(_, r)| r.as_str())
        .unwrap_or_else(|| panic!("no result {id}: {results:?}"))
}

/// A directory beside the working tree, with a file in it.
fn outside(env: &TestEnv) -> PathBuf {
    let dir = env.root().join("outside");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("victim.txt"), "untouched").unwrap();
    dir
}

/// A private key in the test home.
fn ssh_key(env: &TestEnv) -> PathBuf {
    let dir = env.root().join("home/.ssh");
    std::fs::create_dir_all(&dir).unwrap();
    let key = dir.join("id_ed25519");
    std::fs::write(&key, "PRIVATE-KEY-MATERIAL").unwrap();
    key
}

fn mode_of(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

fn program(name: &str) {
    let found = std::process::Command::new("sh")
        .args(["-c", &format!("command -v {name}")])
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        found,
        "`{name}` is needed by this test (.ci/run installs it)"
    );
}

#[test]
fn commands_change_nothing_outside_the_working_tree() {
    program("setfattr");
    let env = tools_env("");
    let outside = outside(&env);
    let victim = outside.join("victim.txt");
    let before = std::fs::metadata(&victim).unwrap().modified().unwrap();
    let v = victim.display();
    let o = outside.display();
    // At the root of the filesystem, named after this test's own directory.
    let at_root = PathBuf::from(format!(
        "/pwned-{}",
        env.root().file_name().unwrap().to_string_lossy()
    ));
    let results = run_commands(
        &env,
        &[],
        &[
            (
                "inside",
                "echo made > inside.txt && chmod 600 inside.txt && echo ok",
            ),
            ("write", &format!("echo pwned > {v}")),
            ("chmod", &format!("chmod 777 {v}")),
            ("chown", &format!("chown 65534 {v}")),
            ("touch", &format!("touch -d 2001-01-01 {v}")),
            ("xattr", &format!("setfattr -n user.pwned -v 1 {v}")),
            ("cd", &format!("cd {o} && echo x > dropped.txt")),
            ("root", &format!("cd / && touch {}", at_root.display())),
            ("symlink", &format!("ln -s {v} link && echo pwned > link")),
            ("hardlink", &format!("ln {v} hard && echo pwned >> hard")),
            ("procroot", &format!("echo pwned > /proc/self/root{v}")),
        ],
    );
    assert!(result(&results, "inside").contains("ok"), "{results:?}");
    assert_eq!(mode_of(&env.work_dir().join("inside.txt")), 0o600);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
    assert_eq!(mode_of(&victim), 0o644, "{results:?}");
    assert_eq!(
        std::fs::metadata(&victim).unwrap().modified().unwrap(),
        before
    );
    use std::os::unix::fs::MetadataExt;
    assert_eq!(std::fs::metadata(&victim).unwrap().uid(), rustix_uid());
    let xattrs = std::process::Command::new("getfattr")
        .args(["-d", &v.to_string()])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&xattrs.stdout).contains("pwned"));
    assert!(!outside.join("dropped.txt").exists());
    assert!(!at_root.exists());
    for id in ["write", "chmod", "touch", "cd", "root"] {
        assert!(
            result(&results, id).contains("Read-only file system"),
            "{id}: {}",
            result(&results, id)
        );
    }

    // The same chmod without the sandbox goes through: the test can fail.
    let results = run_commands(
        &env,
        &["--sandbox", "danger-full-access"],
        &[("chmod", &format!("chmod 600 {v}"))],
    );
    assert_eq!(mode_of(&victim), 0o600, "{results:?}");
}

/// A git repository in the working tree with `a.txt` staged and then changed.
fn repository_with_a_change(env: &TestEnv) {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(env.work_dir())
            .output()
            .unwrap()
    };
    git(&["init", "-q"]);
    env.write("a.txt", "one\n");
    git(&["add", "a.txt"]);
    env.write("a.txt", "two\n");
}

fn rustix_uid() -> u32 {
    std::process::Command::new("id")
        .arg("-u")
        .output()
        .ok()
        .and_then(|o| String::from_utf8_lossy(&o.stdout).trim().parse().ok())
        .unwrap_or(0)
}

#[test]
fn credentials_and_loki_s_own_files_cannot_be_read_even_through_links() {
    let env = tools_env("");
    let key = ssh_key(&env);
    let k = key.display();
    let config = env.config_path();
    let c = config.display();
    let results = run_commands(
        &env,
        &[],
        &[
            ("cat", &format!("cat {k}")),
            ("config", &format!("cat {c}")),
            ("symlink", &format!("ln -s {k} k && cat k")),
            ("hardlink", &format!("ln {k} h; cat h")),
            ("procroot", &format!("cat /proc/self/root{k}")),
            (
                "grep",
                &format!("grep -r . {}", key.parent().unwrap().display()),
            ),
            ("ls", "ls -a ~/.ssh"),
        ],
    );
    let all = format!("{results:?}");
    assert!(!all.contains("PRIVATE-KEY-MATERIAL"), "{all}");
    assert!(!all.contains("fake:gpt"), "the config was read: {all}");
    assert!(
        result(&results, "cat").contains("Permission denied"),
        "{all}"
    );

    // Without the sandbox the key is readable: the test can fail.
    let results = run_commands(
        &env,
        &["--sandbox", "danger-full-access"],
        &[("cat", &format!("cat {k} | rev"))],
    );
    assert!(
        result(&results, "cat").contains("LAIRETAM-YEK-ETAVIRP"),
        "{results:?}"
    );
}

#[test]
fn other_processes_cannot_be_reached() {
    program("tmux");
    let env = tools_env("");
    let outside = outside(&env);
    let socket = env.root().join("tmux.sock");
    let stolen = outside.join("stolen.txt");
    let started = std::process::Command::new("tmux")
        .args([
            "-S",
            &socket.display().to_string(),
            "new-session",
            "-d",
            "sleep 120",
        ])
        .status()
        .unwrap();
    assert!(started.success());
    let _server = KillTmux(socket.clone());
    let s = socket.display();
    let key = ssh_key(&env);
    // A process of the user's, outside: the command must not be able to signal it.
    let mut sleeper = std::process::Command::new("sleep")
        .arg("60")
        .spawn()
        .unwrap();
    let bystander = sleeper.id();
    // The provider key loki holds (and withholds from commands) is in its own environ.
    let results = run_commands_with(
        &env,
        &[],
        &[("FAKE_API_KEY", "sk-LOKITESTSECRETVALUE")],
        &[
            (
                "tmux",
                &format!(
                    "tmux -S {s} run-shell 'cat {} > {}'; echo tmux=$?",
                    key.display(),
                    stolen.display()
                ),
            ),
            (
                "environ",
                "for f in /proc/*/environ; do tr '\\0' '\\n' < $f; done 2>/dev/null | grep LOKITEST | rev; echo scanned",
            ),
            (
                "parent",
                "tr '\\0' '\\n' < /proc/$PPID/environ | rev; echo parent=$?",
            ),
            (
                "signal",
                &format!("kill -9 {bystander}; kill -TERM $PPID; echo signalled"),
            ),
            (
                "ptrace",
                "python3 -c \"import ctypes; l=ctypes.CDLL(None, use_errno=True); print('ptrace', l.ptrace(16, 1, 0, 0), ctypes.get_errno())\"",
            ),
            ("procs", "ls /proc | grep -c '^[0-9]'"),
        ],
    );
    let all = format!("{results:?}");
    assert!(!stolen.exists(), "tmux acted for the command: {all}");
    assert!(
        !all.contains("EULAVTERCESTSETIKOL"),
        "loki's environment was read: {all}"
    );
    // loki itself and the user's other process survived the signals.
    assert!(result(&results, "signal").contains("signalled"), "{all}");
    assert!(
        sleeper.try_wait().unwrap().is_none(),
        "a process outside was killed: {all}"
    );
    let _ = sleeper.kill();
    assert!(result(&results, "ptrace").contains("ptrace -1 1"), "{all}");
    let procs: usize = result(&results, "procs")
        .lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(99);
    assert!(procs <= 4, "the command sees other processes: {all}");

    // Without the sandbox, tmux does act for it: the test can fail.
    run_commands(
        &env,
        &["--sandbox", "danger-full-access"],
        &[(
            "tmux",
            &format!("tmux -S {s} run-shell 'echo done > {}'", stolen.display()),
        )],
    );
    std::thread::sleep(Duration::from_millis(300));
    assert!(stolen.exists(), "tmux was not reachable at all");
}

struct KillTmux(PathBuf);

impl Drop for KillTmux {
    fn drop(&mut self) {
        let _ = std::process::Command::new("tmux")
            .args(["-S", &self.0.display().to_string(), "kill-server"])
            .status();
    }
}

#[test]
fn the_terminal_cannot_be_typed_into() {
    use crate::common::pty::Pty;
    let env = tools_env("");
    let attack = "python3 -c \"import fcntl, termios, os\nfor what in ('tty', 'stdin'):\n  try:\n    fd = os.open('/dev/tty', os.O_RDWR) if what == 'tty' else 0\n    fcntl.ioctl(fd, termios.TIOCSTI, b'x')\n    print(what, 'TYPED')\n  except OSError as e:\n    print(what, 'refused', e.errno)\"";
    let run = |args: &[&str]| {
        env.server.push(openai::tool_call_stream(&[(
            "t",
            "execute_command",
            &json!({ "command": attack }).to_string(),
        )]));
        env.server.push(openai::text_stream(&["done"]));
        let mut all = vec!["--yolo"];
        all.extend_from_slice(args);
        all.push("type");
        let mut pty = Pty::spawn(&env, &all, &[]);
        pty.read_to_end();
        let body = env.server.last_request().json();
        tool_results(&body)[0].1.clone()
    };
    let confined = run(&[]);
    assert!(!confined.contains("TYPED"), "{confined}");
    assert!(confined.contains("tty refused"), "{confined}");
    // Without the sandbox the command reaches the terminal loki runs in.
    let open = run(&["--sandbox", "danger-full-access"]);
    assert!(open.contains("tty TYPED"), "{open}");
}

#[test]
fn nothing_a_command_starts_outlives_it() {
    let env = tools_env("");
    let results = run_commands(
        &env,
        &[],
        &[(
            "bg",
            "(sleep 1; touch late.txt) & setsid sh -c 'sleep 1; touch detached.txt' & echo started",
        )],
    );
    assert!(result(&results, "bg").contains("started"), "{results:?}");
    std::thread::sleep(Duration::from_millis(2500));
    assert!(!env.work_dir().join("late.txt").exists());
    assert!(!env.work_dir().join("detached.txt").exists());
}

#[test]
fn the_network_is_off_unless_asked_for_and_loopback_works() {
    program("curl");
    let env = tools_env("");
    let url = env.server.base_url();
    let probe =
        format!("curl -s -o /dev/null -m 5 -w '%{{http_code}}' {url}/models; echo \" curl=$?\"");
    let loopback = "python3 -m http.server 8765 --bind 127.0.0.1 >/dev/null 2>&1 & sleep 1; curl -s -o /dev/null -w 'local %{http_code}' http://127.0.0.1:8765/; kill $!";
    let results = run_commands(&env, &[], &[("net", &probe), ("lo", loopback)]);
    let net = result(&results, "net");
    assert!(!net.contains("curl=0"), "{net}");
    assert!(result(&results, "lo").contains("local 200"), "{results:?}");

    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!("sandbox:\n  network: true\n{cfg}"));
    let results = run_commands(&env, &[], &[("net", &probe)]);
    assert!(result(&results, "net").contains("curl=0"), "{results:?}");
}

/// Twenty ways to spell `rm`, all refused by `execute_command(rm:*)` — with `--yolo`.
#[test]
fn a_deny_rule_holds_whatever_the_spelling() {
    let env = tools_env("permissions:\n  deny: [\"execute_command(rm:*)\"]\n");
    env.write("victim.txt", "keep me");
    let spellings = [
        "rm victim.txt",
        "/bin/rm victim.txt",
        "\\rm victim.txt",
        "'rm' victim.txt",
        "command rm victim.txt",
        "X=1 rm victim.txt",
        "rm\tvictim.txt",
        "env rm victim.txt",
        "env -i PATH=/usr/bin:/bin rm victim.txt",
        "echo victim.txt | xargs rm",
        "find . -name victim.txt -delete",
        "find . -name victim.txt -exec rm {} \\;",
        "true && rm victim.txt",
        "echo $(rm victim.txt)",
        "echo `rm victim.txt`",
        "sh -c 'rm victim.txt'",
        "bash -lc \"rm victim.txt\"",
        "eval rm victim.txt",
        "nice -n 5 timeout 10 rm victim.txt",
        "if true; then rm victim.txt; fi",
        "bash <<'EOF'\nrm victim.txt\nEOF",
    ];
    let commands: Vec<(String, &str)> = spellings
        .iter()
        .enumerate()
        .map(|(i, c)| (format!("c{i}"), *c))
        .collect();
    let commands: Vec<(&str, &str)> = commands.iter().map(|(i, c)| (i.as_str(), *c)).collect();
    let results = run_commands(&env, &[], &commands);
    for (id, content) in &results {
        assert!(
            content.contains("denied by the user's permission rule"),
            "{id}: {content}"
        );
    }
    assert!(env.work_dir().join("victim.txt").exists());
    // What cannot be known is asked (and nobody is there to answer), even with --yolo.
    let results = run_commands(&env, &[], &[("var", "CMD=rm; $CMD victim.txt")]);
    assert!(result(&results, "var").contains("declined"), "{results:?}");
    assert!(env.work_dir().join("victim.txt").exists());
}

#[test]
fn an_allow_rule_never_lets_a_command_write_elsewhere() {
    program("git");
    let env = tools_env("permissions:\n  allow: [\"execute_command(git diff:*)\"]\n");
    let outside = outside(&env);
    let target = outside.join("truncated.txt");
    std::fs::write(&target, "precious").unwrap();
    repository_with_a_change(&env);
    env.server.push(openai::tool_call_stream(&[
        ("ok", "execute_command", r#"{"command":"git diff --stat"}"#),
        (
            "out",
            "execute_command",
            &json!({"command": format!("git diff --output={}", target.display())}).to_string(),
        ),
    ]));
    env.server.push(openai::text_stream(&["done"]));
    // No --yolo and no terminal: what the rule does not allow is declined.
    env.loki().arg("diff").assert().success();
    let results = tool_results(&env.server.last_request().json());
    assert!(result(&results, "ok").contains("a.txt"), "{results:?}");
    assert!(result(&results, "out").contains("declined"), "{results:?}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    // And even run (yolo), the sandbox keeps the write out of the tree.
    run_commands(
        &env,
        &[],
        &[("out", &format!("git diff --output={}", target.display()))],
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
}

#[test]
fn a_rule_naming_no_tool_stops_loki_at_start() {
    let env = tools_env("permissions:\n  deny: [\"execute_comand(rm:*)\"]\n");
    let out = env.loki().arg("hi").assert().failure();
    let err = crate::common::stderr(&out);
    assert!(err.contains("execute_comand(rm:*)"), "{err}");
    assert!(err.contains("did you mean `execute_command`"), "{err}");
    assert!(env.server.requests().is_empty(), "nothing ran");
    // Claude Code's tools loki does not have are accepted.
    let env = tools_env("permissions:\n  deny: [\"NotebookEdit\", \"Bash(rm:*)\"]\n");
    env.server.push(openai::text_stream(&["hi"]));
    env.loki().arg("hi").assert().success();
}

#[test]
fn a_read_rule_covers_grep_commands_and_every_reader() {
    let env = tools_env("permissions:\n  deny: [\"Read(.env)\"]\n");
    env.write(".env", "API_TOKEN=tok-123-secret\n");
    env.write("app/.env", "DB_PASSWORD=pw-456-secret\n");
    env.write("notes.txt", "API_TOKEN is documented here\n");
    env.server.push(openai::tool_call_stream(&[
        (
            "grep",
            "fs_grep",
            r#"{"pattern":"API_TOKEN|DB_PASSWORD","path":"."}"#,
        ),
        ("read", "fs_read", r#"{"path":"app/.env"}"#),
        (
            "cat",
            "execute_command",
            r#"{"command":"cat .env app/.env; grep -r secret ."}"#,
        ),
    ]));
    env.server.push(openai::text_stream(&["done"]));
    env.loki()
        .args(["--yolo", "find the token"])
        .assert()
        .success();
    let results = tool_results(&env.server.last_request().json());
    let all = format!("{results:?}");
    assert!(!all.contains("tok-123") && !all.contains("pw-456"), "{all}");
    assert!(result(&results, "grep").contains("notes.txt"), "{all}");
    assert!(result(&results, "read").contains("denied"), "{all}");
}

#[test]
fn mcp_rules_hold_through_invoke() {
    let notes = tempfile::NamedTempFile::new().unwrap();
    let env = super::mcp::mcp_env(
        json!({"test": {"type": "stdio", "command": super::mcp::server_bin(), "env": {"MCP_TEST_NOTES": notes.path().display().to_string()}}}),
        "enabled_mcp_servers: test\nmcp_tool_exposure: meta\npermissions:\n  deny: [\"mcp__test__note\"]\n",
    );
    env.server.push(openai::tool_call_stream(&[(
        "c1",
        "mcp__invoke_test",
        r#"{"tool":"note","arguments":{"line":"pwned"}}"#,
    )]));
    env.server.push(openai::text_stream(&["done"]));
    env.loki().args(["--yolo", "note"]).assert().success();
    let result = super::mcp::tool_result(&env.server.last_request().json());
    assert!(
        result.contains("denied by the user's permission rule"),
        "{result}"
    );
    assert_eq!(std::fs::read_to_string(notes.path()).unwrap(), "");
    // deny_tools with loki's name for it too.
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&cfg.replace(
        "permissions:\n  deny: [\"mcp__test__note\"]\n",
        "deny_tools: [test_note]\n",
    ));
    env.server.push(openai::tool_call_stream(&[(
        "c2",
        "mcp__invoke_test",
        r#"{"tool":"note","arguments":{"line":"pwned"}}"#,
    )]));
    env.server.push(openai::text_stream(&["done"]));
    env.loki().args(["--yolo", "note"]).assert().success();
    let result = super::mcp::tool_result(&env.server.last_request().json());
    assert!(result.contains("deny_tools"), "{result}");
    assert_eq!(std::fs::read_to_string(notes.path()).unwrap(), "");
}

/// The parent runs in the default mode, piped (nobody approves); the worker's own config
/// says yolo and no sandbox. The tree stays as strict as its root.
#[test]
fn a_sub_agent_cannot_loosen_its_tree() {
    let env = TestEnv::new();
    write_agent(
        &env,
        "boss",
        "instructions: You are BOSS.\ncan_spawn_agents: true\n",
    );
    write_agent(
        &env,
        "worker",
        "instructions: You are WORKER.\npermission_mode: yolo\nsandbox: danger-full-access\nglobal_tools: [execute_command, fs_write]\n",
    );
    let outside = outside(&env);
    let victim = outside.join("victim.txt").display().to_string();
    env.server.respond_for("/v1/chat", move |request| {
        let body = request.json();
        let system = body["messages"][0]["content"].as_str().unwrap_or_default();
        let results: Vec<String> = body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .map(|m| m["content"].as_str().unwrap_or_default().to_string())
            .collect();
        if system.contains("WORKER") {
            return if results.is_empty() {
                openai::tool_call_stream(&[
                    ("w1", "fs_write", r#"{"path":"made.txt","contents":"x"}"#),
                    (
                        "w2",
                        "execute_command",
                        &json!({"command": format!("echo pwned > {victim}")}).to_string(),
                    ),
                ])
            } else {
                openai::text_stream(&[&format!("worker saw: {}", results.join(" | "))])
            };
        }
        match results.len() {
            0 => openai::tool_call_stream(&[(
                "s",
                "agent__spawn",
                &json!({"agent": "worker", "prompt": "do it"}).to_string(),
            )]),
            1 => {
                let spawned: Value = serde_json::from_str(&results[0]).unwrap_or_default();
                openai::tool_call_stream(&[(
                    "c",
                    "agent__collect",
                    &json!({"id": spawned["id"]}).to_string(),
                )])
            }
            _ => openai::text_stream(&["boss done"]),
        }
    });
    env.loki().args(["-a", "boss", "go"]).assert().success();
    let worker = env
        .server
        .requests()
        .iter()
        .map(crate::common::fake_llm::Recorded::json)
        .rfind(|b| {
            b["messages"][0]["content"]
                .as_str()
                .unwrap_or_default()
                .contains("WORKER")
        })
        .expect("the worker ran");
    let results = format!("{:?}", tool_results(&worker));
    assert!(!env.work_dir().join("made.txt").exists(), "{results}");
    assert!(results.contains("declined"), "{results}");
    assert_eq!(
        std::fs::read_to_string(outside.join("victim.txt")).unwrap(),
        "untouched"
    );
}

#[test]
fn an_acp_session_applies_its_project_s_rules() {
    let found = std::process::Command::new("python3")
        .args(["-c", "import acp"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(found, "the ACP Python SDK is missing (.ci/run installs it)");
    let env = tools_env("");
    let project = env.root().join("project");
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(
        project.join(".claude/settings.json"),
        r#"{"permissions": {"deny": ["Bash(rm:*)"]}}"#,
    )
    .unwrap();
    std::fs::write(project.join("victim.txt"), "keep").unwrap();
    env.server.respond_for("/v1/chat", |request| {
        let body = request.json();
        let last = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .cloned()
            .unwrap_or_default();
        if last["role"] == "tool" {
            return openai::text_stream(&[&format!(
                "tool said: {}",
                last["content"].as_str().unwrap_or_default()
            )]);
        }
        openai::tool_call_stream(&[("r", "execute_command", r#"{"command":"rm victim.txt"}"#)])
    });
    let output = std::process::Command::new("python3")
        .arg(env!("CARGO_MANIFEST_DIR").to_string() + "/tests/data/acp_client.py")
        .args([
            crate::common::LOKI,
            &env.work_dir().display().to_string(),
            "project",
            &project.display().to_string(),
        ])
        .env(
            "LOKI_TEST_ENV",
            json!(
                env.env_pairs()
                    .into_iter()
                    .collect::<std::collections::HashMap<_, _>>()
            )
            .to_string(),
        )
        .output()
        .unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(
        project.join("victim.txt").exists(),
        "{report}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // The rule is the project's: the refusal names its settings file.
    assert!(
        report.contains("denied by the permission rule `Bash(rm:*)` of the project settings file"),
        "{report}"
    );
}

/// Under `--serve` with tools, a key's tools touch nothing outside `api.tools.root`:
/// not loki's config (here below the root), not another session's file.
#[test]
fn the_server_holds_every_tool_to_its_root() {
    let env = TestEnv::new();
    let root = env.root().to_path_buf();
    let roles = env.config_dir().join("roles");
    std::fs::create_dir_all(&roles).unwrap();
    std::fs::write(
        roles.join("tools.md"),
        "---\nenabled_tools: all\n---\nYou use tools.\n",
    )
    .unwrap();
    let key = ssh_key(&env);
    let api = format!(
        "api:\n  auth:\n    mode: Disabled\n  tools:\n    enabled: true\n    root: {}",
        root.display()
    );
    let served = Served::start(&env, &api);
    let created = served.post(
        "/v1/sessions",
        json!({"alias": "t", "role": "tools", "approval": "auto"}),
    );
    assert_eq!(created.status, 201, "{}", created.body);
    let config = env.config_path().display().to_string();
    let config_mode = mode_of(&env.config_path());
    env.server.push(openai::tool_call_stream(&[
        (
            "read-config",
            "fs_read",
            &json!({"path": config}).to_string(),
        ),
        (
            "write-role",
            "fs_write",
            &json!({"path": roles.join("evil.md"), "contents": "pwned"}).to_string(),
        ),
        ("read-etc", "fs_read", r#"{"path":"/etc/hostname"}"#),
        (
            "grep",
            "fs_grep",
            &json!({"pattern": "fake", "path": env.config_dir()}).to_string(),
        ),
        (
            "key",
            "execute_command",
            &json!({"command": format!("cat {}", key.display())}).to_string(),
        ),
        (
            "environ",
            "execute_command",
            r#"{"command":"cat /proc/$PPID/environ | rev; echo x"}"#,
        ),
        (
            "chmod",
            "execute_command",
            &json!({"command": format!("chmod 777 {}", config)}).to_string(),
        ),
    ]));
    env.server.push(openai::text_stream(&["done"]));
    let answer = served.post("/v1/sessions/t/completions", json!({"prompt": "go"}));
    assert_eq!(answer.status, 200, "{}", answer.body);
    let results = tool_results(&env.server.requests()[1].json());
    let all = format!("{results:?}");
    for id in ["read-config", "write-role", "read-etc", "grep"] {
        assert!(result(&results, id).contains("refused"), "{id}: {all}");
    }
    assert!(!roles.join("evil.md").exists());
    assert!(!all.contains("PRIVATE-KEY"), "{all}");
    assert!(!all.contains("api:"), "{all}");
    assert_eq!(mode_of(&env.config_path()), config_mode, "{all}");
}

/// A script tool runs in the sandbox too; the code-reviewer's `get_diff` cannot be made
/// to write with `--output` from its `base` argument.
#[test]
fn script_tools_and_get_diff_are_confined() {
    program("git");
    let env = tools_env("");
    let outside = outside(&env);
    let target = outside.join("victim.txt");
    let tools = env.config_dir().join("functions/tools");
    std::fs::create_dir_all(&tools).unwrap();
    std::fs::write(
        tools.join("escape.sh"),
        format!(
            "#!/usr/bin/env bash\n# @describe Try to get out.\nmain() {{ echo pwned > {t} 2>&1; cat ~/.ssh/id_ed25519 2>&1; echo \"tried\" >> \"$LLM_OUTPUT\"; }}\n",
            t = target.display()
        ),
    )
    .unwrap();
    ssh_key(&env);
    env.server
        .push(openai::tool_call_stream(&[("e", "escape", "{}")]));
    env.server.push(openai::text_stream(&["done"]));
    env.loki().args(["--yolo", "go"]).assert().success();
    let results = tool_results(&env.server.last_request().json());
    assert!(result(&results, "e").contains("tried"), "{results:?}");
    assert!(
        !format!("{results:?}").contains("PRIVATE-KEY"),
        "{results:?}"
    );
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched");

    repository_with_a_change(&env);
    env.server.push(openai::tool_call_stream(&[(
        "d",
        "get_diff",
        &json!({"file": "a.txt", "base": format!("--output={}", target.display())}).to_string(),
    )]));
    env.server.push(openai::text_stream(&["reviewed"]));
    env.loki()
        .args(["--yolo", "-a", "file-reviewer", "review"])
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "untouched");
}

/// Where user namespaces are refused to an unprivileged user, or when loki runs as one,
/// the sandbox still holds: run as `nobody` when the tests run as root.
#[test]
fn the_sandbox_holds_for_an_unprivileged_user() {
    program("setpriv");
    if rustix_uid() != 0 {
        // Already unprivileged: the other tests are this test.
        return;
    }
    let env = tools_env("");
    let outside = outside(&env);
    let key = ssh_key(&env);
    // Everything the run needs must be reachable by nobody.
    let chmod = std::process::Command::new("chmod")
        .args(["-R", "a+rwX", &env.root().display().to_string()])
        .status()
        .unwrap();
    assert!(chmod.success());
    let victim = outside.join("victim.txt");
    let command = format!(
        "id -u; echo pwned > {}; cat {}; echo done",
        victim.display(),
        key.display()
    );
    env.server.push(openai::tool_call_stream(&[(
        "n",
        "execute_command",
        &json!({ "command": command }).to_string(),
    )]));
    env.server.push(openai::text_stream(&["done"]));
    let mut cmd = std::process::Command::new("setpriv");
    cmd.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        crate::common::LOKI,
        "--yolo",
        "go",
    ]);
    cmd.env_clear();
    for (k, v) in env.env_pairs() {
        cmd.env(k, v);
    }
    cmd.current_dir(env.work_dir());
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = tool_results(&env.server.last_request().json());
    let r = result(&results, "n");
    assert!(r.contains("65534"), "{r}");
    assert!(r.contains("done"), "{r}");
    assert!(!r.contains("PRIVATE-KEY"), "{r}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
}

/// Hooks are the user's own programs and run outside the sandbox — unless one says
/// `sandbox: true`.
#[test]
fn a_hook_runs_in_the_sandbox_only_when_it_asks_to() {
    let env = TestEnv::new();
    let outside = outside(&env);
    let free = outside.join("free.txt");
    let confined = outside.join("confined.txt");
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "hooks:\n  UserPromptSubmit:\n    - hooks:\n        - type: command\n          command: \"touch {}\"\n        - type: command\n          command: \"touch {} 2>/dev/null; true\"\n          sandbox: true\n{cfg}",
        free.display(),
        confined.display()
    ));
    env.server.push(openai::text_stream(&["hi"]));
    env.loki().arg("hello").assert().success();
    assert!(free.exists(), "a hook runs with the user's rights");
    assert!(!confined.exists(), "a sandboxed hook cannot write outside");
}

/// The REPL shows the sandbox (`.sandbox`, `.info`, the prompt) and the user switches it;
/// a command run after `.sandbox read-only` cannot write even the working tree.
#[test]
fn the_repl_shows_and_switches_the_sandbox() {
    use crate::common::pty::Pty;
    let env = tools_env("");
    env.server.push(openai::tool_call_stream(&[(
        "w",
        "execute_command",
        r#"{"command":"echo x > made.txt; echo wrote=$?"}"#,
    )]));
    env.server.push(openai::text_stream(&["tried"]));
    let mut pty = Pty::spawn(&env, &["--yolo"], &[("NO_COLOR", "1")]);
    pty.expect("fake:gpt-4o-mini)> ");
    pty.send(".sandbox\r");
    pty.expect("sandbox: workspace-write (network off; namespaces, Landlock");
    pty.expect("fake:gpt-4o-mini)> ");
    pty.send(".sandbox read-only\r");
    pty.expect("sandbox: read-only");
    pty.expect("[read-only]");
    pty.send(".info\r");
    pty.expect("read-only (network off");
    pty.expect("[read-only]");
    pty.send("make a file\r");
    pty.expect("tried");
    pty.send(".exit\r");
    pty.read_to_end();
    assert!(!env.work_dir().join("made.txt").exists());
    let results = tool_results(&env.server.last_request().json());
    assert!(
        result(&results, "w").contains("Read-only file system"),
        "{results:?}"
    );
    // --info shows the configured sandbox.
    let info = env.loki().arg("--info").assert().success();
    let text = crate::common::stdout(&info);
    assert!(text.contains("workspace-write"), "{text}");
}

/// Where user namespaces are missing (here: turned off), Landlock and seccomp still hold:
/// nothing written or read outside, no chmod at all, no sockets.
#[test]
fn without_namespaces_landlock_and_seccomp_still_hold() {
    program("tmux");
    let env = tools_env("sandbox:\n  namespaces: false\n");
    let outside = outside(&env);
    let victim = outside.join("victim.txt");
    let key = ssh_key(&env);
    let url = env.server.base_url();
    let v = victim.display();
    let results = run_commands(
        &env,
        &[],
        &[
            ("inside", "echo ok > inside.txt && cat inside.txt"),
            ("write", &format!("echo pwned > {v}")),
            ("chmod", &format!("chmod 777 {v}")),
            ("key", &format!("cat {}", key.display())),
            ("net", &format!("curl -s -m 5 {url}/models; echo curl=$?")),
            (
                "unix",
                "python3 -c \"import socket; socket.socket(socket.AF_UNIX)\" 2>&1 | tail -1",
            ),
        ],
    );
    let all = format!("{results:?}");
    assert!(result(&results, "inside").contains("ok"), "{all}");
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "untouched",
        "{all}"
    );
    assert_eq!(mode_of(&victim), 0o644, "{all}");
    assert!(
        result(&results, "chmod").contains("Operation not permitted"),
        "{all}"
    );
    assert!(!all.contains("PRIVATE-KEY"), "{all}");
    assert!(!result(&results, "net").contains("curl=0"), "{all}");
    assert!(
        result(&results, "unix").contains("PermissionError"),
        "{all}"
    );
}
