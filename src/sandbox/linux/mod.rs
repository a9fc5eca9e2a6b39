//! Confinement on Linux, in layers, each covering what the others cannot:
//!
//! 1. [`namespaces`]: the wrapper clones a child into new user, mount, pid (and network)
//!    namespaces and builds its view of the filesystem; the wrapper stays outside, waits
//!    and exits as the child did. Where user namespaces are refused the wrapper goes on
//!    alone with the next layers.
//! 2. Capabilities dropped (none survive the `exec`, not even for root), `no_new_privs`.
//! 3. [`landlock`]: which paths may be read, written and run.
//! 4. [`seccomp`]: the system calls neither covers.
//! 5. Every inherited descriptor above stderr closed on `exec`; with the namespaces, a
//!    session of its own, so no controlling terminal.
//!
//! The whole sequence runs in the wrapper process (`loki --sandbox-exec`), single-threaded,
//! before anything else of loki starts.

mod landlock;
mod namespaces;
mod seccomp;
mod sys;

use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::process::ExitCode;

use super::{Layers, Policy, SandboxError};
use namespaces::View;

/// What the wrapper does once confined.
pub(super) enum Then<'a> {
    /// Becomes this program.
    Exec {
        /// The program.
        program: &'a OsStr,
        /// Its arguments.
        args: &'a [OsString],
    },
    /// Prints the layers it got (JSON) and exits.
    Report,
}

/// Confines this process (or a child of it) to `policy` and does `then`. Returns the
/// exit status the wrapper should end with, or why it could not confine.
pub(super) fn confine(policy: &Policy, then: &Then<'_>) -> Result<ExitCode, SandboxError> {
    if !policy.namespaces {
        return finish(policy, Layers::default(), View::default(), then);
    }
    let sockets = namespaces::listening_sockets();
    let staging = namespaces::staging(&policy.temp);
    match namespaces::clone_into(policy.network) {
        Ok(Ok(started)) => match started.release() {
            Ok(()) => {
                let code = wait_as(started.pid);
                let _ = std::fs::remove_dir(&staging);
                Ok(code)
            }
            Err(_) => {
                started.abandon();
                finish(policy, Layers::default(), View::default(), then)
            }
        },
        Ok(Err(gate)) => {
            // In the child: die with the wrapper, from before it lets us go on.
            rustix::process::set_parent_process_death_signal(Some(rustix::process::Signal::KILL))
                .map_err(|e| SandboxError::layer("prctl", e))?;
            if !gate.wait() {
                return Ok(ExitCode::from(super::REFUSED));
            }
            rustix::process::setsid().map_err(|e| SandboxError::layer("setsid", e))?;
            let view = namespaces::build_view(policy, &sockets, &staging)
                .map_err(|e| SandboxError::layer("namespaces", e))?;
            // The working directory was entered before the writable binds were mounted
            // over it: enter it again, through them.
            if let Ok(cwd) = std::env::current_dir() {
                std::env::set_current_dir(&cwd).map_err(|e| {
                    SandboxError::layer("namespaces", format!("{}: {e}", cwd.display()))
                })?;
            }
            if !policy.network {
                sys::loopback_up().map_err(|e| SandboxError::layer("network", e))?;
            }
            let layers = Layers {
                namespaces: true,
                ..Layers::default()
            };
            finish(policy, layers, view, then)
        }
        Err(_) => finish(policy, Layers::default(), View::default(), then),
    }
}

/// Waits for the confined child and ends the way it ended.
fn wait_as(pid: rustix::process::Pid) -> ExitCode {
    use rustix::process::{WaitOptions, waitpid};
    let status = loop {
        match waitpid(Some(pid), WaitOptions::empty()) {
            Ok(Some((_, status))) => break status,
            Err(rustix::io::Errno::INTR) => {}
            _ => return ExitCode::from(super::REFUSED),
        }
    };
    if let Some(code) = status.exit_status() {
        return ExitCode::from(u8::try_from(code).unwrap_or(1));
    }
    if let Some(signal) = status.terminating_signal() {
        // Die of the same signal, so the caller sees "killed by a signal".
        if let Some(signal) = rustix::process::Signal::from_named_raw(signal) {
            let _ = rustix::process::kill_process(rustix::process::getpid(), signal);
        }
        return ExitCode::from(128u8.saturating_add(u8::try_from(signal).unwrap_or(0)));
    }
    ExitCode::from(super::REFUSED)
}

/// The layers after the namespaces, then `then`.
fn finish(
    policy: &Policy,
    mut layers: Layers,
    view: View,
    then: &Then<'_>,
) -> Result<ExitCode, SandboxError> {
    drop_capabilities();
    rustix::thread::set_no_new_privs(true).map_err(|e| SandboxError::layer("no_new_privs", e))?;
    layers.landlock = landlock::restrict(policy, view, layers.namespaces)?;
    layers.seccomp = seccomp::apply(seccomp::Needs {
        namespaces: layers.namespaces,
        network: policy.network,
        landlock_unix: layers.landlock >= 9,
    })?;
    if !layers.confines() {
        return Err(SandboxError::Unconfinable(
            "this kernel offers neither user namespaces nor Landlock (Linux 5.13 or later)".into(),
        ));
    }
    if policy.readable.is_some() && layers.landlock == 0 {
        return Err(SandboxError::Unconfinable(
            "holding reads to the tools' root needs Landlock (Linux 5.13 or later)".into(),
        ));
    }
    sys::cloexec_from_3().map_err(|e| SandboxError::layer("descriptors", e))?;
    match then {
        Then::Report => {
            let json =
                serde_json::to_string(&layers).map_err(|e| SandboxError::layer("report", e))?;
            use std::io::Write;
            writeln!(std::io::stdout(), "{json}").map_err(|e| SandboxError::layer("report", e))?;
            Ok(ExitCode::SUCCESS)
        }
        Then::Exec { program, args } => {
            let e = std::process::Command::new(program).args(*args).exec();
            Err(SandboxError::Exec {
                program: program.to_string_lossy().into_owned(),
                message: e.to_string(),
            })
        }
    }
}

/// Leaves no capability to the command: none now, none regained by running a program as
/// root (`SECBIT_NOROOT`), none in the bounding or ambient sets.
fn drop_capabilities() {
    use rustix::thread::{CapabilitiesSecureBits as Bits, CapabilitySet, CapabilitySets};
    let _ = rustix::thread::clear_ambient_capability_set();
    for capability in CapabilitySet::all().iter() {
        let _ = rustix::thread::remove_capability_from_bounding_set(capability);
    }
    let _ = rustix::thread::set_capabilities_secure_bits(
        Bits::NO_ROOT
            | Bits::NO_ROOT_LOCKED
            | Bits::NO_SETUID_FIXUP
            | Bits::NO_SETUID_FIXUP_LOCKED
            | Bits::KEEP_CAPS_LOCKED,
    );
    let _ = rustix::thread::set_capabilities(
        None,
        CapabilitySets {
            effective: CapabilitySet::empty(),
            permitted: CapabilitySet::empty(),
            inheritable: CapabilitySet::empty(),
        },
    );
}
