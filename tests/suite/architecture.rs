//! The module graph points one way. Every `crate::<module>` reference in `src/` (outside
//! comments and `#[cfg(test)]` code) is an arrow between top-level modules; an arrow must
//! go from a higher layer to a lower one, as the table below says. The few upward arrows
//! that remain are listed as debt, each must still exist (so the list only shrinks), and
//! no new one may appear.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Layers, lowest first. A module may use modules of lower layers only.
const LAYERS: &[&[&str]] = &[
    &[
        "atomic_file",
        "claude_names",
        "files",
        "jsonrpc",
        "origin",
        "process_group",
        "prompt_tags",
        "sandbox",
        "shell_syntax",
        "shell_words",
        "signals",
        "tokens",
    ],
    &["config"],
    &["client"],
    &["usage"],
    &["vault"],
    &[
        "agents_md",
        "input",
        "lsp",
        "mcp",
        "output_schema",
        "rag",
        "role",
        "skill",
    ],
    &["session", "memory", "checkpoint", "hooks"],
    &["tool"],
    &["agent"],
    &["error"],
    &["state"],
    &["conversation"],
    &["render"],
    &["term", "dotcmd", "logging", "mention"],
    &["macros"],
    &["cli", "repl", "server", "mcp_serve", "acp", "claude_sdk"],
    &["app", "fuzzing"],
];

/// Upward arrows still to remove, with where the first one is and what it is.
const DEBT: &[(&str, &str, &str)] = &[];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules of `src/` and the arrows between them, each with one place it
/// comes from.
fn graph() -> BTreeMap<(String, String), String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        // `test_support` is compiled for unit tests only.
        if name == "lib" || name == "main" || name == "test_support" {
            continue;
        }
        let mut files = Vec::new();
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else {
            files.push(path);
        }
        modules.entry(name).or_insert_with(Vec::new).extend(files);
    }
    let mut arrows = BTreeMap::new();
    for (module, files) in &modules {
        for file in files {
            let text = std::fs::read_to_string(file).unwrap();
            for (number, line) in text.lines().enumerate() {
                let code = line.trim_start();
                if code.starts_with("#[cfg(test)]") {
                    break;
                }
                if code.starts_with("//") {
                    continue;
                }
                for (i, _) in line.match_indices("crate::") {
                    let target: String = line[i + "crate::".len()..]
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if &target != module && modules.contains_key(&target) {
                        arrows
                            .entry((module.clone(), target))
                            .or_insert_with(|| format!("{}:{}", file.display(), number + 1));
                    }
                }
            }
        }
    }
    arrows
}

fn layer(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|layer| layer.contains(&module))
        .unwrap_or_else(|| panic!("module `{module}` is in no layer: add it to LAYERS"))
}

#[test]
fn module_arrows_point_down_except_the_listed_debt() {
    let arrows = graph();
    assert!(arrows.len() > 50, "too few arrows found: {arrows:?}");
    let debt: BTreeSet<(&str, &str)> = DEBT.iter().map(|(a, b, _)| (*a, *b)).collect();
    let mut wrong = Vec::new();
    for ((from, to), place) in &arrows {
        if layer(to) >= layer(from) && !debt.contains(&(from.as_str(), to.as_str())) {
            wrong.push(format!("{from} -> {to} ({place})"));
        }
    }
    assert!(
        wrong.is_empty(),
        "arrows that point up or sideways:\n{}",
        wrong.join("\n")
    );
    let paid: Vec<String> = DEBT
        .iter()
        .filter(|(a, b, _)| !arrows.contains_key(&(a.to_string(), b.to_string())))
        .map(|(a, b, _)| format!("{a} -> {b}"))
        .collect();
    assert!(
        paid.is_empty(),
        "these arrows are gone: remove them from DEBT: {paid:?}"
    );
}

