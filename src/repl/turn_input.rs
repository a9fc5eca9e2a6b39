//! Keys typed while an answer streams: kept for the next prompt, never shown on the way.
//!
//! Owns: switching the terminal's line discipline for the length of one turn so that typed
//! keys are not echoed (onto the spinner or the answer), Enter stays a carriage return (so
//! the next prompt submits what was typed, instead of inserting a new line), and bytes are
//! passed on as typed (no line buffering). Ctrl-C still raises SIGINT. The saved mode is
//! restored when the guard is dropped, without discarding what was typed.

/// Restores the terminal mode saved when it was made.
pub(crate) struct QuietInput {
    #[cfg(unix)]
    saved: Option<rustix::termios::Termios>,
}

impl QuietInput {
    /// Turns echo and line editing off on stdin, if it is a terminal.
    pub(crate) fn start() -> Self {
        #[cfg(unix)]
        {
            use rustix::termios::{InputModes, LocalModes, OptionalActions, tcgetattr, tcsetattr};
            let stdin = std::io::stdin();
            let Ok(saved) = tcgetattr(&stdin) else {
                return Self { saved: None };
            };
            let mut quiet = saved.clone();
            quiet.local_modes.remove(
                LocalModes::ECHO
                    | LocalModes::ECHONL
                    | LocalModes::ICANON
                    | LocalModes::ECHOCTL
                    | LocalModes::IEXTEN,
            );
            quiet
                .input_modes
                .remove(InputModes::ICRNL | InputModes::INLCR);
            if tcsetattr(&stdin, OptionalActions::Now, &quiet).is_err() {
                return Self { saved: None };
            }
            Self { saved: Some(saved) }
        }
        #[cfg(not(unix))]
        Self {}
    }
}

impl Drop for QuietInput {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(saved) = self.saved.take() {
            let _ = rustix::termios::tcsetattr(
                std::io::stdin(),
                rustix::termios::OptionalActions::Now,
                &saved,
            );
        }
    }
}

/// The quiet mode held from start-up until the REPL's first prompt (see
/// [`hold_startup_keys`]).
static STARTUP: std::sync::Mutex<Option<QuietInput>> = std::sync::Mutex::new(None);

/// Keys typed while loki starts (loading, unlocking the vault) are neither echoed nor
/// edited by the terminal: they wait for the first prompt, which takes them as lines
/// ([`drain`]).
pub(crate) fn hold_startup_keys() {
    if let Ok(mut held) = STARTUP.lock() {
        *held = Some(QuietInput::start());
    }
}

/// Ends the start-up quiet mode if the REPL never took it (it did not start, a panic).
pub(crate) fn release_startup_keys() {
    if let Ok(mut held) = STARTUP.try_lock() {
        held.take();
    }
}

/// What was typed while loki was busy and nothing read the terminal (start-up, a slow
/// dot-command): each finished line, and the unfinished one. Reads only what is there
/// now, never waits. Ends the start-up quiet mode.
///
/// Also the quiet mode itself, for the caller to hold until the line editor has read its
/// line: keys typed between this read and the editor taking the terminal would otherwise
/// meet the terminal's own line discipline, which echoes them under the prompt and turns
/// Enter into a newline the editor inserts instead of submitting. The editor saves and
/// restores the mode it finds, so it hands the quiet mode back when it is done.
pub(crate) fn drain(stdin_tty: bool) -> (Typed, Option<QuietInput>) {
    let startup = STARTUP.lock().ok().and_then(|mut held| held.take());
    if !stdin_tty {
        return (Typed::default(), None);
    }
    // Without line editing, what the terminal held back (a line without Enter) can be read.
    let quiet = startup.unwrap_or_else(QuietInput::start);
    // Keys a yes/no question read past its answer come first: they were typed first.
    let typed = read_available(&crate::term::yes_no::take_leftover());
    (typed, Some(quiet))
}

#[cfg(unix)]
fn read_available(before: &[u8]) -> Typed {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdin = std::io::stdin();
    let mut keys = Keys::default();
    let done = keys.feed(before);
    keys.lines.extend(done);
    let mut buf = [0u8; 4096];
    let now = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // Bounded: a terminal cannot type faster than this is read.
    for _ in 0..256 {
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        if !matches!(poll(&mut fds, Some(&now)), Ok(n) if n > 0) {
            break;
        }
        match rustix::io::read(&stdin, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let done = keys.feed(&buf[..n]);
                keys.lines.extend(done);
            }
        }
    }
    Typed {
        lines: keys.lines,
        partial: String::from_utf8_lossy(&keys.current).into_owned(),
    }
}

#[cfg(not(unix))]
fn read_available(_before: &[u8]) -> Typed {
    Typed::default()
}

/// Lines typed while a turn runs: each finished line is queued on the conversation (the
/// turn sends it at its next step, or it becomes the next turn); dot-commands wait for
/// the prompt. What was typed without Enter goes back into the next prompt's buffer.
///
/// The reader polls stdin in short slices so that it lets go as soon as the turn ends,
/// and only reads while no question or approval holds the terminal.
pub(crate) struct TypeAhead {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    reader: Option<std::thread::JoinHandle<Typed>>,
}

/// What [`TypeAhead`] collected.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Typed {
    /// Finished lines, in order (queued ones included).
    pub lines: Vec<String>,
    /// The unfinished line.
    pub partial: String,
}

impl TypeAhead {
    /// Starts reading stdin when it is a terminal (`stdin_tty`); finished lines go to
    /// `queue`.
    pub(crate) fn start(
        queue: std::sync::Arc<crate::conversation::PromptQueue>,
        stdin_tty: bool,
    ) -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let reader = (cfg!(unix) && stdin_tty).then(|| {
            let stop = std::sync::Arc::clone(&stop);
            std::thread::spawn(move || read_until(&stop, &queue))
        });
        Self { stop, reader }
    }

    /// Stops reading; what was typed.
    pub(crate) fn finish(mut self) -> Typed {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.reader
            .take()
            .and_then(|r| r.join().ok())
            .unwrap_or_default()
    }
}

