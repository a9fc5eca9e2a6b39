//! Running a tool's child process (`execute_command`, script tools).
//!
//! - The child gets its own process group, so a timeout or Ctrl-C stops everything it
//!   started.
//! - Both pipes are read to the end: output past [`MAX_CAPTURE`] is counted, not kept, so
//!   a chatty command never dies of `SIGPIPE` because loki stopped listening.
//! - The call returns when the child itself exits. Background children that still hold
//!   the pipes (`sleep 400 & echo started`) do not hold the call up: they are listed in
//!   the result, their output keeps being drained, and they are killed with the group
//!   when the turn ends ([`Background`]). A job started with `setsid` leaves the group and
//!   is kept.

use std::process::ExitStatus;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;

use super::{ToolEnv, ToolError};

/// Most output kept from one stream, in bytes; the rest is read and counted.
pub(super) const MAX_CAPTURE: usize = 8 * 1024 * 1024;

/// How long the pipes are still read after the child exited, for what it wrote just
/// before exiting (reached only when a background child holds a pipe open).
const GRACE: Duration = Duration::from_millis(300);

/// One output stream: its first [`MAX_CAPTURE`] bytes and how many there were.
#[derive(Debug, Default)]
pub(super) struct Captured {
    pub bytes: Vec<u8>,
    pub total: u64,
}

impl Captured {
    /// The kept bytes as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }

    /// A note when bytes were dropped.
    pub fn note(&self, stream: &str) -> Option<String> {
        (self.total > self.bytes.len() as u64).then(|| {
            format!(
                "[{stream}: {} bytes written, only the first {} kept]",
                self.total,
                self.bytes.len()
            )
        })
    }
}

/// How a child process ended.
#[derive(Debug)]
pub(super) struct Finished {
    pub status: ExitStatus,
    pub stdout: Captured,
    pub stderr: Captured,
    /// Processes of its group still running after it exited (`pid command`).
    pub leftovers: Vec<String>,
}

impl Finished {
    /// Notes to put before the result: dropped output, background processes.
    pub fn notes(&self) -> Vec<String> {
        let mut notes: Vec<String> = [self.stdout.note("stdout"), self.stderr.note("stderr")]
            .into_iter()
            .flatten()
            .collect();
        if !self.leftovers.is_empty() {
            notes.push(format!(
                "[still running in the background, stopped when this turn ends (start a job with `setsid` to keep it): {}]",
                self.leftovers.join("; ")
            ));
        }
        notes
    }
}

/// Spawns `command` (stdin closed, stdout and stderr piped, its own process group) and
/// waits for it within the tool timeout. `what` names it in messages.
pub(super) async fn run(
    command: tokio::process::Command,
    env: &ToolEnv<'_>,
    what: &str,
) -> Result<Finished, ToolError> {
    let mut child = spawn_grouped(command, true)?;
    let group = KillGroup(child.id());
    let out = Arc::new(Mutex::new(Captured::default()));
    let err = Arc::new(Mutex::new(Captured::default()));
    let drain = {
        let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
        let (out, err) = (Arc::clone(&out), Arc::clone(&err));
        async move {
            tokio::join!(read_into(stdout, &out), read_into(stderr, &err));
        }
    };
    let mut drain = Box::pin(drain);
    let waited = async {
        let mut drained = false;
        let status = loop {
            tokio::select! {
                status = child.wait() => break status,
                () = &mut drain, if !drained => drained = true,
            }
        };
        if !drained {
            drained = tokio::time::timeout(GRACE, &mut drain).await.is_ok();
        }
        (status, drained)
    };
    let (status, drained) = tokio::select! {
        done = waited => done,
        () = tokio::time::sleep(env.timeout) => {
            return Err(ToolError::Failed(format!(
                "{what} did not finish within {}s and was stopped",
                env.timeout.as_secs()
            )));
        }
        () = env.cancel.cancelled() => return Err(ToolError::Cancelled),
    };
    let status = status.map_err(|e| ToolError::Failed(e.to_string()))?;
    let leftovers = group.0.map(members).unwrap_or_default();
    if leftovers.is_empty() {
        group.finished();
    } else {
        env.background.adopt(group);
    }
    if !drained {
        // Someone still holds a pipe: keep reading (so it is not killed by SIGPIPE) until
        // it closes or the turn ends.
        env.background.keep_draining(tokio::spawn(drain));
    }
    let take = |c: &Arc<Mutex<Captured>>| {
        c.lock()
            .map(|mut c| std::mem::take(&mut *c))
            .unwrap_or_default()
    };
    Ok(Finished {
        status,
        stdout: take(&out),
        stderr: take(&err),
        leftovers,
    })
}

