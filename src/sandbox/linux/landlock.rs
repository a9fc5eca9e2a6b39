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
/// when the kernel has no Landlock. With `namespaces`, the denied paths are already
/// blanked out of the command's view, so reads are granted below `/` but `/dev` (a few
/// rules); without, Landlock alone keeps them out, entry by entry.
pub(super) fn restrict(policy: &Policy, view: View, namespaces: bool) -> Result<u8, SandboxError> {
    let read = AccessFs::from_read(ABI_WANTED);
    let all = AccessFs::from_all(ABI_WANTED);
    let mut ruleset = Ruleset::default()
        .handle_access(all)
        .and_then(|r| r.scope(Scope::from_all(ABI_WANTED)))
        .and_then(Ruleset::create)
        .map_err(|e| SandboxError::layer("Landlock", e))?;
    let mut denied: Vec<&Path> = if namespaces {
        Vec::new()
    } else {
        policy.deny_read.iter().map(PathBuf::as_path).collect()
    };
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
        // What a link points to is checked where it lands: links get no rule.
        if denied.contains(&path.as_path()) || entry.file_type().is_ok_and(|t| t.is_symlink()) {
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
    let Some((fd, is_dir)) = open_path(path) else {
        return Ok(ruleset);
    };
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

/// `path` opened without following it, and whether it is a directory; `None` for a
/// symbolic link or what cannot be opened.
fn open_path(path: &Path) -> Option<(OwnedFd, bool)> {
    let fd = rustix::fs::open(
        path,
        OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok()?;
    let kind = rustix::fs::fstat(&fd)
        .map(|st| rustix::fs::FileType::from_raw_mode(st.st_mode))
        .ok()?;
    (kind != rustix::fs::FileType::Symlink).then_some((fd, kind == rustix::fs::FileType::Directory))
}
