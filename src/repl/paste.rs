//! Ctrl-V and `.paste`: the image on the system clipboard (a screenshot, most often)
//! goes with the next prompt as an image part, as `-f shot.png` would send it. The
//! clipboard is read with the platform's own tool — `wl-paste` (Wayland), `xclip` (X11),
//! `pngpaste` or `osascript` (macOS) — whichever is installed, so loki links no display
//! libraries (as `.copy` does, [`crate::term::clipboard`]).

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::tool::image::ImageInfo;

/// What is read of the clipboard at most: an image over this would be refused by the
/// providers anyway (the `fs_read` limit).
const MAX_BYTES: u64 = 20 * 1024 * 1024;

/// How long a clipboard tool may take (one waiting on a clipboard owner that never
/// answers is stopped).
const TIMEOUT: Duration = Duration::from_secs(5);

/// How `osascript` is asked for the clipboard as PNG; it prints `«data PNGf89504E47…»`.
const OSASCRIPT_PNG: &str = "get the clipboard as «class PNGf»";

/// The tools tried, in order, with their arguments for "the clipboard as PNG on stdout".
const TOOLS: &[(&str, &[&str])] = &[
    ("wl-paste", &["--no-newline", "--type", "image/png"]),
    (
        "xclip",
        &["-selection", "clipboard", "-t", "image/png", "-o"],
    ),
    ("pngpaste", &["-"]),
    ("osascript", &["-e", OSASCRIPT_PNG]),
];

/// Why nothing was pasted.
#[derive(Debug, thiserror::Error)]
pub(super) enum PasteError {
    /// None of the tools is installed.
    #[error(
        "no clipboard tool to read images with: install wl-clipboard (Wayland) or xclip (X11), or pngpaste on macOS"
    )]
    NoTool,
    /// A tool ran, but the clipboard holds no image.
    #[error("the clipboard holds no image (copy one, e.g. take a screenshot to the clipboard)")]
    NoImage,
}

/// An image read from the clipboard.
pub(super) struct Pasted {
    /// As a `data:` URL, ready to be an image part.
    pub url: String,
    /// Its size in bytes.
    pub bytes: usize,
    /// What its header says.
    pub info: ImageInfo,
}

/// Reads the clipboard's image with the first tool that gives one.
pub(super) fn clipboard_image() -> Result<Pasted, PasteError> {
    let mut any_tool = false;
    for (tool, args) in TOOLS {
        let Some(out) = run(tool, args) else {
            continue;
        };
        any_tool = true;
        let bytes = if *tool == "osascript" {
            from_applescript(&out)
        } else {
            out
        };
        if let Some(info) = ImageInfo::of(&bytes) {
            return Ok(Pasted {
                url: crate::input::data_url(info.mime, &bytes),
                bytes: bytes.len(),
                info,
            });
        }
    }
    Err(if any_tool {
        PasteError::NoImage
    } else {
        PasteError::NoTool
    })
}

impl super::Repl {
    /// Ctrl-V, `.paste`: the clipboard's image waits for the next prompt; one line says
    /// so, or why there is none.
    pub(super) async fn paste_image(&mut self) {
        let read = tokio::task::spawn_blocking(clipboard_image).await;
        match read {
            Ok(Ok(pasted)) => {
                self.pasted.push(pasted.url);
                let more = match self.pasted.len() {
                    1 => String::new(),
                    n => format!(", {n} images in all"),
                };
                self.note(&format!(
                    "[image attached: {} bytes, {} {}×{}{more}; it goes with your next message]",
                    pasted.bytes, pasted.info.format, pasted.info.width, pasted.info.height
                ));
            }
            Ok(Err(e)) => self.note(&format!("[nothing pasted: {e}]")),
            Err(e) => self.note(&format!("[nothing pasted: {e}]")),
        }
    }
}

/// What `tool` printed, when it exists (`Some`, empty when it failed or timed out).
fn run(tool: &str, args: &[&str]) -> Option<Vec<u8>> {
    let mut child = Command::new(tool)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = stdout.take(MAX_BYTES + 1).read_to_end(&mut bytes);
        bytes
    });
    let deadline = Instant::now() + TIMEOUT;
    let succeeded = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.success(),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break false;
            }
        }
    };
    let bytes = reader.join().unwrap_or_default();
    Some(if succeeded && bytes.len() as u64 <= MAX_BYTES {
        bytes
    } else {
        Vec::new()
    })
}

/// The bytes in AppleScript's `«data PNGf89504E47…»`; empty when it is not that.
fn from_applescript(out: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(out);
    let Some(hex) = text
        .trim()
        .strip_prefix("«data PNGf")
        .and_then(|rest| rest.strip_suffix('»'))
    else {
        return Vec::new();
    };
    let digits = hex.as_bytes();
    let nibble = |c: u8| (c as char).to_digit(16);
    digits
        .chunks(2)
        .map(|pair| match pair {
            [hi, lo] => Some((nibble(*hi)? * 16 + nibble(*lo)?) as u8),
            _ => None,
        })
        .collect::<Option<Vec<u8>>>()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applescript_hex_is_decoded() {
        assert_eq!(
            from_applescript("«data PNGf89504E47»\n".as_bytes()),
            b"\x89PNG"
        );
        assert!(from_applescript(b"missing value").is_empty());
        assert!(from_applescript("«data PNGf8»".as_bytes()).is_empty());
    }
}
