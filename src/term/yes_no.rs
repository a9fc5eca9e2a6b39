//! Yes/no questions ("Save session?", "Carry the conversation…?") answered with one key.
//!
//! Owns: reading the terminal one byte at a time, so keys typed after the answer stay
//! where the next prompt reads them (a line editor would swallow them), and ignoring
//! editing keys (Ctrl-U, Ctrl-W, Ctrl-L, arrows) instead of taking them as letters.
//! Keys typed before the question appeared are dropped (they were meant for something
//! else). A `y` or `n` answers; when it starts `yes⏎`, `no⏎` or `y⏎` (any case, typed
//! at once) that line is read whole, so no rest of it (`es` of `yes`) reaches the next
//! prompt, and other keys read past the answer are handed to that prompt
//! ([`take_leftover`]). A word starting with another letter (`one`) is read to its
//! Enter and is not an answer — its letters never count one by one.

use std::io::Write;

use super::raw::{Raw, drop_type_ahead};

/// The answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// `y`, or Enter when yes is the default.
    Yes,
    /// `n`, or Enter when no is the default.
    No,
    /// Esc, Ctrl-C or Ctrl-D: go back without answering.
    Back,
}

/// Asks `question` on the terminal (stdin a terminal, the question on stderr); `hint`
/// follows the `(Y/n)` mark. `Err` when there is no terminal to ask on.
pub fn ask(question: &str, default_yes: bool, hint: &str) -> std::io::Result<Reply> {
    let raw = Raw::start()?;
    let mark = if default_yes { "(Y/n)" } else { "(y/N)" };
    let question = loki_wire::sanitize::display(question);
    let mut err = std::io::stderr().lock();
    let hint = if hint.is_empty() {
        String::new()
    } else {
        format!(" [{hint}]")
    };
    // What was typed before the question shows was meant for something else.
    drop_type_ahead();
    let asked = format!("? {question} {mark}{hint} ");
    write!(err, "{asked}")?;
    err.flush()?;
    let mut leftover = Vec::new();
    let reply = read_reply(default_yes, read_byte, byte_within, &mut leftover)?;
    if !leftover.is_empty() {
        LEFTOVER
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend_from_slice(&leftover);
    }
    let shown = match reply {
        Reply::Yes => "yes",
        Reply::No => "no",
        Reply::Back => "",
    };
    // A question longer than the terminal is wide took several rows: go back to its
    // first before writing it with the answer, so that it is not shown twice.
    let up = rows_taken(&asked).saturating_sub(1);
    if up > 0 {
        write!(err, "\x1b[{up}A")?;
    }
    write!(err, "\r\x1b[J? {question} {shown}\r\n")?;
    err.flush()?;
    drop(raw);
    Ok(reply)
}

/// Rows of the terminal that `text` (no line breaks) fills when written from the start of
/// a row: one when the width is unknown.
fn rows_taken(text: &str) -> usize {
    let width = crossterm::terminal::size().map_or(0, |(columns, _)| usize::from(columns));
    if width == 0 {
        return 1;
    }
    let cells = unicode_width::UnicodeWidthStr::width(text);
    // A text that ends exactly at the last column leaves the cursor on that row.
    cells.div_ceil(width).max(1)
}

/// Keys read past the answer that belong to the next prompt (`second question` of
/// `ysecond question⏎`): a terminal cannot take them back, so they wait here.
static LEFTOVER: std::sync::Mutex<Vec<u8>> = std::sync::Mutex::new(Vec::new());

/// Takes the keys typed after an answer that the question read but did not use, for
/// the next prompt to start with (before what the terminal still holds).
pub fn take_leftover() -> Vec<u8> {
    std::mem::take(
        &mut *LEFTOVER
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    )
}

/// How long after a `y`/`n` key the next key of a typed word may come: a typist's pause
/// between letters. A lone key answers once this passed.
const FOLLOW_ON: std::time::Duration = std::time::Duration::from_millis(300);

