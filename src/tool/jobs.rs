//! Background jobs: commands `execute_command` starts with `background: true` (a dev
//! server, a test watcher) run on while the conversation goes on. The call returns a job
//! id at once; `job_output` reads what the job printed since the last read (optionally
//! only the lines matching a pattern) and `job_kill` stops it. A job runs in its own
//! process group, inside the conversation's sandbox, with the same environment as any
//! command; its output goes to a file in a private directory, bounded to
//! [`MAX_LOG_BYTES`] (later output is counted, not kept). Every job still running is
//! stopped, its process group and all, when the conversation closes (or its [`Jobs`] is
//! dropped), and the directory is removed.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

use super::ToolError;

/// Output of one job kept on disk; what comes after is counted and dropped.
pub const MAX_LOG_BYTES: u64 = 16 * 1024 * 1024;

/// At most this much output is returned by one `job_output` call; the rest waits for the
/// next.
pub const MAX_READ_BYTES: usize = 32 * 1024;

/// The background jobs of one conversation.
#[derive(Debug, Default)]
pub struct Jobs {
    jobs: Mutex<Vec<Job>>,
    dir: Mutex<Option<PathBuf>>,
}

#[derive(Debug)]
struct Job {
    id: u32,
    command: String,
    pid: Option<u32>,
    started: Instant,
    log: PathBuf,
    /// How far `job_output` has read the log.
    read: u64,
    progress: Arc<Mutex<Progress>>,
}

/// What the job's reader task learnt so far.
#[derive(Debug, Default)]
struct Progress {
    /// Bytes written to the log.
    kept: u64,
    /// Bytes dropped past [`MAX_LOG_BYTES`].
    dropped: u64,
    /// The exit status, once the leader exited: a code, or the signal.
    exit: Option<String>,
    /// Stopped by `job_kill` or the conversation's end.
    killed: bool,
}

/// One row of [`Jobs::list`] (the REPL's `.jobs`).
#[derive(Debug, Clone, PartialEq)]
pub struct JobInfo {
    /// Its id.
    pub id: u32,
    /// The command line.
    pub command: String,
    /// The group leader's process id.
    pub pid: Option<u32>,
    /// `running`, `exited with code N`, `killed`.
    pub state: String,
    /// Seconds since it started.
    pub seconds: u64,
    /// Bytes of output it printed.
    pub output_bytes: u64,
}

impl Jobs {
    /// Whether any job was started (the job tools are declared from then on).
    pub fn any(&self) -> bool {
        self.jobs.lock().is_ok_and(|jobs| !jobs.is_empty())
    }

    /// Starts `command` (its stdin closed, stdout and stderr into the job's log, its own
    /// process group); the text returned to the model.
    pub fn start(
        &self,
        command: tokio::process::Command,
        shown: &str,
    ) -> Result<String, ToolError> {
        let dir = self.dir()?;
        let mut jobs = self.held()?;
        let id = jobs.last().map_or(1, |j| j.id + 1);
        let log = dir.join(format!("job-{id}.log"));
        // Not killed on drop: the job outlives the call; [`Jobs`] stops it.
        let mut child = super::process::spawn_grouped(command, false)?;
        let pid = child.id();
        let progress = Arc::new(Mutex::new(Progress::default()));
        let file = std::fs::OpenOptions::new()
            .create_new(true)
            .write(true)
            .open(&log)
            .map_err(|e| ToolError::Failed(format!("cannot create the job's log: {e}")))?;
        let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
        let task_progress = Arc::clone(&progress);
        tokio::spawn(async move {
            let file = tokio::sync::Mutex::new(tokio::fs::File::from_std(file));
            tokio::join!(
                copy_bounded(stdout, &file, &task_progress),
                copy_bounded(stderr, &file, &task_progress),
            );
            let exit = match child.wait().await {
                Ok(status) => exit_text(status),
                Err(e) => format!("unknown ({e})"),
            };
            if let Ok(mut p) = task_progress.lock() {
                p.exit = Some(exit);
            }
        });
        jobs.push(Job {
            id,
            command: shown.to_string(),
            pid,
            started: Instant::now(),
            log,
            read: 0,
            progress,
        });
        let pid = pid.map_or_else(String::new, |p| format!(", process {p}"));
        Ok(format!(
            "started job {id}{pid}: `{shown}`. It runs until it ends, job_kill stops it, or the \
             conversation closes; read its output with job_output."
        ))
    }

    /// The output job `id` printed since the last read (only the lines matching `filter`
    /// when given), and its state.
    pub fn output(&self, id: u32, filter: Option<&regex::Regex>) -> Result<String, ToolError> {
        let mut jobs = self.held()?;
        let job = find(&mut jobs, id)?;
        let (kept, dropped, state) = job.snapshot();
        let (bytes, next) = read_from(&job.log, job.read, kept)?;
        let more = kept - next;
        job.read = next;
        let mut text = String::from_utf8_lossy(&bytes).into_owned();
        if let Some(filter) = filter {
            text = text
                .lines()
                .filter(|line| filter.is_match(line))
                .collect::<Vec<_>>()
                .join("\n");
        }
        let mut out = format!("[job {id}: {state}]\n");
        if text.trim().is_empty() {
            out.push_str(if filter.is_some() {
                "(no new lines match)"
            } else {
                "(no new output)"
            });
        } else {
            out.push_str(text.trim_end());
        }
        if more > 0 {
            out.push_str(&format!(
                "\n[{more} more bytes of output: call job_output again]"
            ));
        }
        if dropped > 0 {
            out.push_str(&format!(
                "\n[{dropped} bytes past the job's {} MiB log were dropped]",
                MAX_LOG_BYTES / (1024 * 1024)
            ));
        }
        Ok(out)
    }