#[test]
fn front_ends_never_touch_the_session_store() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for front_end in ["cli", "repl", "app", "macros.rs", "dotcmd.rs", "term"] {
        let path = src.join(front_end);
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else {
            files.push(path);
        }
    }
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("#[cfg(test)]") {
                break;
            }
            if code.starts_with("//") {
                continue;
            }
            for forbidden in [
                "session::lock",
                "SessionLock",
                "session::tracker",
                "SessionStore",
                ".sessions.",
                "session_sync",
            ] {
                if code.contains(forbidden) {
                    found.push(format!("{}:{}: {forbidden}", file.display(), number + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn no_function_of_the_one_shot_front_end_is_over_60_lines() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cli/oneshot.rs");
    let (measured, long) = long_functions(&path, 60);
    assert!(measured >= 8, "only {measured} functions found");
    assert!(long.is_empty(), "{long:?}");
}

/// The core reads in short functions: none over 120 lines in `conversation/` (its engine
/// included), `session/` or `rag/`.
#[test]
fn no_function_of_the_core_is_over_120_lines() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for dir in ["conversation", "session", "rag"] {
        rust_files(&src.join(dir), &mut files);
    }
    let mut measured = 0;
    let mut long = Vec::new();
    for file in &files {
        let (n, found) = long_functions(file, 120);
        measured += n;
        long.extend(
            found
                .into_iter()
                .map(|f| format!("{}: {f}", file.display())),
        );
    }
    assert!(measured >= 300, "only {measured} functions found");
    assert!(long.is_empty(), "{long:#?}");
}

/// How many functions `path` has, and those over `limit` lines.
fn long_functions(path: &Path, limit: usize) -> (usize, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut long = Vec::new();
    let mut measured = 0;
    for (start, line) in lines.iter().enumerate() {
        let code = line.trim_start();
        let indent = line.len() - code.len();
        let is_fn = [
            "fn ",
            "pub fn ",
            "pub(super) fn ",
            "pub(crate) fn ",
            "async fn ",
        ]
        .iter()
        .chain(
            [
                "pub async fn ",
                "pub(super) async fn ",
                "pub(crate) async fn ",
            ]
            .iter(),
        )
        .any(|p| code.starts_with(p));
        if !is_fn || code.trim_end().ends_with(';') {
            continue;
        }
        let end = lines[start..]
            .iter()
            .position(|l| l.trim_end() == format!("{}}}", " ".repeat(indent)))
            .map(|n| start + n);
        let Some(end) = end else {
            continue;
        };
        measured += 1;
        if end - start + 1 > limit {
            long.push(format!("{} ({} lines)", code, end - start + 1));
        }
    }
    (measured, long)
}

/// Terminal capabilities (which streams are terminals, `NO_COLOR`) are captured once at
/// start-up (`config::TerminalCaps`) and passed down; nothing else asks the process.
#[test]
fn the_terminal_is_asked_about_in_one_place() {
    // Each file allowed to ask, and why.
    const ALLOWED: &[(&str, &str)] = &[
        ("config/terminal.rs", "the capture itself"),
        ("app/mod.rs", "NO_COLOR again after the .env file is loaded"),
        ("signals.rs", "restoring the terminal from a signal handler"),
        ("term/sign_in.rs", "whether a browser prompt can be shown"),
        ("term/vault_prompt.rs", "a secret value typed or piped"),
    ];
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let relative = file
            .strip_prefix(&src)
            .unwrap()
            .to_string_lossy()
            .into_owned();
        if ALLOWED.iter().any(|(path, _)| *path == relative) {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("#[cfg(test)]") {
                break;
            }
            if code.starts_with("//") {
                continue;
            }
            if code.contains("is_terminal(") || code.contains("\"NO_COLOR\"") {
                found.push(format!("{relative}:{}: {code}", number + 1));
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

/// A conversation is closed: drivers (the front ends, the server, `--mcp-server`, macros)
/// ask for everything through its ops and end it with `close`. The compiler keeps most
/// of this — the conversation's context and engine are private to `conversation`, and a
/// public function that exposed them would not pass clippy (`private_interfaces`) — so
/// this test lists only what visibility cannot say: building a sub-conversation by hand
/// instead of `child`, and ending a session's tracker other than by `close`.
#[test]
fn drivers_only_submit_ops_to_a_conversation() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    for driver in [
        "cli",
        "repl",
        "app",
        "server",
        "mcp_serve",
        "acp",
        "claude_sdk",
        "macros.rs",
        "dotcmd.rs",
        "term",
    ] {
        let path = src.join(driver);
        if path.is_dir() {
            rust_files(&path, &mut files);
        } else {
            files.push(path);
        }
    }
    let forbidden = [
        // Building a sub-conversation by hand instead of `child`.
        "RoutedApprover",
        "RoutedAsker",
        // Ending one other than by `close`.
        ".finish(true",
        ".finish(false",
    ];
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (number, line) in text.lines().enumerate() {
            let code = line.trim_start();
            if code.starts_with("#[cfg(test)]") {
                break;
            }
            if code.starts_with("//") {
                continue;
            }
            for pattern in forbidden {
                if code.contains(pattern) {
                    found.push(format!("{}:{}: {pattern}", file.display(), number + 1));
                }
            }
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}
