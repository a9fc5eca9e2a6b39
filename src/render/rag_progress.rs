//! Showing a knowledge base build on stderr: on a terminal, one line per source and a
//! redrawn progress bar with counts and rate while embedding; when piped, plain lines
//! (one per source, and embedding progress at most every 10%).

use std::io::Write;
use std::sync::Mutex;
use std::time::Instant;

use super::theme::{Style, Theme};
use crate::rag::progress::{Progress, Step};

/// Bar width in cells.
const BAR: usize = 30;

/// Build progress on stderr.
#[derive(Debug)]
pub struct BuildProgress {
    tty: bool,
    theme: Theme,
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    started: Option<Instant>,
    bar_open: bool,
    /// Characters of the bar line last drawn (a shorter one is padded over it).
    bar_len: usize,
    last_tenth: Option<usize>,
}

impl BuildProgress {
    /// Progress for stderr; `tty` draws a bar.
    pub fn new(tty: bool, theme: Theme) -> Self {
        Self {
            tty,
            theme,
            state: Mutex::new(State::default()),
        }
    }

    fn write(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
        let _ = err.flush();
    }

    fn line(&self, state: &mut State, text: &str) {
        let prefix = if state.bar_open { "\n" } else { "" };
        state.bar_open = false;
        state.bar_len = 0;
        self.write(&format!("{prefix}{text}\n"));
    }
}

/// `[=====>     ] 120/300 chunks, 45.0/s`.
fn bar(done: usize, total: usize, rate: f64) -> String {
    let filled = (done * BAR).checked_div(total).unwrap_or(BAR);
    let mut cells = "=".repeat(filled);
    if filled < BAR {
        cells.push('>');
        cells.push_str(&" ".repeat(BAR - filled - 1));
    }
    format!("[{cells}] {done}/{total} chunks, {rate:.1}/s")
}

impl Progress for BuildProgress {
    fn report(&self, step: Step) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        match step {
            Step::Loading {
                index,
                total,
                source,
            } => {
                let source = loki_wire::sanitize::display(&source);
                self.line(&mut state, &format!("Load {source} [{index}/{total}]"));
            }
            Step::Note(text) => {
                let text = self
                    .theme
                    .paint(Style::Dim, &loki_wire::sanitize::display(&text));
                self.line(&mut state, &text);
            }
            Step::Warning(text) => {
                let label = self.theme.paint(Style::Warning, "warning:");
                let text = loki_wire::sanitize::display(&text);
                self.line(&mut state, &format!("{label} {text}"));
            }
            Step::Embedding { done, total } => {
                if total == 0 {
                    return;
                }
                let started = *state.started.get_or_insert_with(Instant::now);
                let secs = started.elapsed().as_secs_f64().max(0.001);
                let rate = done as f64 / secs;
                if self.tty {
                    // Redrawn over itself with a carriage return and padding: no escape
                    // sequence, so `NO_COLOR` and dumb terminals see plain text too.
                    let line = format!("Embedding {}", bar(done, total, rate));
                    let pad = state.bar_len.saturating_sub(line.len());
                    state.bar_len = line.len();
                    self.write(&format!("\r{line}{}", " ".repeat(pad)));
                    state.bar_open = true;
                    if done >= total {
                        self.write("\n");
                        state.bar_open = false;
                    }
                } else {
                    let tenth = done * 10 / total;
                    if state.last_tenth != Some(tenth) {
                        state.last_tenth = Some(tenth);
                        self.write(&format!("Embedding {done}/{total} chunks ({rate:.1}/s)\n"));
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bar_shape() {
        assert_eq!(
            bar(15, 30, 2.0),
            format!(
                "[{}>{}] 15/30 chunks, 2.0/s",
                "=".repeat(15),
                " ".repeat(14)
            )
        );
        assert!(bar(30, 30, 1.0).starts_with(&format!("[{}]", "=".repeat(30))));
    }
}