    /// Stops job `id` (its whole process group).
    pub fn kill(&self, id: u32) -> Result<String, ToolError> {
        let mut jobs = self.held()?;
        let job = find(&mut jobs, id)?;
        let (_, _, state) = job.snapshot();
        // What the job left running in its group goes too, even once the job exited.
        job.stop();
        if state != "running" {
            return Ok(format!("job {id} is not running: {state}"));
        }
        Ok(format!("job {id} (`{}`) was stopped", job.command))
    }

    /// Every job, for `.jobs`.
    pub fn list(&self) -> Vec<JobInfo> {
        let Ok(jobs) = self.jobs.lock() else {
            return Vec::new();
        };
        jobs.iter()
            .map(|job| {
                let (kept, dropped, state) = job.snapshot();
                JobInfo {
                    id: job.id,
                    command: job.command.clone(),
                    pid: job.pid,
                    state,
                    seconds: job.started.elapsed().as_secs(),
                    output_bytes: kept + dropped,
                }
            })
            .collect()
    }

    /// Stops every job still running and removes their logs.
    pub fn stop_all(&self) {
        if let Ok(jobs) = self.jobs.lock() {
            for job in jobs.iter() {
                job.stop();
            }
        }
        if let Ok(mut dir) = self.dir.lock()
            && let Some(dir) = dir.take()
        {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    /// The job list, held.
    fn held(&self) -> Result<std::sync::MutexGuard<'_, Vec<Job>>, ToolError> {
        self.jobs.lock().map_err(|_| unusable())
    }

    /// The private directory of this conversation's logs, made on first use.
    fn dir(&self) -> Result<PathBuf, ToolError> {
        let mut dir = self.dir.lock().map_err(|_| unusable())?;
        if let Some(dir) = dir.as_ref() {
            return Ok(dir.clone());
        }
        let made = private_dir(&std::env::temp_dir())
            .map_err(|e| ToolError::Failed(format!("cannot make the jobs' directory: {e}")))?;
        *dir = Some(made.clone());
        Ok(made)
    }
}

impl Drop for Jobs {
    fn drop(&mut self) {
        self.stop_all();
    }
}

impl Job {
    /// Bytes kept, bytes dropped, and the state as words.
    fn snapshot(&self) -> (u64, u64, String) {
        let Ok(p) = self.progress.lock() else {
            return (0, 0, "unknown".into());
        };
        let state = match (&p.exit, p.killed) {
            (_, true) => "stopped".to_string(),
            (Some(exit), false) => format!("exited {exit}"),
            (None, false) => "running".to_string(),
        };
        (p.kept, p.dropped, state)
    }

    /// Kills the job's process group; a job still running is marked stopped.
    fn stop(&self) {
        if let Some(pid) = self.pid {
            crate::process_group::kill(pid);
        }
        if let Ok(mut p) = self.progress.lock()
            && p.exit.is_none()
        {
            p.killed = true;
        }
    }
}

/// Job `id` of the list.
fn find(jobs: &mut [Job], id: u32) -> Result<&mut Job, ToolError> {
    jobs.iter_mut().find(|j| j.id == id).ok_or_else(|| {
        ToolError::BadArguments(format!("there is no job {id} in this conversation"))
    })
}

/// A lock of the job list (or its directory) that a panicking thread left poisoned.
fn unusable() -> ToolError {
    ToolError::Failed("the job list is unusable".into())
}

/// `with code N`, or `on signal N`.
fn exit_text(status: std::process::ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("with code {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("on signal {signal}");
        }
    }
    "without a code".into()
}

/// Copies `pipe` into `file` until it closes, keeping at most [`MAX_LOG_BYTES`] in all
/// (shared by the job's two pipes).
async fn copy_bounded<R: AsyncRead + Unpin>(
    pipe: Option<R>,
    file: &tokio::sync::Mutex<tokio::fs::File>,
    progress: &Mutex<Progress>,
) {
    let Some(mut pipe) = pipe else { return };
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match pipe.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let mut file = file.lock().await;
        let room = progress
            .lock()
            .map_or(0, |p| MAX_LOG_BYTES.saturating_sub(p.kept));
        let keep = n.min(usize::try_from(room).unwrap_or(usize::MAX));
        let written =
            keep > 0 && file.write_all(&buf[..keep]).await.is_ok() && file.flush().await.is_ok();
        if let Ok(mut p) = progress.lock() {
            if written {
                p.kept += keep as u64;
                p.dropped += (n - keep) as u64;
            } else {
                p.dropped += n as u64;
            }
        }
    }
}