/// Spawns `command` with stdin closed, stdout and stderr piped, in a process group of
/// its own (killed with the child when `kill_on_drop`).
pub(super) fn spawn_grouped(
    mut command: tokio::process::Command,
    kill_on_drop: bool,
) -> Result<tokio::process::Child, ToolError> {
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(kill_on_drop);
    #[cfg(unix)]
    command.process_group(0);
    command.spawn().map_err(|e| {
        ToolError::Failed(format!(
            "cannot start `{}`: {e}",
            command.as_std().get_program().to_string_lossy()
        ))
    })
}

/// Reads `pipe` to the end into `into`, keeping at most [`MAX_CAPTURE`] bytes.
async fn read_into<R: tokio::io::AsyncRead + Unpin>(pipe: Option<R>, into: &Mutex<Captured>) {
    let Some(mut pipe) = pipe else { return };
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        if let Ok(mut captured) = into.lock() {
            let room = MAX_CAPTURE.saturating_sub(captured.bytes.len());
            captured.bytes.extend_from_slice(&buf[..n.min(room)]);
            captured.total += n as u64;
        }
    }
}

/// Live (not zombie) processes in process group `pgid`, as `pid command`.
fn members(pgid: u32) -> Vec<String> {
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        && rustix::process::test_kill_process_group(pid).is_err()
    {
        return Vec::new();
    }
    #[cfg(target_os = "linux")]
    {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let mut found = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // `pid (comm) state ppid pgrp …`; comm may contain spaces and parentheses.
            let Some((_, rest)) = stat.rsplit_once(')') else {
                continue;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            if fields.len() < 3 || fields[0] == "Z" || fields[2] != pgid.to_string() {
                continue;
            }
            let command = std::fs::read(entry.path().join("cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .trim()
                        .to_string()
                })
                .unwrap_or_default();
            found.push(format!("{pid} {command}"));
        }
        found.sort();
        found
    }
    #[cfg(all(unix, not(target_os = "linux")))]
    {
        let Ok(out) = std::process::Command::new("ps")
            .args(["-A", "-o", "pid=,pgid=,stat=,command="])
            .stderr(std::process::Stdio::null())
            .output()
        else {
            return Vec::new();
        };
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| {
                let mut words = line.split_whitespace();
                let pid = words.next()?;
                let group = words.next()?;
                let state = words.next()?;
                (group == pgid.to_string() && !state.starts_with('Z'))
                    .then(|| format!("{pid} {}", words.collect::<Vec<_>>().join(" ")))
            })
            .collect()
    }
    #[cfg(not(unix))]
    {
        let _ = pgid;
        Vec::new()
    }
}

/// Kills a child's process group when dropped before it finished (timeout, Ctrl-C).
pub(super) struct KillGroup(pub(super) Option<u32>);

impl KillGroup {
    /// The group ended normally: nothing to kill.
    pub(super) fn finished(mut self) {
        self.0 = None;
    }
}

impl Drop for KillGroup {
    fn drop(&mut self) {
        if let Some(pgid) = self.0.take() {
            crate::process_group::kill(pgid);
        }
    }
}

/// Process groups and pipe readers that outlive their tool call: stopped when the turn
/// that started them ends (when this is dropped).
#[derive(Debug, Default)]
pub struct Background {
    groups: Mutex<Vec<KillGroupHandle>>,
    drains: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

/// A [`KillGroup`] held for the end of the turn.
#[derive(Debug)]
struct KillGroupHandle(u32);

impl Background {
    fn adopt(&self, mut group: KillGroup) {
        if let (Some(pgid), Ok(mut groups)) = (group.0.take(), self.groups.lock()) {
            groups.push(KillGroupHandle(pgid));
        }
    }

    fn keep_draining(&self, task: tokio::task::JoinHandle<()>) {
        if let Ok(mut drains) = self.drains.lock() {
            drains.push(task);
        }
    }

    /// Kills every adopted process group and stops reading their pipes.
    pub fn stop_all(&self) {
        if let Ok(mut groups) = self.groups.lock() {
            for group in groups.drain(..) {
                crate::process_group::kill(group.0);
            }
        }
        if let Ok(mut drains) = self.drains.lock() {
            for task in drains.drain(..) {
                task.abort();
            }
        }
    }
}

impl Drop for Background {
    fn drop(&mut self) {
        self.stop_all();
    }
}
