//! Showing a long text whole (an approval or an `-e` command that does not fit on the
//! screen) before it may run: `$PAGER`, else `less`, reading a private temporary file;
//! where neither runs, the text is printed on stderr.

use std::io::Write;

/// Shows `text` (already escaped for the terminal) from its first line.
pub fn show_whole(text: &str) {
    if page(text).is_err() {
        let mut err = std::io::stderr().lock();
        let _ = writeln!(err, "{text}");
    }
}

fn page(text: &str) -> std::io::Result<()> {
    let pager = std::env::var("PAGER")
        .ok()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| "less".into());
    let mut words = crate::shell_words::split(&pager);
    if words.is_empty() {
        return Err(std::io::ErrorKind::NotFound.into());
    }
    let program = words.remove(0);
    let dir = std::env::temp_dir();
    let path = dir.join(format!("loki-view-{}.txt", uuid::Uuid::new_v4()));
    crate::atomic_file::write_atomic(&path, text.as_bytes(), true)?;
    let status = std::process::Command::new(program)
        .args(words)
        .arg(&path)
        .status();
    let _ = std::fs::remove_file(&path);
    match status {
        Ok(s) if s.success() => Ok(()),
        Ok(_) => Err(std::io::ErrorKind::Other.into()),
        Err(e) => Err(e),
    }
}
