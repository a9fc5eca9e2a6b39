//! A small language server for loki's tests, spoken to over stdio (synchronous, std and
//! serde_json only).
//!
//! - Diagnostics: on `didOpen`/`didChange` it publishes one per line containing `ERROR`
//!   (an error, `found ERROR`) or `WARN` (a warning, `found WARN`), at the word.
//!   They are held back until loki answered the `workspace/configuration` request the
//!   server sends after `initialized`, so a client that does not answer gets none.
//! - References: every whole-word occurrence of the word at the position, in the files
//!   under the root with the same extension.
//! - `FAKE_LSP_LOG=<file>` (or `--log <file>`): appends `started <pid>` to it at start,
//!   and `exited <pid>` on an `exit` that followed `shutdown`.
//! - `FAKE_LSP_CRASH=1`: writes a line to stderr and exits with status 3 on `didOpen`.
#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::exit
)]

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

fn read_message(input: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if input.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((name, value)) = line.split_once(':')
            && name.eq_ignore_ascii_case("content-length")
        {
            length = value.trim().parse::<usize>().ok();
        }
    }
    let mut body = vec![0; length?];
    input.read_exact(&mut body).ok()?;
    serde_json::from_slice(&body).ok()
}

fn send(message: &Value) {
    let body = message.to_string();
    let mut out = std::io::stdout().lock();
    write!(out, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    out.flush().unwrap();
}

fn uri_to_path(uri: &str) -> PathBuf {
    let rest = uri.strip_prefix("file://").unwrap_or(uri);
    let mut bytes = Vec::new();
    let raw = rest.as_bytes();
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'%'
            && let Some(byte) = rest
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            bytes.push(byte);
            i += 3;
        } else {
            bytes.push(raw[i]);
            i += 1;
        }
    }
    PathBuf::from(String::from_utf8(bytes).unwrap())
}

fn path_to_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~/".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

fn diagnostics(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        for (word, severity) in [("ERROR", 1), ("WARN", 2)] {
            if let Some(at) = line.find(word) {
                let character = line[..at].encode_utf16().count();
                out.push(json!({
                    "range": {
                        "start": {"line": n, "character": character},
                        "end": {"line": n, "character": character + word.len()},
                    },
                    "severity": severity,
                    "source": "fake",
                    "message": format!("found {word}"),
                }));
            }
        }
    }
    out
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The word at (line, UTF-16 character) of `text`.
fn word_at(text: &str, line: usize, character: usize) -> Option<String> {
    let line: Vec<char> = text.lines().nth(line)?.chars().collect();
    let mut units = 0;
    let mut index = line.len();
    for (i, c) in line.iter().enumerate() {
        if units >= character {
            index = i;
            break;
        }
        units += c.len_utf16();
    }
    if !line.get(index).copied().is_some_and(is_word) {
        return None;
    }
    let start = (0..=index).rev().take_while(|i| is_word(line[*i])).last()?;
    let end = (index..line.len())
        .take_while(|i| is_word(line[*i]))
        .last()?
        + 1;
    Some(line[start..end].iter().collect())
}

fn files_with(dir: &Path, extension: &str, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            files_with(&path, extension, out);
        } else if kind.is_file() && path.extension().is_some_and(|e| e == extension) {
            out.push(path);
        }
    }
}

fn references(root: &Path, docs: &HashMap<String, String>, params: &Value) -> Value {
    let uri = params["textDocument"]["uri"].as_str().unwrap_or_default();
    let path = uri_to_path(uri);
    let text = docs
        .get(uri)
        .cloned()
        .or_else(|| std::fs::read_to_string(&path).ok())
        .unwrap_or_default();
    let line = params["position"]["line"].as_u64().unwrap_or(0) as usize;
    let character = params["position"]["character"].as_u64().unwrap_or(0) as usize;
    let Some(word) = word_at(&text, line, character) else {
        return json!([]);
    };
    let extension = path
        .extension()
        .map(|e| e.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut files = Vec::new();
    files_with(root, &extension, &mut files);
    files.sort();
    let mut locations = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        for (n, line) in text.lines().enumerate() {
            for (at, _) in line.match_indices(&word) {
                let before = line[..at].chars().next_back();
                let after = line[at + word.len()..].chars().next();
                if before.is_some_and(is_word) || after.is_some_and(is_word) {
                    continue;
                }
                let character = line[..at].encode_utf16().count();
                locations.push(json!({
                    "uri": path_to_uri(&file),
                    "range": {
                        "start": {"line": n, "character": character},
                        "end": {"line": n, "character": character + word.encode_utf16().count()},
                    },
                }));
            }
        }
    }
    Value::Array(locations)
}

