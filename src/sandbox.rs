//! Confining the commands a model runs (`execute_command`) to one directory tree.
//!
//! `loki --serve` with tools runs commands for any client that holds a key, so a path
//! check on tool arguments is not enough: `cd / && rm -r ~` names no path argument. On
//! Linux the command runs under Landlock, the kernel's unprivileged access control:
//! loki starts itself as `loki --sandbox-exec DIR… -- SHELL -c COMMAND`, that process
//! restricts itself and then becomes the shell (`exec`), so the command and everything it
//! starts can
//!
//! - read, write, create and delete only below the writable directories (the tools'
//!   root and a private temporary directory, which `TMPDIR` names);
//! - read and run the system's programs and libraries (`/usr`, `/bin`, `/lib…`, `/etc`,
//!   `/opt`, `/nix`), read `/proc` and `/sys`, and use the devices in `/dev`;
//! - nothing else: the user's home directory, loki's configuration (its keys and vault)
//!   and other projects are out of reach, and it cannot signal processes outside it.
//!
//! A kernel without Landlock (before Linux 5.13, or with it disabled) cannot confine: the
//! command is then refused with a line saying so, never run unconfined. Other systems
//! refuse the same way.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The first argument that makes `loki` the confining wrapper.
pub const EXEC_FLAG: &str = "--sandbox-exec";

/// The exit status of a command that could not be confined (as a shell's "cannot run").
const REFUSED: u8 = 126;

/// Directories commands may read and run programs from.
const SYSTEM_READ: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix",
];

/// Directories commands may only read.
const SYSTEM_LOOK: &[&str] = &["/proc", "/sys"];

/// One confinement: the tree commands may change, and their own temporary directory
/// (removed when the sandbox is dropped).
#[derive(Debug)]
pub struct Sandbox {
    root: PathBuf,
    temp: PathBuf,
}

impl Sandbox {
    /// A sandbox writable below `root`, with a fresh private temporary directory.
    pub fn new(root: &Path) -> std::io::Result<Self> {
        let root = std::fs::canonicalize(root)?;
        let temp = std::env::temp_dir().join(format!("loki-sandbox-{}", uuid::Uuid::new_v4()));
        create_private_dir(&temp)?;
        Ok(Self { root, temp })
    }

    /// The tree commands may change.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The command that runs `command` with `shell -c`, confined. The caller sets the
    /// working directory and the environment (`TMPDIR` and friends are set here).
    pub fn command(&self, shell: &str, command: &str) -> std::io::Result<tokio::process::Command> {
        let loki = std::env::current_exe()?;
        let mut wrapped = tokio::process::Command::new(loki);
        wrapped
            .arg(EXEC_FLAG)
            .arg(&self.root)
            .arg(&self.temp)
            .arg("--")
            .arg(shell)
            .arg("-c")
            .arg(command);
        Ok(wrapped)
    }

    /// The variables that point a command's temporary files into the sandbox.
    pub fn temp_vars(&self) -> [(&'static str, &Path); 3] {
        [
            ("TMPDIR", &self.temp),
            ("TMP", &self.temp),
            ("TEMP", &self.temp),
        ]
    }

    /// Whether this system can confine commands; the error says why not.
    pub fn available() -> Result<(), String> {
        imp::available()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.temp);
    }
}

#[cfg(unix)]
fn create_private_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(path)
}

#[cfg(not(unix))]
fn create_private_dir(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir(path)
}

/// When loki was started as the wrapper (`loki --sandbox-exec ROOT TEMP -- PROGRAM
/// ARGS…`): confines this process and becomes `PROGRAM`. Returns only on failure, with
/// the exit status; `None` when loki was started otherwise.
pub fn exec_if_asked() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(std::ffi::OsStr::new(EXEC_FLAG)) {
        return None;
    }
    let args: Vec<OsString> = args.collect();
    let message = match parse(&args) {
        Ok(wrapped) => imp::confine_and_exec(&wrapped),
        Err(e) => e,
    };
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "loki: cannot confine the command: {message}"
    );
    Some(ExitCode::from(REFUSED))
}

