//! Diagnostics after an edit: once `fs_write`, `fs_edit` or `fs_patch` changed a file that
//! a configured server handles, the server is given the new text and the errors it then
//! publishes for the file are appended to the tool's result, so the model sees what it
//! broke without having to ask `lsp_diagnostics`.
//!
//! Bounded in time — `lsp_diagnostics_timeout`, the server's start included; a server
//! that is slow, hangs or crashes gives a one-line note instead, and the edit stands — and
//! in size: at most [`MAX_ROWS`] lines and about [`MAX_BYTES`]. Errors are always listed;
//! warnings only when there are at most [`MAX_WARNINGS`] (else counted); infos and hints
//! never. A clean file adds nothing.
//!
//! What existed before the edit: the diagnostics the server last published for the file
//! (when loki had already shown it the file) are the baseline. A diagnostic matching one of
//! them — same severity, code and message, on a line with the same text (line numbers move
//! with edits) — is listed after the new ones and marked `(before the edit)`. A file the
//! server had not seen has no baseline, so nothing is marked.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use serde_json::Value;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::convert::{Encoding, line_of};
use super::{LspError, LspPool, diagnostic_row, severity};

/// The most diagnostic lines appended to an edit's result.
pub const MAX_ROWS: usize = 20;
/// The most bytes of diagnostic lines appended (whole lines are kept).
pub const MAX_BYTES: usize = 2048;
/// Warnings are listed only when there are at most this many.
pub const MAX_WARNINGS: usize = 5;
/// How long past the time limit the wait may run for a publication that arrived just
/// then (the limit itself ends the server's own wait).
const GRACE: Duration = Duration::from_millis(200);
/// How an appended block starts.
const HEADER: &str = "[diagnostics after the edit";

impl LspPool {
    /// The block to append to the result of an edit that left `file` (inside `root`)
    /// holding `text`; `None` when nothing is to be said: no server handles the file (then
    /// nothing starts or waits), `lsp_diagnostics_timeout` is 0, the call was cancelled,
    /// or the server reports no errors or warnings.
    pub async fn after_edit(
        &self,
        root: &Path,
        file: &Path,
        text: &str,
        cancel: &CancellationToken,
    ) -> Option<String> {
        if self.edit_timeout.is_zero() {
            return None;
        }
        let located = self.locate(root, file).ok()?;
        let language = located.language.to_string();
        let deadline = Instant::now() + self.edit_timeout;
        let checked = tokio::time::timeout_at(
            deadline + GRACE,
            self.check_edit(located, text, deadline, cancel),
        )
        .await;
        match checked {
            Ok(Ok(Some(block))) => block,
            Ok(Ok(None)) | Err(_) => Some(format!(
                "{HEADER}: none from the `{language}` language server within {}]",
                seconds(self.edit_timeout)
            )),
            Ok(Err(LspError::Cancelled)) => None,
            Ok(Err(e)) => Some(format!("{HEADER}: unavailable: {e}]")),
        }
    }

    /// Gives the server the edited text and waits for its diagnostics until `deadline`:
    /// `None` when none came, else the block (itself `None` for a clean file).
    async fn check_edit(
        &self,
        located: super::Located<'_>,
        text: &str,
        deadline: Instant,
        cancel: &CancellationToken,
    ) -> Result<Option<Option<String>>, LspError> {
        let target = self.target(located, Some(text.to_string()), cancel).await?;
        let before = target.server.published(&target.uri).await;
        let after = target.diagnostics(deadline, cancel).await?;
        Ok(after.map(|after| {
            block(
                &after,
                before
                    .as_ref()
                    .map(|(items, text)| (items.as_slice(), text.as_str())),
                &target.relative,
                &target.text,
                target.server.encoding(),
            )
        }))
    }
}

/// `2 s`, `0.5 s`.
fn seconds(duration: Duration) -> String {
    let secs = duration.as_secs_f64();
    if secs.fract() == 0.0 {
        format!("{secs:.0} s")
    } else {
        format!("{secs:.1} s")
    }
}

/// What identifies a diagnostic of `text` across an edit: line numbers move, so the
/// text of its line stands in for them.
fn key<'a>(item: &Value, text: &'a str) -> (&'static str, String, String, &'a str) {
    let line = item["range"]["start"]["line"]
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .and_then(|n| line_of(text, n))
        .unwrap_or_default();
    (
        severity(item),
        item["code"].to_string(),
        item["message"]
            .as_str()
            .unwrap_or_default()
            .trim()
            .to_string(),
        line.trim(),
    )
}

/// `1 error`, `2 warnings`.
fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The block for the diagnostics `after` the edit, those known `before` it marked; `None`
/// when there are no errors or warnings.
fn block(
    after: &[Value],
    before: Option<(&[Value], &str)>,
    shown: &str,
    text: &str,
    encoding: Encoding,
) -> Option<String> {
    let errors = after.iter().filter(|i| severity(i) == "error").count();
    let warnings = after.iter().filter(|i| severity(i) == "warning").count();
    if errors == 0 && warnings == 0 {
        return None;
    }
    let listed_warnings = warnings <= MAX_WARNINGS;
    let mut baseline: HashMap<_, usize> = HashMap::new();
    if let Some((items, old_text)) = before {
        for item in items {
            *baseline.entry(key(item, old_text)).or_default() += 1;
        }
    }
    let mut rows: Vec<(&Value, (u64, u64), String)> = after
        .iter()
        .filter(|i| match severity(i) {
            "error" => true,
            "warning" => listed_warnings,
            _ => false,
        })
        .map(|item| {
            let (at, row) = diagnostic_row(item, shown, text, encoding);
            (item, at, row)
        })
        .collect();
    // In file order: among equal diagnostics the first ones count as old.
    rows.sort_by_key(|(_, at, _)| *at);
    let mut marked: Vec<(bool, String)> = rows
        .into_iter()
        .map(|(item, _, row)| {
            let left = baseline.get_mut(&key(item, text));
            let old = left.is_some_and(|n| {
                let was = *n > 0;
                *n = n.saturating_sub(1);
                was
            });
            (old, row)
        })
        .collect();
    // New ones first (a stable sort keeps file order within each group).
    marked.sort_by_key(|(old, _)| *old);
    let old = marked.iter().filter(|(old, _)| *old).count();
    Some(render(&marked, errors, warnings, listed_warnings, old))
}

