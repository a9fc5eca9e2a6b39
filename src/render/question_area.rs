//! The rows a question from another conversation (a sub-agent's, escalated to the
//! terminal) holds at the bottom of the screen while the rest of loki goes on writing.
//!
//! Owns: who may draw there and when. The question's widget (`term::withdrawable`) draws
//! its rows through [`draw`]; the terminal emitter takes them off the screen before it
//! writes ([`Hold::clear`]) and tells what it wrote ([`wrote`]), so the widget draws them
//! again below the new output, on a line of their own. [`take_down`] erases them for good
//! (answered, or withdrawn because someone else answered). Every row is cut to the
//! terminal's width, so the rows on screen are exactly the rows drawn.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use super::screenful::{cut, terminal_width};

struct Area {
    /// Rows on screen now (the cursor is at the end of the last one).
    rows: usize,
    /// Something else wrote since the rows were drawn: draw them again.
    moved: bool,
}

static AREA: Mutex<Area> = Mutex::new(Area {
    rows: 0,
    moved: false,
});

/// The last thing written to the terminal ended its line (kept apart from the area, so
/// a writer holding it can say what it wrote).
static AT_LINE_START: AtomicBool = AtomicBool::new(true);

fn lock() -> MutexGuard<'static, Area> {
    AREA.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn erase(area: &mut Area, out: &mut Vec<u8>) {
    if area.rows == 0 {
        return;
    }
    out.push(b'\r');
    if area.rows > 1 {
        let _ = write!(out, "\x1b[{}A", area.rows - 1);
    }
    out.extend_from_slice(b"\x1b[J");
    area.rows = 0;
}

fn write_stderr(bytes: &[u8]) {
    if bytes.is_empty() {
        return;
    }
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(bytes);
    let _ = err.flush();
}

/// Draws `rows` in place of what the question showed before (the cursor ends after the
/// last row, where typing shows).
pub fn draw(rows: &[String]) {
    let mut area = lock();
    let width = terminal_width();
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"\x1b[?2026h");
    erase(&mut area, &mut out);
    if !AT_LINE_START.swap(true, Ordering::AcqRel) {
        out.extend_from_slice(b"\r\n");
    }
    for (i, row) in rows.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(cut(row, width).as_bytes());
    }
    out.extend_from_slice(b"\x1b[?2026l");
    area.rows = rows.len();
    area.moved = false;
    write_stderr(&out);
}

/// Erases the question's rows; `last` (the answer, or what became of the question) is
/// written on a line of its own in their place when they were on screen.
pub fn take_down(last: Option<&str>) {
    let mut area = lock();
    let mut out = Vec::new();
    // Rows other output already took off the screen are not drawn again, and neither
    // is what became of them: the screen has moved on.
    let shown = area.rows > 0;
    erase(&mut area, &mut out);
    if let Some(last) = last.filter(|_| shown) {
        out.extend_from_slice(cut(last, terminal_width()).as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    area.moved = false;
    write_stderr(&out);
}

/// Whether a question's rows are on the screen now.
pub fn on_screen() -> bool {
    lock().rows > 0
}

/// Whether other output took the question's place since it was drawn.
pub fn moved() -> bool {
    lock().moved
}

/// What the terminal emitter holds while it writes: the question's rows come off the
/// screen before the first byte ([`Hold::clear`]), and nobody draws them meanwhile.
pub struct Hold {
    area: MutexGuard<'static, Area>,
}

/// Holds the area while an event is written.
pub fn hold() -> Hold {
    Hold { area: lock() }
}

impl Hold {
    /// Takes the question's rows off the screen (they are drawn again after the write).
    pub fn clear(&mut self) {
        if self.area.rows > 0 {
            let mut out = Vec::new();
            erase(&mut self.area, &mut out);
            self.area.moved = true;
            write_stderr(&out);
        }
    }
}

/// Tells the area what was written to the terminal (whether it ended a line), so a
/// question drawn next starts on a fresh line.
pub fn wrote(bytes: &[u8]) {
    if let Some(&last) = bytes.last() {
        AT_LINE_START.store(last == b'\n', Ordering::Release);
    }
}
