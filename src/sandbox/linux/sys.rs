//! The four system calls the sandbox needs that no safe wrapper offers: `clone` into new
//! namespaces, `mount_setattr`, `close_range` and bringing the loopback interface up.
//!
//! Each is called only by the sandbox's wrapper process (`loki --sandbox-exec`), which is
//! single-threaded from its first instruction to its `exec`: nothing here runs inside a
//! loki that has started its async runtime.

#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

fn check(result: libc::c_long) -> io::Result<libc::c_long> {
    if result == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

/// Which side of a [`clone`] the caller is on.
pub(super) enum Forked {
    /// In the child.
    Child,
    /// In the parent, with the child's pid.
    Parent(rustix::process::Pid),
}

/// `clone(flags | SIGCHLD)` as a `fork` into new namespaces (`flags` are `CLONE_NEW*`).
pub(super) fn clone(flags: libc::c_int) -> io::Result<Forked> {
    let flags = libc::c_ulong::try_from(flags | libc::SIGCHLD).unwrap_or_default();
    // SAFETY: with no new stack (0) the child continues on a copy of the parent's memory,
    // as after `fork`; the wrapper is single-threaded, so no lock can be held by a thread
    // that does not exist in the child, which may then allocate and make any call before
    // it execs. The remaining arguments (parent/child tid pointers, TLS) are unused.
    let pid =
        check(unsafe { libc::syscall(libc::SYS_clone, flags, 0usize, 0usize, 0usize, 0usize) })?;
    Ok(
        match i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
        {
            Some(pid) => Forked::Parent(pid),
            None => Forked::Child,
        },
    )
}

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// `MOUNT_ATTR_RDONLY`.
const MOUNT_ATTR_RDONLY: u64 = 1;
/// `AT_RECURSIVE`.
const AT_RECURSIVE: libc::c_uint = 0x8000;

/// Makes the mount at `path` (and, with `recursive`, every mount below it) read-only
/// (`read_only`) or writable again.
pub(super) fn set_read_only(path: &Path, read_only: bool, recursive: bool) -> io::Result<()> {
    let path = CString::new(path.as_os_str().as_bytes())?;
    let attr = MountAttr {
        attr_set: if read_only { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if read_only { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { AT_RECURSIVE } else { 0 };
    // SAFETY: `path` is NUL-terminated and `attr` is a `struct mount_attr` whose size is
    // passed with it; the kernel only reads both.
    check(unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            &raw const attr,
            std::mem::size_of::<MountAttr>(),
        )
    })
    .map(drop)
}

/// Marks every descriptor from 3 up close-on-exec, whoever opened it.
pub(super) fn cloexec_from_3() -> io::Result<()> {
    // SAFETY: `close_range` with `CLOSE_RANGE_CLOEXEC` closes nothing now; it only sets
    // a flag on descriptors, so no owner of one is left holding a closed descriptor.
    check(unsafe {
        libc::syscall(
            libc::SYS_close_range,
            3u32,
            u32::MAX,
            libc::CLOSE_RANGE_CLOEXEC,
        )
    })
    .map(drop)
}

/// Brings `lo` up in a fresh network namespace, so programs can still talk to
/// themselves over 127.0.0.1.
pub(super) fn loopback_up() -> io::Result<()> {
    let socket = rustix::net::socket(
        rustix::net::AddressFamily::INET,
        rustix::net::SocketType::DGRAM,
        None,
    )?;
    // SAFETY: an all-zero `ifreq` is a valid value (a C struct of integers and arrays).
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *slot = *byte as libc::c_char;
    }
    request.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_LOOPBACK | libc::IFF_RUNNING) as i16;
    use std::os::fd::AsRawFd;
    // The request's type is the C library's: `c_ulong` with glibc, `c_int` with musl (the
    // static build of deploy/Containerfile).
    let set_flags = libc::SIOCSIFFLAGS as _;
    // SAFETY: SIOCSIFFLAGS reads one `ifreq`, which lives until the call returns.
    check(unsafe { libc::ioctl(socket.as_raw_fd(), set_flags, &raw mut request) }.into()).map(drop)
}
