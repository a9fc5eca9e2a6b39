//! The second layer: Landlock, the kernel's unprivileged access control, which holds
//! even where the namespaces are missing and whatever the process's capabilities.
//!
//! - Every directory may be listed; every file may be read and run, except the denied
//!   paths. Landlock only grants, so "everything but" is granted entry by entry: each
//!   directory on the way to a denied path gets rules for its other entries, never for
//!   itself. Symbolic links get no rule (what they point to is checked).
//! - `/dev` only for `null`, `zero`, `full`, `random`, `urandom`, and the command's own
//!   `/dev/shm` and pseudo-terminals when the namespaces gave it those: never the user's
//!   terminal.
//! - The writable roots: everything, connecting to Unix sockets included (Landlock v9).
//! - Scopes (v6): no signals to processes outside, no abstract Unix sockets outside.

use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, BitFlags, LandlockStatus, PathBeneath, Ruleset, RulesetAttr,
    RulesetCreated, RulesetCreatedAttr, RulesetStatus, Scope,
};
use rustix::fs::{Mode, OFlags};

use super::namespaces::View;
use crate::sandbox::{Policy, SandboxError};

/// The newest rights this build asks for; older kernels enforce what they know.
const ABI_WANTED: ABI = ABI::V9;

/// Devices any command may read and write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Restricts this process (and what it execs) to `policy`; the ABI version in force, 0
/// when the kernel has no Landlock.
pub(super) fn restrict(policy: &Policy, view: View) -> Result<u8, SandboxError> {
    let read = AccessFs::from_read(ABI_WANTED);
    let all = AccessFs::from_all(ABI_WANTED);
    let mut ruleset = Ruleset::default()
        .handle_access(all)
        .and_then(|r| r.scope(Scope::from_all(ABI_WANTED)))
        .and_then(Ruleset::create)
        .map_err(|e| SandboxError::layer("Landlock", e))?;
    let mut denied: Vec<&Path> = policy.deny_read.iter().map(PathBuf::as_path).collect();
    denied.push(Path::new("/dev"));
    match &policy.readable {
        None => {
            ruleset = add(ruleset, Path::new("/"), AccessFs::ReadDir.into())?;
            ruleset = grant_all_but(ruleset, Path::new("/"), &denied, read)?;
        }
        Some(roots) => {
            for root in roots {
                ruleset = if denied.iter().any(|d| d.starts_with(root)) {
                    let ruleset = add(ruleset, root, AccessFs::ReadDir.into())?;
                    grant_all_but(ruleset, root, &denied, read)?
                } else {
                    add(ruleset, root, read)?
                };
            }
        }
    }
    for device in DEVICES {
        ruleset = add(
            ruleset,
            Path::new(device),
            AccessFs::ReadFile | AccessFs::WriteFile,
        )?;
    }
    if view.ptys {
        let pty = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::IoctlDev;
        ruleset = add(ruleset, Path::new("/dev/ptmx"), pty)?;
        ruleset = add(ruleset, Path::new("/dev/pts"), pty | AccessFs::ReadDir)?;
    }
    if view.shm {
        ruleset = add(ruleset, Path::new("/dev/shm"), all)?;
    }
    for root in &policy.writable {
        ruleset = add(ruleset, root, all)?;
    }
    let status = ruleset
        .restrict_self()
        .map_err(|e| SandboxError::layer("Landlock", e))?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Ok(0);
    }
    Ok(match status.landlock {
        LandlockStatus::Available { effective_abi, .. } => effective_abi as u8,
        _ => 0,
    })
}

/// Grants `access` beneath every entry of `dir` but the denied paths, descending into
/// the directories that hold one.
fn grant_all_but(
    mut ruleset: RulesetCreated,
    dir: &Path,
    denied: &[&Path],
    access: BitFlags<AccessFs>,
) -> Result<RulesetCreated, SandboxError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(ruleset);
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if denied.contains(&path.as_path()) {
            continue;
        }
        let holds_denied = denied.iter().any(|d| d.starts_with(&path));
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if holds_denied && is_dir {
            ruleset = grant_all_but(ruleset, &path, denied, access)?;
        } else {
            ruleset = add(ruleset, &path, access)?;
        }
    }
    Ok(ruleset)
}

/// Adds a rule for `path` (not followed when it is a symbolic link: such entries get no
/// rule); a path that cannot be opened is skipped.
fn add(
    ruleset: RulesetCreated,
    path: &Path,
    access: BitFlags<AccessFs>,
) -> Result<RulesetCreated, SandboxError> {
    let Some(fd) = open_path(path) else {
        return Ok(ruleset);
    };
    let is_dir = rustix::fs::fstat(&fd)
        .map(|st| rustix::fs::FileType::from_raw_mode(st.st_mode))
        .is_ok_and(|t| t == rustix::fs::FileType::Directory);
    // Rights that only make sense on directories are refused on files.
    let access = if is_dir {
        access
    } else {
        access & AccessFs::from_file(ABI_WANTED)
    };
    if access.is_empty() {
        return Ok(ruleset);
    }
    ruleset
        .add_rule(PathBeneath::new(fd, access))
        .map_err(|e| SandboxError::layer("Landlock", format!("{}: {e}", path.display())))
}

fn open_path(path: &Path) -> Option<OwnedFd> {
    let fd = rustix::fs::open(
        path,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let is_link = rustix::fs::fstat(&fd)
        .map(|st| rustix::fs::FileType::from_raw_mode(st.st_mode))
        .is_ok_and(|t| t == rustix::fs::FileType::Symlink);
    (!is_link).then_some(fd)
}
