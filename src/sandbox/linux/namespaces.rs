//! The first layer: new user, mount and pid namespaces (and a network namespace when the
//! network is off), in which the command sees
//!
//! - the whole filesystem read-only, except the writable roots (so `chmod`, `chown`,
//!   `touch -d` and `setxattr` outside them fail with `EROFS`, which Landlock cannot stop);
//! - a fresh `/proc` of its own pid namespace: loki and every other process are invisible,
//!   and the last process of the command takes the rest with it;
//! - its own `/dev/shm` and pseudo-terminals, none of the user's;
//! - every denied path and every Unix socket that was listening outside the writable
//!   roots replaced by an unreadable empty file or directory (a tmux server, ssh-agent,
//!   Docker or PostgreSQL behind a socket cannot act for it).
//!
//! The wrapper clones its child straight into the namespaces, maps its own user and group
//! ids to themselves from outside, and only then lets the child go on: when the mapping is
//! refused (some distributions restrict unprivileged user namespaces) the child is killed
//! and the wrapper confines itself with the other layers instead.

use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use rustix::mount::{MountFlags, MountPropagationFlags};

use super::sys::{self, Forked};
use crate::sandbox::Policy;

/// What the namespaces gave the command besides the read-only view.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct View {
    /// A private `/dev/shm`.
    pub shm: bool,
    /// Pseudo-terminals of its own (`/dev/ptmx`, `/dev/pts`).
    pub ptys: bool,
}

/// The paths of the Unix sockets listening in this network namespace
/// (`/proc/net/unix`), read before the command gets a namespace of its own.
pub(super) fn listening_sockets() -> Vec<PathBuf> {
    std::fs::read("/proc/net/unix")
        .map(|table| socket_paths(&String::from_utf8_lossy(&table)))
        .unwrap_or_default()
}

/// The paths of a `/proc/net/unix` table.
fn socket_paths(table: &str) -> Vec<PathBuf> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| {
            // `Num RefCount Protocol Flags Type St Inode Path`; the path may hold spaces.
            let mut rest = line.trim_start();
            for _ in 0..7 {
                let (_, tail) = rest.split_once(char::is_whitespace)?;
                rest = tail.trim_start();
            }
            rest.starts_with('/').then(|| PathBuf::from(rest))
        })
        .collect()
}

/// The child's half of the start: it waits here until the wrapper has mapped its ids.
pub(super) struct Gate(OwnedFd);

impl Gate {
    /// Waits for the wrapper's word; `false` when it gave up (or died).
    pub(super) fn wait(self) -> bool {
        let mut byte = [0u8; 1];
        let mut file = std::fs::File::from(self.0);
        matches!(file.read(&mut byte), Ok(1)) && byte[0] == b'1'
    }
}

/// The child started in new namespaces, as the wrapper sees it.
pub(super) struct Started {
    /// Its pid (in the wrapper's namespace).
    pub pid: rustix::process::Pid,
    go: OwnedFd,
}

