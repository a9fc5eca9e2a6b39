//! Driving loki through a real pseudo-terminal (expectrl), for terminal-only behaviour:
//! colours, the spinner, the first-run wizard and, later, the REPL.

use std::time::Duration;

use expectrl::session::OsSession as Session;
use expectrl::{Any, Eof, Expect};

/// The cursor-position request a line editor sends.
const CPR: &str = "\x1b[6n";

use super::TestEnv;

/// A loki process attached to a pseudo-terminal.
pub struct Pty {
    pub session: Session,
    /// Output read past a match while answering a cursor query; consumed first.
    pending: Vec<u8>,
}

impl Pty {
    /// Spawns loki with `args` on a fresh PTY (80x24) in the test environment.
    pub fn spawn(env: &TestEnv, args: &[&str], extra_env: &[(&str, &str)]) -> Pty {
        let mut cmd = env.loki_std();
        cmd.args(args);
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        cmd.env("TERM", "xterm-256color");
        let mut session = Session::spawn(cmd).expect("spawn loki on a pty");
        session.set_expect_timeout(Some(Duration::from_secs(15)));
        let _ = session.get_process_mut().set_window_size(80, 24);
        Pty {
            session,
            pending: Vec::new(),
        }
    }

    /// Spawns another program (e.g. a shell) on a PTY with the test environment.
    pub fn spawn_program(env: &TestEnv, program: &str, args: &[&str]) -> Pty {
        let mut cmd = std::process::Command::new(program);
        cmd.env_clear();
        for (k, v) in env.env_pairs() {
            cmd.env(k, v);
        }
        cmd.env("TERM", "xterm-256color");
        cmd.current_dir(env.work_dir());
        cmd.args(args);
        let mut session = Session::spawn(cmd).expect("spawn program on a pty");
        session.set_expect_timeout(Some(Duration::from_secs(15)));
        let _ = session.get_process_mut().set_window_size(80, 24);
        Pty {
            session,
            pending: Vec::new(),
        }
    }

    /// Waits for `text` to appear; returns everything read up to and including it.
    /// Cursor-position queries from the line editor are answered on the way (a real
    /// terminal would answer them).
    pub fn expect(&mut self, text: &str) -> String {
        if let Some(at) = find(&self.pending, text.as_bytes()) {
            let rest = self.pending.split_off(at + text.len());
            let done = std::mem::replace(&mut self.pending, rest);
            return String::from_utf8_lossy(&done).into_owned();
        }
        let mut all = std::mem::take(&mut self.pending);
        loop {
            match self.session.expect(Any(vec![CPR, text])) {
                Ok(found) => {
                    all.extend_from_slice(found.before());
                    let matched = found.get(0).unwrap_or_default();
                    if matched == CPR.as_bytes() && text != CPR {
                        self.session.send("\x1b[1;1R").expect("answer CPR");
                        // The text may have arrived before the query: keep what followed it.
                        if let Some(at) = find(&all, text.as_bytes()) {
                            self.pending = all.split_off(at + text.len());
                            return String::from_utf8_lossy(&all).into_owned();
                        }
                        continue;
                    }
                    all.extend_from_slice(matched);
                    return String::from_utf8_lossy(&all).into_owned();
                }
                Err(e) => panic!(
                    "waiting for {text:?}: {e}; got so far: {:?}",
                    String::from_utf8_lossy(&all)
                ),
            }
        }
    }

    /// Reads until the process closes the terminal (answering cursor queries).
    pub fn read_to_end(&mut self) -> String {
        let mut all = std::mem::take(&mut self.pending);
        loop {
            let found = self
                .session
                .expect(Any::boxed(vec![Box::new(CPR), Box::new(Eof)]))
                .expect("loki to exit");
            all.extend_from_slice(found.before());
            let matched = found.get(0).unwrap_or_default();
            if matched == CPR.as_bytes() {
                self.session.send("\x1b[1;1R").expect("answer CPR");
                continue;
            }
            all.extend_from_slice(matched);
            return String::from_utf8_lossy(&all).into_owned();
        }
    }

    /// Sends raw bytes (keys).
    pub fn send(&mut self, bytes: &str) {
        self.session.send(bytes).expect("write to pty");
    }

    /// The exit code, after the process ended.
    pub fn exit_code(&mut self) -> i32 {
        let status = self.session.get_process().wait().expect("wait");
        let text = format!("{status:?}");
        // `Exited(Pid(n), code)`
        text.rsplit(", ")
            .next()
            .and_then(|s| s.trim_end_matches(')').parse().ok())
            .unwrap_or(-1)
    }
}

impl Pty {
    /// Feeds what loki writes into `screen` — answering cursor-position queries with
    /// the screen's real cursor, as a terminal would — until `done` says the screen is
    /// as wanted (true) or `wait` passed (false).
    pub fn drive(
        &mut self,
        screen: &mut vt100::Parser,
        wait: Duration,
        done: impl Fn(&vt100::Screen) -> bool,
    ) -> bool {
        let deadline = std::time::Instant::now() + wait;
        let mut tail: Vec<u8> = std::mem::take(&mut self.pending);
        let mut buf = [0u8; 4096];
        loop {
            if !tail.is_empty() {
                // Answer each query after what was written before it.
                while let Some(at) = find(&tail, CPR.as_bytes()) {
                    screen.process(&tail[..at]);
                    let (row, col) = screen.screen().cursor_position();
                    self.session
                        .send(format!("\x1b[{};{}R", row + 1, col + 1))
                        .expect("answer CPR");
                    tail.drain(..at + CPR.len());
                }
                // Keep a possible start of a query for the next read.
                let keep = tail.len().min(CPR.len() - 1);
                let cut = tail.len() - keep;
                let keep_from = (cut..tail.len())
                    .find(|&i| CPR.as_bytes().starts_with(&tail[i..]))
                    .unwrap_or(tail.len());
                screen.process(&tail[..keep_from]);
                tail.drain(..keep_from);
            }
            if done(screen.screen()) {
                return true;
            }
            if std::time::Instant::now() >= deadline {
                return false;
            }
            match self.session.try_read(&mut buf) {
                Ok(0) => return done(screen.screen()),
                Ok(n) => tail.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(10));
                }
                Err(_) => return done(screen.screen()),
            }
        }
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack
        .windows(needle.len().max(1))
        .position(|w| w == needle)
}
