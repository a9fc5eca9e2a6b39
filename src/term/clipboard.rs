//! `.copy`: hands text to the first clipboard tool found on the system (pbcopy,
//! wl-copy, xclip, xsel, clip.exe). No tool is linked in, so loki needs no display
//! libraries to build.

use std::io::Write;
use std::process::{Command, Stdio};

const TOOLS: &[(&str, &[&str])] = &[
    ("pbcopy", &[]),
    ("wl-copy", &[]),
    ("xclip", &["-selection", "clipboard"]),
    ("xsel", &["--clipboard", "--input"]),
    ("clip.exe", &[]),
];

/// No clipboard tool could take the text.
#[derive(Debug, thiserror::Error)]
pub enum NoClipboard {
    /// None is installed.
    #[error("no clipboard is available here: install wl-copy, xclip or xsel (or pbcopy on macOS)")]
    Missing,
    /// The last one that is installed failed (often: no display to reach).
    #[error("the clipboard tool `{tool}` failed: {why}")]
    Failed {
        /// The tool.
        tool: &'static str,
        /// Its exit status and the first line it wrote to stderr.
        why: String,
    },
}

/// Copies `text`; returns the tool used.
pub fn copy(text: &str) -> Result<&'static str, NoClipboard> {
    let mut failure = NoClipboard::Missing;
    for (tool, args) in TOOLS {
        let Ok(mut child) = Command::new(tool)
            .args(*args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
        else {
            continue;
        };
        let written = child
            .stdin
            .take()
            .map(|mut stdin| stdin.write_all(text.as_bytes()).is_ok())
            .unwrap_or(false);
        let why = match child.wait_with_output() {
            Ok(out) if written && out.status.success() => return Ok(tool),
            Ok(out) => {
                let said = String::from_utf8_lossy(&out.stderr);
                let first = said.lines().map(str::trim).find(|l| !l.is_empty());
                match first {
                    Some(line) => format!("{} ({line})", out.status),
                    None => out.status.to_string(),
                }
            }
            Err(e) => e.to_string(),
        };
        failure = NoClipboard::Failed { tool, why };
    }
    Err(failure)
}