impl Started {
    /// Maps the caller's ids into the child's namespace and lets it go on.
    pub(super) fn release(&self) -> io::Result<()> {
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        let proc = PathBuf::from(format!("/proc/{}", self.pid.as_raw_nonzero()));
        match std::fs::write(proc.join("setgroups"), "deny") {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        std::fs::write(proc.join("uid_map"), format!("{uid} {uid} 1\n"))?;
        std::fs::write(proc.join("gid_map"), format!("{gid} {gid} 1\n"))?;
        rustix::io::write(&self.go, b"1")?;
        Ok(())
    }

    /// Gives up on the child (it exits at the closed gate).
    pub(super) fn abandon(self) {
        let pid = self.pid;
        drop(self.go);
        let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
    }
}

/// Clones the caller into new user, mount, pid (and, without `network`, network)
/// namespaces. The parent gets [`Started`]; the child gets the [`Gate`] to wait at.
pub(super) fn clone_into(network: bool) -> io::Result<Result<Started, Gate>> {
    let (gate, go) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let mut flags = libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID;
    if !network {
        flags |= libc::CLONE_NEWNET;
    }
    Ok(match sys::clone(flags)? {
        Forked::Parent(pid) => {
            drop(gate);
            Ok(Started { pid, go })
        }
        Forked::Child => {
            drop(go);
            Err(Gate(gate))
        }
    })
}

/// Builds the command's view of the filesystem (see the module docs). Runs in the child,
/// which holds every capability of its new user namespace until it execs.
pub(super) fn build_view(policy: &Policy, sockets: &[PathBuf], staging: &Path) -> io::Result<View> {
    let at = |what: &str, path: &Path, e: io::Error| {
        io::Error::new(e.kind(), format!("{what} {}: {e}", path.display()))
    };
    rustix::mount::mount_change(
        "/",
        MountPropagationFlags::REC | MountPropagationFlags::PRIVATE,
    )
    .map_err(|e| at("making private", Path::new("/"), e.into()))?;
    for root in &policy.writable {
        rustix::mount::mount_bind_recursive(root, root)
            .map_err(|e| at("binding", root, e.into()))?;
    }
    sys::set_read_only(Path::new("/"), true, true)
        .map_err(|e| at("making read-only", Path::new("/"), e))?;
    for root in &policy.writable {
        // A read-only file system mounted inside a root stays read-only.
        sys::set_read_only(root, false, true)
            .or_else(|_| sys::set_read_only(root, false, false))
            .map_err(|e| at("making writable", root, e))?;
    }
    let hidden = MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC;
    rustix::mount::mount("proc", "/proc", "proc", hidden, None)
        .map_err(|e| at("mounting", Path::new("/proc"), e.into()))?;
    let shm = mount_fresh(
        "tmpfs",
        "/dev/shm",
        MountFlags::NOSUID | MountFlags::NODEV,
        c"mode=1777,size=64m",
    );
    let ptys = mount_fresh(
        "devpts",
        "/dev/pts",
        MountFlags::NOSUID | MountFlags::NOEXEC,
        c"newinstance,ptmxmode=0666,mode=0620",
    ) && rustix::mount::mount_bind("/dev/pts/ptmx", "/dev/ptmx").is_ok();
    let blank = blanks(staging)?;
    for denied in &policy.deny_read {
        let source = if denied.is_dir() {
            &blank.dir
        } else {
            &blank.file
        };
        // A path that went away meanwhile is out of reach anyway.
        if denied.exists() {
            rustix::mount::mount_bind(source, denied)
                .map_err(|e| at("hiding", denied, e.into()))?;
        }
    }
    for socket in sockets {
        if policy.writable.iter().any(|w| socket.starts_with(w)) {
            continue;
        }
        // Sockets whose files are gone, or below a hidden directory, need nothing.
        let _ = rustix::mount::mount_bind(&blank.file, socket);
    }
    Ok(View { shm, ptys })
}

/// An unreadable empty file and directory, on a read-only file system of their own.
struct Blanks {
    file: PathBuf,
    dir: PathBuf,
}

/// Mounts a new `kind` file system (named as its kind) on `target` when that directory
/// exists; whether it was mounted (a missing `/dev/shm` or `/dev/pts` is not an error).
fn mount_fresh(kind: &str, target: &str, flags: MountFlags, data: &std::ffi::CStr) -> bool {
    Path::new(target).is_dir()
        && rustix::mount::mount(kind, target, kind, flags, Some(data)).is_ok()
}

/// Where the blanks are mounted: a directory of the command's temporary directory, named
/// afresh for each command (the wrapper removes it when the command ends).
pub(super) fn staging(temp: &Path) -> PathBuf {
    temp.join(format!(".loki-hidden-{:016x}", fastrand::u64(..)))
}

fn blanks(base: &Path) -> io::Result<Blanks> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    std::fs::DirBuilder::new().mode(0o700).create(base)?;
    rustix::mount::mount(
        "tmpfs",
        base,
        "tmpfs",
        MountFlags::NOSUID | MountFlags::NODEV | MountFlags::NOEXEC,
        Some(c"mode=0700,size=16k"),
    )?;
    let file = base.join("file");
    let dir = base.join("dir");
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o000)
        .open(&file)?;
    std::fs::DirBuilder::new().mode(0o000).create(&dir)?;
    rustix::mount::mount_remount(base, MountFlags::RDONLY, "")?;
    Ok(Blanks { file, dir })
}

#[cfg(test)]
mod tests {
    #[test]
    fn socket_paths_keep_their_spaces_and_skip_abstract_ones() {
        let table = "Num       RefCount Protocol Flags    Type St Inode Path\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 20 /tmp/tmux-0/default\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 21 @/tmp/.X11-unix/X0\n\
            0000000000000000: 00000003 00000000 00000000 0001 03 22\n\
            0000000000000000: 00000002 00000000 00010000 0001 01 23 /run/my app/s.sock\n";
        assert_eq!(
            super::socket_paths(table),
            [
                std::path::PathBuf::from("/tmp/tmux-0/default"),
                std::path::PathBuf::from("/run/my app/s.sock")
            ]
        );
    }
}
