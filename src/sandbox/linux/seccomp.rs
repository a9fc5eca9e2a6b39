//! The third layer: a seccomp filter for what neither the namespaces nor Landlock cover.
//!
//! Always refused (`EPERM`):
//! - `ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)`: typing into a terminal;
//! - `ptrace`, `process_vm_readv`/`writev`: reading or steering other processes;
//! - mounting, new namespaces (`unshare`, `setns`, `clone` with `CLONE_NEW*`): remaking
//!   the view; `clone3` answers `ENOSYS` so C libraries fall back to `clone`, whose flags
//!   can be checked;
//! - `io_uring_*`: it performs opens and connects this filter would never see;
//! - the kernel keyring, BPF, perf events, `userfaultfd`, modules, `kexec`, `reboot`,
//!   swap, accounting, `open_by_handle_at`.
//!
//! Refused only when a layer that would do it better is missing:
//! - without a network namespace and with the network off: sockets other than Unix ones;
//! - without namespaces (no hidden sockets) and before Landlock v9: Unix sockets too
//!   (`socketpair` still works);
//! - without namespaces (no read-only view): `chmod`, `chown`, `utime`, `setxattr` and
//!   their relatives, everywhere — they cannot be told apart by path here.

use std::collections::BTreeMap;

use crate::sandbox::SandboxError;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

/// What the filter must make up for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Needs {
    /// The namespaces are in place.
    pub namespaces: bool,
    /// The command may use the network.
    pub network: bool,
    /// Landlock holds connections to Unix sockets (v9).
    pub landlock_unix: bool,
}

/// `TIOCSTI` and `TIOCLINUX` (the same on every architecture loki builds a filter for).
const TYPING_IOCTLS: [u64; 2] = [0x5412, 0x541C];

/// Syscalls numbered alike on every 64-bit architecture (the generic table, 424 and up).
const SYS_FCHMODAT2: i64 = 452;
const SYS_SETXATTRAT: i64 = 463;
const SYS_REMOVEXATTRAT: i64 = 466;

/// Installs the filters; `Ok(false)` on an architecture this build has no table for.
pub(super) fn apply(needs: Needs) -> Result<bool, SandboxError> {
    let Ok(arch) = TargetArch::try_from(std::env::consts::ARCH) else {
        return Ok(false);
    };
    let refused = compile(refused_rules(needs)?, libc::EPERM, arch)?;
    let unsupported = compile(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        libc::ENOSYS,
        arch,
    )?;
    seccompiler::apply_filter(&refused).map_err(|e| SandboxError::layer("seccomp", e))?;
    seccompiler::apply_filter(&unsupported).map_err(|e| SandboxError::layer("seccomp", e))?;
    Ok(true)
}

fn compile(
    rules: BTreeMap<i64, Vec<SeccompRule>>,
    errno: i32,
    arch: TargetArch,
) -> Result<BpfProgram, SandboxError> {
    let errno = u32::try_from(errno).unwrap_or(1);
    SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(errno),
        arch,
    )
    .and_then(BpfProgram::try_from)
    .map_err(|e| SandboxError::layer("seccomp", e))
}

fn arg(
    index: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, SandboxError> {
    SeccompCondition::new(index, len, op, value).map_err(|e| SandboxError::layer("seccomp", e))
}

fn rule(conditions: Vec<SeccompCondition>) -> Result<SeccompRule, SandboxError> {
    SeccompRule::new(conditions).map_err(|e| SandboxError::layer("seccomp", e))
}

/// Syscall → the rules under which it is refused (none: always).
fn refused_rules(needs: Needs) -> Result<BTreeMap<i64, Vec<SeccompRule>>, SandboxError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for syscall in [
        libc::SYS_ptrace,
        libc::SYS_process_vm_readv,
        libc::SYS_process_vm_writev,
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_move_mount,
        libc::SYS_open_tree,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_unshare,
        libc::SYS_setns,
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_keyctl,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_bpf,
        libc::SYS_perf_event_open,
        libc::SYS_userfaultfd,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_open_by_handle_at,
    ] {
        rules.insert(syscall, Vec::new());
    }
    let dword = SeccompCmpArgLen::Dword;
    let ioctls = TYPING_IOCTLS
        .into_iter()
        .map(|request| rule(vec![arg(1, dword.clone(), SeccompCmpOp::Eq, request)?]))
        .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_ioctl, ioctls);
    let namespaces = [
        libc::CLONE_NEWUSER,
        libc::CLONE_NEWNS,
        libc::CLONE_NEWPID,
        libc::CLONE_NEWNET,
        libc::CLONE_NEWUTS,
        libc::CLONE_NEWIPC,
        libc::CLONE_NEWCGROUP,
    ]
    .into_iter()
    .map(|flag| {
        let flag = u64::try_from(flag).unwrap_or_default();
        rule(vec![arg(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(flag),
            flag,
        )?])
    })
    .collect::<Result<Vec<_>, _>>()?;
    rules.insert(libc::SYS_clone, namespaces);
    let unix = u64::try_from(libc::AF_UNIX).unwrap_or_default();
    if !needs.namespaces && !needs.landlock_unix {
        // No way to hide the sockets outside: no new sockets at all.
        rules.insert(libc::SYS_socket, Vec::new());
    } else if !needs.namespaces && !needs.network {
        rules.insert(
            libc::SYS_socket,
            vec![rule(vec![arg(0, dword, SeccompCmpOp::Ne, unix)?])?],
        );
    }
    if !needs.namespaces {
        for syscall in attribute_changes() {
            rules.insert(syscall, Vec::new());
        }
        // `futimens(fd)` (no path) stays: `touch` of a file it just created uses it.
        rules.insert(
            libc::SYS_utimensat,
            vec![rule(vec![arg(
                1,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::Ne,
                0,
            )?])?],
        );
    }
    Ok(rules)
}

/// The calls that change a file's mode, owner, times or extended attributes by path or
/// by descriptor (`utimensat` aside).
fn attribute_changes() -> Vec<i64> {
    let mut calls = vec![
        libc::SYS_fchmod,
        libc::SYS_fchmodat,
        SYS_FCHMODAT2,
        libc::SYS_fchown,
        libc::SYS_fchownat,
        libc::SYS_setxattr,
        libc::SYS_lsetxattr,
        libc::SYS_fsetxattr,
        libc::SYS_removexattr,
        libc::SYS_lremovexattr,
        libc::SYS_fremovexattr,
        SYS_SETXATTRAT,
        SYS_REMOVEXATTRAT,
    ];
    #[cfg(target_arch = "x86_64")]
    calls.extend([
        libc::SYS_chmod,
        libc::SYS_chown,
        libc::SYS_lchown,
        libc::SYS_utime,
        libc::SYS_utimes,
        libc::SYS_futimesat,
    ]);
    calls
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_combination_compiles() {
        let Ok(arch) = TargetArch::try_from(std::env::consts::ARCH) else {
            return;
        };
        for namespaces in [false, true] {
            for network in [false, true] {
                for landlock_unix in [false, true] {
                    let needs = Needs {
                        namespaces,
                        network,
                        landlock_unix,
                    };
                    let rules = refused_rules(needs).unwrap();
                    assert_eq!(rules.contains_key(&libc::SYS_fchmodat), !namespaces);
                    assert!(compile(rules, libc::EPERM, arch).is_ok());
                }
            }
        }
    }
}