fn read_reply(
    default_yes: bool,
    mut read_byte: impl FnMut() -> std::io::Result<u8>,
    byte_within: impl Fn(std::time::Duration) -> std::io::Result<bool>,
    leftover: &mut Vec<u8>,
) -> std::io::Result<Reply> {
    // A word being typed (its first letter was not y or n): read to Enter.
    let mut word = String::new();
    loop {
        let byte = read_byte()?;
        if !word.is_empty() {
            match byte {
                b'\r' | b'\n' => {
                    match word.trim().to_ascii_lowercase().as_str() {
                        "y" | "yes" => return Ok(Reply::Yes),
                        "n" | "no" => return Ok(Reply::No),
                        _ => word.clear(),
                    }
                    continue;
                }
                0x03 | 0x04 => return Ok(Reply::Back),
                0x7f | 0x08 => {
                    word.pop();
                    continue;
                }
                0x20..=0x7e => {
                    word.push(char::from(byte));
                    continue;
                }
                _ => continue,
            }
        }
        match byte {
            // One key answers. When more follows at typing speed, a line that spells
            // the answer (`yes⏎`, `No⏎`, `y⏎`) is read whole, so none of it reaches the
            // next prompt; anything else after the key is type-ahead for that prompt.
            b'y' | b'Y' | b'n' | b'N' => {
                let yes = byte.eq_ignore_ascii_case(&b'y');
                if byte_within(FOLLOW_ON)? {
                    let word: &[u8] = if yes { b"yes" } else { b"no" };
                    let mut typed = vec![byte];
                    // Each further key must follow at typing speed too: `no` typed
                    // without Enter answers after the pause, not at the next key.
                    let mut more = true;
                    while more {
                        let next = read_byte()?;
                        if next == b'\r' || next == b'\n' {
                            break;
                        }
                        typed.push(next);
                        let spelled = word
                            .get(..typed.len())
                            .is_some_and(|w| w.eq_ignore_ascii_case(&typed));
                        if !spelled {
                            leftover.extend_from_slice(&typed[1..]);
                            break;
                        }
                        more = byte_within(FOLLOW_ON)?;
                    }
                }
                return Ok(if yes { Reply::Yes } else { Reply::No });
            }
            b'\r' | b'\n' => {
                return Ok(if default_yes { Reply::Yes } else { Reply::No });
            }
            0x03 | 0x04 => return Ok(Reply::Back),
            b'!'..=b'~' => word.push(char::from(byte)),
            0x1b => {
                // A lone Esc goes back; an escape sequence (an arrow, a function key) is
                // read whole and ignored.
                if !byte_within(std::time::Duration::from_millis(50))? {
                    return Ok(Reply::Back);
                }
                let next = read_byte()?;
                if next == b'[' || next == b'O' {
                    for _ in 0..32 {
                        if (0x40..=0x7e).contains(&read_byte()?) {
                            break;
                        }
                    }
                }
            }
            // Anything else (editing keys, other letters) is not an answer.
            _ => {}
        }
    }
}

#[cfg(unix)]
fn read_byte() -> std::io::Result<u8> {
    let mut byte = [0u8; 1];
    loop {
        match rustix::io::read(std::io::stdin(), &mut byte) {
            Ok(1) => return Ok(byte[0]),
            Ok(_) => return Err(std::io::ErrorKind::UnexpectedEof.into()),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(unix)]
fn byte_within(wait: std::time::Duration) -> std::io::Result<bool> {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdin = std::io::stdin();
    let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
    let timeout = Timespec {
        tv_sec: 0,
        tv_nsec: i64::try_from(wait.as_nanos()).unwrap_or(50_000_000),
    };
    Ok(matches!(poll(&mut fds, Some(&timeout)), Ok(n) if n > 0))
}

#[cfg(not(unix))]
fn read_byte() -> std::io::Result<u8> {
    Err(std::io::ErrorKind::Unsupported.into())
}

#[cfg(not(unix))]
fn byte_within(_: std::time::Duration) -> std::io::Result<bool> {
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reply to `keys` typed at once (a key follows as long as any is left), and
    /// the keys left for the next prompt (read past the answer, or never read).
    fn reply_and_rest(keys: &str, default_yes: bool) -> (Reply, String) {
        let bytes = std::cell::RefCell::new(keys.bytes().peekable());
        let mut leftover = Vec::new();
        let reply = read_reply(
            default_yes,
            || {
                bytes
                    .borrow_mut()
                    .next()
                    .ok_or(std::io::ErrorKind::UnexpectedEof.into())
            },
            |_| Ok(bytes.borrow_mut().peek().is_some()),
            &mut leftover,
        )
        .unwrap();
        leftover.extend(bytes.into_inner());
        (reply, String::from_utf8_lossy(&leftover).into_owned())
    }

    fn reply(keys: &str, default_yes: bool) -> Reply {
        reply_and_rest(keys, default_yes).0
    }

    #[test]
    fn one_key_answers_and_a_typed_word_is_read_to_its_enter() {
        assert_eq!(reply("y", false), Reply::Yes);
        assert_eq!(reply("N", true), Reply::No);
        assert_eq!(reply("\r", true), Reply::Yes);
        assert_eq!(reply("\r", false), Reply::No);
        // `one` is not an answer: its `n` does not count; the next key decides.
        assert_eq!(reply("one\ry", false), Reply::Yes);
        assert_eq!(reply("yes\r", false), Reply::Yes);
        assert_eq!(reply("nope\rno\r", true), Reply::No);
        assert_eq!(reply("ok\x03", true), Reply::Back);
        assert_eq!(reply("\x1b", true), Reply::Back);
    }

    #[test]
    fn a_typed_word_is_consumed_to_its_enter() {
        // Nothing of `yes` is left; what follows its Enter is the next prompt's.
        assert_eq!(
            reply_and_rest("yes\rnext", false),
            (Reply::Yes, "next".into())
        );
        assert_eq!(reply_and_rest("NO\r", true), (Reply::No, String::new()));
        assert_eq!(reply_and_rest("Yes\r", false), (Reply::Yes, String::new()));
        assert_eq!(reply_and_rest("n\r", true), (Reply::No, String::new()));
        // Not the answer spelled out: the key answers, the rest is type-ahead.
        assert_eq!(
            reply_and_rest("ysecond question\r", false),
            (Reply::Yes, "second question\r".into())
        );
    }
}
