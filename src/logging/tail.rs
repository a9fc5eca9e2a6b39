//! `--tail-logs`: print the end of the log file, then follow it like `tail -f`.
//!
//! The last lines already in the file are shown first, then each line as it is appended.
//! A file that is truncated is read again from its start; one that is replaced (rotated,
//! deleted and recreated) is reopened; one that does not exist yet is waited for.
//! Levels are coloured on a terminal unless colours are off. Control characters in log
//! lines (a log quotes model and tool output) are shown escaped on a terminal.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::Duration;

/// Lines of the existing file shown before following.
const BACKLOG_LINES: usize = 10;
/// Bytes read from the end of the file to find those lines.
const BACKLOG_BYTES: u64 = 64 * 1024;
/// Pause between looks at the file when nothing was appended.
const POLL: Duration = Duration::from_millis(200);

/// How lines are written.
#[derive(Debug, Clone, Copy)]
pub struct TailOptions {
    /// Colour the level of each line.
    pub colors: bool,
    /// Escape control characters (the output is a terminal).
    pub escape: bool,
}

/// Follows `path` until stdout is closed or `stop` says so.
pub fn run(path: &Path, opts: TailOptions, stop: &dyn Fn() -> bool) -> std::io::Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match follow(path, opts, &mut out, stop) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

/// The loop behind [`run`]; `stop` is checked between polls (tests).
pub fn follow(
    path: &Path,
    opts: TailOptions,
    out: &mut dyn Write,
    stop: &dyn Fn() -> bool,
) -> std::io::Result<()> {
    let mut file = loop {
        match File::open(path) {
            Ok(file) => break file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if stop() {
                    return Ok(());
                }
                std::thread::sleep(POLL);
            }
            Err(e) => return Err(e),
        }
    };
    let mut pos = backlog(&mut file, opts, out)?;
    let mut identity = identity(&file);
    let mut partial: Vec<u8> = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n > 0 {
            pos += n as u64;
            partial.extend_from_slice(&buf[..n]);
            while let Some(nl) = partial.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = partial.drain(..=nl).collect();
                write_line(&line[..line.len() - 1], opts, out)?;
            }
            out.flush()?;
            continue;
        }
        if stop() {
            return Ok(());
        }
        std::thread::sleep(POLL);
        match std::fs::metadata(path) {
            Ok(meta) if same_file(&meta, identity) && meta.len() >= pos => {}
            Ok(meta) if same_file(&meta, identity) => {
                // Truncated: start again from the beginning.
                file.seek(SeekFrom::Start(0))?;
                pos = 0;
                partial.clear();
            }
            Ok(_) => {
                // Replaced: read the new file from its start.
                if let Ok(new) = File::open(path) {
                    file = new;
                    identity = self::identity(&file);
                    pos = 0;
                    partial.clear();
                }
            }
            Err(_) => {}
        }
    }
}

/// Prints the last lines of the file; returns the offset reading continues from.
fn backlog(file: &mut File, opts: TailOptions, out: &mut dyn Write) -> std::io::Result<u64> {
    let len = file.metadata()?.len();
    let start = len.saturating_sub(BACKLOG_BYTES);
    file.seek(SeekFrom::Start(start))?;
    let mut tail = Vec::new();
    Read::by_ref(file)
        .take(len - start)
        .read_to_end(&mut tail)?;
    // Only complete lines; a line still being written is printed when it is finished.
    let complete = tail.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
    let mut lines: Vec<&[u8]> = tail[..complete].split(|b| *b == b'\n').collect();
    lines.pop();
    if start > 0 && !lines.is_empty() {
        lines.remove(0);
    }
    for line in &lines[lines.len().saturating_sub(BACKLOG_LINES)..] {
        write_line(line, opts, out)?;
    }
    out.flush()?;
    let pos = start + complete as u64;
    file.seek(SeekFrom::Start(pos))?;
    Ok(pos)
}

fn write_line(line: &[u8], opts: TailOptions, out: &mut dyn Write) -> std::io::Result<()> {
    let text = String::from_utf8_lossy(line);
    let text = text.strip_suffix('\r').unwrap_or(&text);
    let text = loki_wire::sanitize::for_terminal(text, opts.escape);
    if !opts.colors {
        return writeln!(out, "{text}");
    }
    match find_level(&text) {
        Some((at, level, code)) => writeln!(
            out,
            "{}{code}{level}\x1b[0m{}",
            &text[..at],
            &text[at + level.len()..]
        ),
        None => writeln!(out, "{text}"),
    }
}

/// The first level word of a log line, its offset and its colour.
fn find_level(line: &str) -> Option<(usize, &'static str, &'static str)> {
    const LEVELS: [(&str, &str); 5] = [
        ("ERROR", "\x1b[1;31m"),
        ("WARN", "\x1b[33m"),
        ("INFO", "\x1b[32m"),
        ("DEBUG", "\x1b[34m"),
        ("TRACE", "\x1b[2m"),
    ];
    LEVELS
        .iter()
        .filter_map(|(level, code)| {
            let at = line.match_indices(level).find(|(i, _)| {
                let before = line[..*i].chars().next_back();
                let after = line[i + level.len()..].chars().next();
                !before.is_some_and(char::is_alphanumeric)
                    && !after.is_some_and(char::is_alphanumeric)
            })?;
            Some((at.0, *level, *code))
        })
        .min_by_key(|(at, _, _)| *at)
}

#[cfg(unix)]
type Identity = (u64, u64);
#[cfg(not(unix))]
type Identity = ();

#[cfg(unix)]
fn identity(file: &File) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    file.metadata().ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(_file: &File) -> Option<Identity> {
    Some(())
}

#[cfg(unix)]
fn same_file(meta: &std::fs::Metadata, identity: Option<Identity>) -> bool {
    use std::os::unix::fs::MetadataExt;
    identity.is_none_or(|id| id == (meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn same_file(_meta: &std::fs::Metadata, _identity: Option<Identity>) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_coloured_once_and_escapes_shown() {
        let mut out = Vec::new();
        let opts = TailOptions {
            colors: true,
            escape: true,
        };
        write_line(b"2026 WARN loki: said INFO \x1b[2J", opts, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("2026 \x1b[33mWARN\x1b[0m loki: said INFO "),
            "{text:?}"
        );
        assert!(!text.contains("\x1b[2J"), "{text:?}");
        assert_eq!(find_level("INFORMATION only"), None);
    }

    #[test]
    fn backlog_shows_the_last_complete_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("loki.log");
        let lines: String = (0..15).map(|i| format!("line {i}\n")).collect();
        std::fs::write(&path, format!("{lines}partial")).unwrap();
        let mut file = File::open(&path).unwrap();
        let mut out = Vec::new();
        let opts = TailOptions {
            colors: false,
            escape: false,
        };
        let pos = backlog(&mut file, opts, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.starts_with("line 5\n") && text.ends_with("line 14\n"),
            "{text}"
        );
        assert_eq!(pos, lines.len() as u64);
    }
}