/// What the wrapper was asked to run.
struct Wrapped<'a> {
    writable: [&'a Path; 2],
    program: &'a OsString,
    args: &'a [OsString],
}

fn parse(args: &[OsString]) -> Result<Wrapped<'_>, String> {
    match args {
        [root, temp, dashes, program, rest @ ..] if dashes == "--" => Ok(Wrapped {
            writable: [Path::new(root), Path::new(temp)],
            program,
            args: rest,
        }),
        _ => Err(format!(
            "usage: loki {EXEC_FLAG} ROOT TEMP -- PROGRAM [ARGS…]"
        )),
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use super::{SYSTEM_LOOK, SYSTEM_READ, Wrapped};
    use landlock::{
        ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr, RulesetCreatedAttr,
        RulesetStatus, Scope, path_beneath_rules,
    };
    use std::os::unix::process::CommandExt;

    /// The newest rights this build asks for; older kernels enforce what they know.
    const ABI_WANTED: ABI = ABI::V6;

    const NO_LANDLOCK: &str =
        "this kernel has no Landlock (Linux 5.13 or later, with Landlock enabled, is needed)";

    pub(super) fn available() -> Result<(), String> {
        Ruleset::default()
            .set_compatibility(CompatLevel::HardRequirement)
            .handle_access(AccessFs::from_all(ABI::V1))
            .and_then(Ruleset::create)
            .map(drop)
            .map_err(|_| NO_LANDLOCK.to_string())
    }

    pub(super) fn confine_and_exec(wrapped: &Wrapped<'_>) -> String {
        if let Err(e) = confine(wrapped) {
            return e;
        }
        let e = std::process::Command::new(wrapped.program)
            .args(wrapped.args)
            .exec();
        format!("cannot run {}: {e}", wrapped.program.to_string_lossy())
    }

    fn confine(wrapped: &Wrapped<'_>) -> Result<(), String> {
        let abi = ABI_WANTED;
        let device =
            AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::ReadDir | AccessFs::IoctlDev;
        let status = Ruleset::default()
            .handle_access(AccessFs::from_all(abi))
            .and_then(|r| r.scope(Scope::from_all(abi)))
            .and_then(Ruleset::create)
            .and_then(|r| r.add_rules(path_beneath_rules(SYSTEM_READ, AccessFs::from_read(abi))))
            .and_then(|r| {
                r.add_rules(path_beneath_rules(
                    SYSTEM_LOOK,
                    AccessFs::ReadFile | AccessFs::ReadDir,
                ))
            })
            .and_then(|r| r.add_rules(path_beneath_rules(["/dev"], device)))
            .and_then(|r| {
                r.add_rules(path_beneath_rules(
                    [wrapped.program],
                    AccessFs::from_read(abi),
                ))
            })
            .and_then(|r| {
                r.add_rules(path_beneath_rules(
                    wrapped.writable,
                    AccessFs::from_all(abi),
                ))
            })
            .and_then(landlock::RulesetCreated::restrict_self)
            .map_err(|e| e.to_string())?;
        if status.ruleset == RulesetStatus::NotEnforced {
            return Err(NO_LANDLOCK.into());
        }
        Ok(())
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use super::Wrapped;

    const UNSUPPORTED: &str = "commands can be confined on Linux only (Landlock)";

    pub(super) fn available() -> Result<(), String> {
        Err(UNSUPPORTED.into())
    }

    pub(super) fn confine_and_exec(_: &Wrapped<'_>) -> String {
        UNSUPPORTED.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wrapper_needs_both_directories_and_a_program() {
        let args: Vec<OsString> = ["/r", "/t", "--", "sh", "-c", "true"]
            .iter()
            .map(OsString::from)
            .collect();
        let wrapped = parse(&args).unwrap();
        assert_eq!(wrapped.writable, [Path::new("/r"), Path::new("/t")]);
        assert_eq!(wrapped.program, "sh");
        assert_eq!(wrapped.args.len(), 2);
        assert!(parse(&args[..3]).is_err());
        let no_dashes: Vec<OsString> = ["/r", "/t", "sh"].iter().map(OsString::from).collect();
        assert!(parse(&no_dashes).is_err());
    }
}