/// The header and the lines, within [`MAX_ROWS`] and [`MAX_BYTES`].
fn render(
    marked: &[(bool, String)],
    errors: usize,
    warnings: usize,
    listed_warnings: bool,
    old: usize,
) -> String {
    let mut header = format!("{HEADER}: {}", count(errors, "error"));
    if warnings > 0 {
        header.push_str(&format!(", {}", count(warnings, "warning")));
    }
    if old > 0 {
        header.push_str(&format!("; {old} of them before the edit too"));
    }
    header.push(']');
    let mut lines = vec![header];
    let mut bytes = 0;
    let mut kept = 0;
    for (old, row) in marked {
        let line = if *old {
            format!("{row} (before the edit)")
        } else {
            row.clone()
        };
        if kept == MAX_ROWS || (kept > 0 && bytes + line.len() > MAX_BYTES) {
            break;
        }
        bytes += line.len() + 1;
        kept += 1;
        lines.push(line);
    }
    if kept < marked.len() {
        lines.push(format!(
            "… and {} more (lsp_diagnostics lists them all)",
            marked.len() - kept
        ));
    }
    if !listed_warnings {
        lines.push(format!(
            "(the {} are not listed here; lsp_diagnostics lists them)",
            count(warnings, "warning")
        ));
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn item(line: u64, severity: u64, message: &str) -> Value {
        json!({"range": {"start": {"line": line, "character": 0}}, "severity": severity, "message": message})
    }

    fn render_block(
        after: &[Value],
        before: Option<(&[Value], &str)>,
        text: &str,
    ) -> Option<String> {
        block(after, before, "a.rs", text, Encoding::Utf16)
    }

    #[test]
    fn new_errors_come_first_and_old_ones_are_marked() {
        let old_text = "let a = 1;\nbad();\n";
        let before = [item(1, 1, "no bad")];
        let text = "worse();\nlet a = 1;\nbad();\n";
        let after = [
            item(2, 1, "no bad"),
            item(0, 1, "no bad"),
            item(1, 2, "unused a"),
            item(1, 3, "an info"),
        ];
        assert_eq!(
            render_block(&after, Some((&before, old_text)), text).unwrap(),
            "[diagnostics after the edit: 2 errors, 1 warning; 1 of them before the edit too]\n\
             a.rs:1:1: error: no bad\n\
             a.rs:2:1: warning: unused a\n\
             a.rs:3:1: error: no bad (before the edit)"
        );
        // Without a baseline nothing is marked, in file order.
        assert_eq!(
            render_block(&after[..2], None, text).unwrap(),
            "[diagnostics after the edit: 2 errors]\na.rs:1:1: error: no bad\na.rs:3:1: error: no bad"
        );
    }

    #[test]
    fn clean_files_add_nothing_and_many_warnings_are_counted() {
        assert_eq!(render_block(&[], None, ""), None);
        assert_eq!(
            render_block(&[item(0, 3, "info"), item(0, 4, "hint")], None, ""),
            None
        );
        let warnings: Vec<Value> = (0..MAX_WARNINGS as u64 + 1)
            .map(|n| item(n, 2, "w"))
            .collect();
        assert_eq!(
            render_block(&warnings, None, "").unwrap(),
            "[diagnostics after the edit: 0 errors, 6 warnings]\n\
             (the 6 warnings are not listed here; lsp_diagnostics lists them)"
        );
    }

    #[test]
    fn blocks_are_bounded_in_lines_and_bytes() {
        let many: Vec<Value> = (0..30).map(|n| item(n, 1, "e")).collect();
        let out = render_block(&many, None, "").unwrap();
        assert_eq!(out.lines().count(), 1 + MAX_ROWS + 1, "{out}");
        assert!(
            out.ends_with("… and 10 more (lsp_diagnostics lists them all)"),
            "{out}"
        );
        let long: Vec<Value> = (0..10).map(|n| item(n, 1, &"x".repeat(280))).collect();
        let out = render_block(&long, None, "").unwrap();
        let listed = out.lines().filter(|l| l.starts_with("a.rs:")).count();
        assert!(listed < 10 && listed > 0, "{out}");
        assert!(out.len() < MAX_BYTES + 200, "{}", out.len());
    }

    #[test]
    fn time_limits_are_shown_in_seconds() {
        assert_eq!(seconds(Duration::from_secs(2)), "2 s");
        assert_eq!(seconds(Duration::from_millis(500)), "0.5 s");
    }

    #[test]
    fn the_time_limit_is_clamped() {
        let pool = |secs: f64| LspPool::default().with_edit_timeout(secs).edit_timeout;
        assert!(pool(0.0).is_zero() && pool(-3.0).is_zero() && pool(f64::NAN).is_zero());
        assert_eq!(pool(1.5), Duration::from_millis(1500));
        assert_eq!(pool(1e12), Duration::from_secs(600));
        assert_eq!(LspPool::default().edit_timeout, Duration::from_secs(2));
    }
}