/// At most [`MAX_READ_BYTES`] of `log` from `from` (up to `end`, what was written), and
/// where the next read starts.
fn read_from(log: &Path, from: u64, end: u64) -> Result<(Vec<u8>, u64), ToolError> {
    use std::io::{Read, Seek, SeekFrom};
    if end <= from {
        return Ok((Vec::new(), from));
    }
    let mut file = std::fs::File::open(log)
        .map_err(|e| ToolError::Failed(format!("cannot read the job's log: {e}")))?;
    file.seek(SeekFrom::Start(from))
        .map_err(|e| ToolError::Failed(format!("cannot read the job's log: {e}")))?;
    let want = usize::try_from(end - from)
        .unwrap_or(usize::MAX)
        .min(MAX_READ_BYTES);
    let mut bytes = vec![0u8; want];
    let mut got = 0;
    while got < want {
        match file.read(&mut bytes[got..]) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) => return Err(ToolError::Failed(format!("cannot read the job's log: {e}"))),
        }
    }
    bytes.truncate(got);
    // End on a line (or at least a character) boundary when more follows, so a line is
    // not split between two reads.
    if from + (got as u64) < end
        && let Some(cut) = bytes.iter().rposition(|b| *b == b'\n')
    {
        bytes.truncate(cut + 1);
    }
    let next = from + bytes.len() as u64;
    Ok((bytes, next))
}

/// A new directory only this user can enter, below `base`.
fn private_dir(base: &Path) -> std::io::Result<PathBuf> {
    for _ in 0..16 {
        let dir = base.join(format!(
            "loki-jobs-{}-{:08x}",
            std::process::id(),
            fastrand::u32(..)
        ));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        match builder.create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(
        "no free name for the jobs' directory",
    ))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    fn shell(script: &str) -> tokio::process::Command {
        let mut command = tokio::process::Command::new("/bin/sh");
        command.arg("-c").arg(script);
        command
    }

    async fn until(jobs: &Jobs, id: u32, what: impl Fn(&JobInfo) -> bool) -> JobInfo {
        for _ in 0..200 {
            let info = jobs
                .list()
                .into_iter()
                .find(|j| j.id == id)
                .unwrap_or_else(|| panic!("no job {id}"));
            if what(&info) {
                return info;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!("job {id} never got there: {:?}", jobs.list());
    }

    #[tokio::test]
    async fn output_is_read_once_and_the_state_follows_the_job() {
        let jobs = Jobs::default();
        let started = jobs
            .start(shell("echo one; echo two >&2; exit 3"), "x")
            .unwrap();
        assert!(started.starts_with("started job 1"), "{started}");
        until(&jobs, 1, |j| j.state != "running").await;
        let first = jobs.output(1, None).unwrap();
        assert!(first.contains("[job 1: exited with code 3]"), "{first}");
        assert!(first.contains("one") && first.contains("two"), "{first}");
        let again = jobs.output(1, None).unwrap();
        assert!(again.contains("(no new output)"), "{again}");
    }

    #[tokio::test]
    async fn a_filter_keeps_matching_lines_and_kill_stops_the_group() {
        let jobs = Jobs::default();
        jobs.start(
            shell("echo ready; echo noise; sleep 30 & sleep 30; echo never"),
            "server",
        )
        .unwrap();
        until(&jobs, 1, |j| j.output_bytes >= 12).await;
        let filter = regex::Regex::new("^rea").unwrap();
        let out = jobs.output(1, Some(&filter)).unwrap();
        assert!(out.contains("ready") && !out.contains("noise"), "{out}");
        let pid = jobs.list()[0].pid.unwrap();
        assert!(jobs.kill(1).unwrap().contains("stopped"));
        until(&jobs, 1, |j| j.state == "stopped").await;
        // The whole group is gone, the background `sleep` too.
        for _ in 0..100 {
            let alive = rustix::process::test_kill_process_group(
                rustix::process::Pid::from_raw(pid as i32).unwrap(),
            )
            .is_ok();
            if !alive {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!("process group {pid} survived job_kill");
    }

    #[tokio::test]
    async fn dropping_the_jobs_stops_them_and_removes_the_logs() {
        let jobs = Jobs::default();
        jobs.start(shell("sleep 30"), "sleep").unwrap();
        let pid = jobs.list()[0].pid.unwrap();
        let dir = jobs.dir.lock().unwrap().clone().unwrap();
        assert!(dir.is_dir());
        drop(jobs);
        assert!(!dir.exists());
        let group = rustix::process::Pid::from_raw(pid as i32).unwrap();
        for _ in 0..100 {
            if rustix::process::test_kill_process_group(group).is_err() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        panic!("process group {pid} survived the conversation");
    }

    #[test]
    fn an_unknown_job_is_a_bad_argument() {
        let jobs = Jobs::default();
        assert!(matches!(
            jobs.output(7, None),
            Err(ToolError::BadArguments(_))
        ));
        assert!(matches!(jobs.kill(7), Err(ToolError::BadArguments(_))));
    }
}
