//! The log file: `--tail-logs`, `--disable-log-colors`, `LOKI_LOG_LEVEL`, `LOKI_LOG_PATH`.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use crate::common::TestEnv;
use crate::common::pty::Pty;

const WAIT: Duration = Duration::from_secs(20);

fn append(path: &std::path::Path, line: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    writeln!(f, "{line}").unwrap();
}

#[test]
fn tail_logs_prints_lines_appended_after_it_started() {
    let env = TestEnv::new();
    let log = env.root().join("mylog").join("loki.log");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    append(&log, "2026-01-01 INFO old line");
    let mut child = env
        .loki_std()
        .arg("--tail-logs")
        .env("LOKI_LOG_PATH", &log)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap_or_default()).is_err() {
                break;
            }
        }
    });
    // The existing end of the file is shown first: tail is now running.
    assert_eq!(rx.recv_timeout(WAIT).unwrap(), "2026-01-01 INFO old line");
    append(&log, "2026-01-01 WARN new line \x1b[31m");
    let new = rx.recv_timeout(WAIT).expect("the appended line");
    // Into a pipe: no colours added, the bytes as written.
    assert_eq!(new, "2026-01-01 WARN new line \x1b[31m");
    // Truncation (log rotation by copy) is followed from the start.
    std::fs::write(&log, "").unwrap();
    std::thread::sleep(Duration::from_millis(500));
    append(&log, "after truncation");
    assert_eq!(rx.recv_timeout(WAIT).unwrap(), "after truncation");
    // Rotation by rename: the new file at the same path is followed.
    std::fs::rename(&log, log.with_extension("log.1")).unwrap();
    append(&log, "in the new file");
    assert_eq!(rx.recv_timeout(WAIT).unwrap(), "in the new file");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn tail_logs_colours_levels_on_a_terminal_unless_disabled() {
    let env = TestEnv::new();
    let log = env.root().join("cache").join("loki").join("loki.log");
    std::fs::create_dir_all(log.parent().unwrap()).unwrap();
    append(&log, "2026-01-01  INFO loki: hello \x1b]0;title\x07");
    let mut pty = Pty::spawn(&env, &["--tail-logs"], &[]);
    let shown = pty.expect("hello");
    assert!(shown.contains("\x1b[32mINFO\x1b[0m"), "{shown:?}");
    let rest = pty.expect("\n");
    assert!(
        !rest.contains("\x1b]0;"),
        "control characters escaped: {rest:?}"
    );
    stop(&mut pty);

    let mut pty = Pty::spawn(&env, &["--tail-logs", "--disable-log-colors"], &[]);
    let shown = pty.expect("hello");
    assert!(!shown.contains("\x1b[32m"), "{shown:?}");
    stop(&mut pty);

    let mut pty = Pty::spawn(&env, &["--tail-logs"], &[("NO_COLOR", "1")]);
    let shown = pty.expect("hello");
    assert!(!shown.contains("\x1b[32m"), "{shown:?}");
    stop(&mut pty);
}

#[test]
fn disable_log_colors_needs_tail_logs() {
    let env = TestEnv::new();
    let out = env.loki().arg("--disable-log-colors").assert().failure();
    assert!(crate::common::stderr(&out).contains("--tail-logs"));
}

/// Ends a `--tail-logs` run. (SIGKILL rather than Ctrl-C: a test process may have
/// SIGINT blocked or ignored in the children it spawns.)
fn stop(pty: &mut Pty) {
    let pid = pty.session.get_process().pid().as_raw();
    let status = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    pty.read_to_end();
}
