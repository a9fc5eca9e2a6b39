//! Hooks, tool commands and language servers run in a process group of their own, so
//! that stopping one stops what it started too (a shell's children, a server's workers).

/// Kills every process in group `pgid` (on Unix; elsewhere nothing). Only call it while
/// the group's leader is not reaped: until then its id, which names the group, cannot
/// have been reused.
pub fn kill(pgid: u32) {
    #[cfg(unix)]
    if let Some(pid) = i32::try_from(pgid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = pgid;
}

/// Kills the group `child` leads, unless it is reaped already (its id is then gone, and
/// the number may name another group by now).
pub fn kill_led_by(child: &tokio::process::Child) {
    if let Some(pgid) = child.id() {
        kill(pgid);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::process::{CommandExt, ExitStatusExt};

    #[test]
    fn killing_a_group_kills_its_leader() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        super::kill(child.id());
        let status = child.wait().unwrap();
        assert_eq!(status.signal(), Some(9));
    }
}
