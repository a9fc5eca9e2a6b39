//! Driving loki through a real pseudo-terminal (expectrl), for terminal-only behaviour:
//! colours, the spinner, the first-run wizard and, later, the REPL.

use std::time::Duration;

use expectrl::session::OsSession as Session;
use expectrl::{Eof, Expect};

use super::TestEnv;

/// A loki process attached to a pseudo-terminal.
pub struct Pty {
    pub session: Session,
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
        Pty { session }
    }

    /// Waits for `text` to appear; returns everything read up to and including it.
    pub fn expect(&mut self, text: &str) -> String {
        match self.session.expect(text) {
            Ok(found) => {
                let mut all = found.before().to_vec();
                all.extend_from_slice(found.get(0).unwrap_or_default());
                String::from_utf8_lossy(&all).into_owned()
            }
            Err(e) => panic!("waiting for {text:?}: {e}"),
        }
    }

    /// Reads until the process closes the terminal.
    pub fn read_to_end(&mut self) -> String {
        let found = self.session.expect(Eof).expect("loki to exit");
        String::from_utf8_lossy(found.as_bytes()).into_owned()
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