#[cfg(unix)]
fn read_until(
    stop: &std::sync::atomic::AtomicBool,
    queue: &crate::conversation::PromptQueue,
) -> Typed {
    use rustix::event::{PollFd, PollFlags, Timespec, poll};
    let stdin = std::io::stdin();
    let mut keys = Keys::default();
    let slice = Timespec {
        tv_sec: 0,
        tv_nsec: 50_000_000,
    };
    let mut buf = [0u8; 4096];
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        // Between model calls the keys stay where a question or an approval reads them.
        if !queue.listening() {
            std::thread::sleep(std::time::Duration::from_millis(50));
            continue;
        }
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        if !matches!(poll(&mut fds, Some(&slice)), Ok(n) if n > 0) {
            continue;
        }
        // A question or an approval reads the terminal itself.
        let Ok(_terminal) = crate::term::ask::try_terminal() else {
            std::thread::sleep(std::time::Duration::from_millis(50));
            continue;
        };
        // The model call may have ended while we waited: the keys are not ours then.
        if !queue.listening() {
            continue;
        }
        // The keys may have gone to a question that ended meanwhile: read only what is
        // there now, never block.
        let mut fds = [PollFd::new(&stdin, PollFlags::IN)];
        let now = Timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        if !matches!(poll(&mut fds, Some(&now)), Ok(n) if n > 0) {
            continue;
        }
        match rustix::io::read(&stdin, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                for line in keys.feed(&buf[..n]) {
                    if is_message(&line) {
                        queue.push(line.clone());
                    }
                    keys.lines.push(line);
                }
            }
        }
    }
    Typed {
        lines: std::mem::take(&mut keys.lines),
        partial: String::from_utf8_lossy(&keys.current).into_owned(),
    }
}

/// Whether a typed line is a message the turn may take. Dot-commands, `/skill` lines,
/// `:::` blocks and blank lines wait for the prompt, where they are handled as typed.
pub(crate) fn is_message(line: &str) -> bool {
    let start = line.trim_start();
    !start.is_empty()
        && !start.starts_with('.')
        && !start.starts_with('/')
        && !start.starts_with(":::")
}

#[cfg(not(unix))]
fn read_until(_: &std::sync::atomic::AtomicBool, _: &crate::conversation::PromptQueue) -> Typed {
    Typed::default()
}

/// Turns raw key bytes into lines: Enter ends a line, Backspace and Ctrl-U edit it,
/// escape sequences (arrows, function keys, bracketed-paste marks) and other control
/// keys are dropped.
#[derive(Debug, Default)]
struct Keys {
    current: Vec<u8>,
    lines: Vec<String>,
    escape: Escape,
    /// The parameters of the escape sequence being read.
    sequence: Vec<u8>,
    /// Inside a bracketed paste: line breaks belong to the message.
    pasting: bool,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Escape {
    #[default]
    None,
    /// After ESC.
    Start,
    /// Inside `ESC [` … or `ESC O` …, until a final byte.
    Sequence,
}

impl Keys {
    /// Feeds bytes; the lines they finished.
    fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut done = Vec::new();
        for &b in bytes {
            match self.escape {
                Escape::Start => {
                    self.sequence.clear();
                    self.escape = if b == b'[' || b == b'O' {
                        Escape::Sequence
                    } else {
                        Escape::None
                    };
                    continue;
                }
                Escape::Sequence => {
                    if (0x40..=0x7e).contains(&b) {
                        self.escape = Escape::None;
                        // `ESC[200~` starts a bracketed paste, `ESC[201~` ends it.
                        match (self.sequence.as_slice(), b) {
                            (b"200", b'~') => self.pasting = true,
                            (b"201", b'~') => self.pasting = false,
                            _ => {}
                        }
                    } else if self.sequence.len() < 16 {
                        self.sequence.push(b);
                    }
                    continue;
                }
                Escape::None => {}
            }
            match b {
                0x1b => self.escape = Escape::Start,
                b'\r' | b'\n' if self.pasting => self.current.push(b'\n'),
                b'\r' | b'\n' => {
                    done.push(String::from_utf8_lossy(&self.current).into_owned());
                    self.current.clear();
                }
                0x7f | 0x08 => {
                    // One character back (a UTF-8 sequence is one character).
                    while let Some(last) = self.current.pop() {
                        if last & 0xc0 != 0x80 {
                            break;
                        }
                    }
                }
                0x15 => self.current.clear(),
                b'\t' => self.current.push(b' '),
                0x00..=0x1f => {}
                _ => self.current.push(b),
            }
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_become_lines_without_escapes_or_control_keys() {
        let mut keys = Keys::default();
        let done = keys.feed(b"hel\x1b[Dlo\x7f\x7fp me\rsecond\x15third\x1bOP line\r.info\rpart");
        assert_eq!(done, ["help me", "third line", ".info"]);
        assert_eq!(String::from_utf8_lossy(&keys.current), "part");
        let mut keys = Keys::default();
        assert_eq!(keys.feed("né\x7f\r".as_bytes()), ["n"]);
    }

    #[test]
    fn a_bracketed_paste_is_one_message() {
        let mut keys = Keys::default();
        let done = keys.feed(b"look:\x1b[200~line one\r.not a command\rline 3\x1b[201~\r");
        assert_eq!(done, ["look:line one\n.not a command\nline 3"]);
        assert!(is_message(&done[0]));
        assert!(!is_message("/review src") && !is_message(".info") && !is_message("  "));
    }
}