fn log(path: Option<&str>, event: &str) {
    if let Some(path) = path {
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .unwrap();
        writeln!(file, "{event} {}", std::process::id()).unwrap();
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let log_path = args
        .iter()
        .position(|a| a == "--log")
        .and_then(|i| args.get(i + 1).cloned())
        .or_else(|| std::env::var("FAKE_LSP_LOG").ok());
    log(log_path.as_deref(), "started");
    let crash = std::env::var("FAKE_LSP_CRASH").is_ok_and(|v| v == "1");
    let mut input = std::io::stdin().lock();
    let mut root = PathBuf::from(".");
    let mut docs: HashMap<String, String> = HashMap::new();
    let mut configured = false;
    let mut held: Vec<Value> = Vec::new();
    let mut shutting_down = false;
    while let Some(message) = read_message(&mut input) {
        let method = message["method"].as_str().unwrap_or_default();
        let id = message.get("id").cloned();
        let params = &message["params"];
        match method {
            "initialize" => {
                if let Some(uri) = params["rootUri"].as_str() {
                    root = uri_to_path(uri);
                }
                send(&json!({"jsonrpc": "2.0", "id": id, "result": {
                    "capabilities": {"textDocumentSync": 1, "referencesProvider": true},
                    "serverInfo": {"name": "fake_lsp"},
                }}));
            }
            "initialized" => {
                send(&json!({"jsonrpc": "2.0", "id": "progress-1",
                    "method": "window/workDoneProgress/create", "params": {"token": "t"}}));
                send(&json!({"jsonrpc": "2.0", "id": "config-1",
                    "method": "workspace/configuration",
                    "params": {"items": [{"section": "fake"}]}}));
            }
            "textDocument/didOpen" | "textDocument/didChange" => {
                if crash {
                    eprintln!("fake lsp: crashing as asked");
                    std::process::exit(3);
                }
                let document = &params["textDocument"];
                let uri = document["uri"].as_str().unwrap_or_default().to_string();
                let text = if method == "textDocument/didOpen" {
                    document["text"].as_str()
                } else {
                    params["contentChanges"][0]["text"].as_str()
                }
                .unwrap_or_default()
                .to_string();
                let publish = json!({"jsonrpc": "2.0", "method": "textDocument/publishDiagnostics",
                    "params": {"uri": uri, "version": document["version"], "diagnostics": diagnostics(&text)}});
                docs.insert(uri, text);
                if configured {
                    send(&publish);
                } else {
                    held.push(publish);
                }
            }
            "textDocument/references" => {
                let result = references(&root, &docs, params);
                send(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
            }
            "shutdown" => {
                shutting_down = true;
                send(&json!({"jsonrpc": "2.0", "id": id, "result": null}));
            }
            "exit" => {
                if shutting_down {
                    log(log_path.as_deref(), "exited");
                }
                std::process::exit(if shutting_down { 0 } else { 1 })
            }
            "" if id == Some(json!("config-1")) => {
                configured = message["result"].is_array();
                if configured {
                    for publish in held.drain(..) {
                        send(&publish);
                    }
                }
            }
            _ => {
                if let Some(id) = id.filter(|_| !method.is_empty()) {
                    send(&json!({"jsonrpc": "2.0", "id": id,
                        "error": {"code": -32601, "message": "method not found"}}));
                }
            }
        }
    }
}
