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

/// None of the clipboard tools is installed (or each failed).
#[derive(Debug, thiserror::Error)]
#[error("no clipboard is available here: install wl-copy, xclip or xsel (or pbcopy on macOS)")]
pub struct NoClipboard;

/// Copies `text`; returns the tool used.
pub fn copy(text: &str) -> Result<&'static str, NoClipboard> {
    for (tool, args) in TOOLS {
        let Ok(mut child) = Command::new(tool)
            .args(*args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        else {
            continue;
        };
        let written = child
            .stdin
            .take()
            .map(|mut stdin| stdin.write_all(text.as_bytes()).is_ok())
            .unwrap_or(false);
        if written && child.wait().map(|s| s.success()).unwrap_or(false) {
            return Ok(tool);
        }
    }
    Err(NoClipboard)
}
