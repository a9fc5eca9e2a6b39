//! One sandbox around every process loki starts on a model's behalf: `execute_command`,
//! script tools (user and agent tools, bash, Python, TypeScript) and, through them, the
//! built-in agents' helpers such as `get_diff` — in every driver and every sub-agent.
//! Hooks, MCP servers and language servers are the user's own programs and run outside.
//!
//! Three modes, as Codex names them ([`SandboxMode`]):
//! - `read-only`: commands read what they may and write only their private temporary
//!   directory;
//! - `workspace-write` (the default where the kernel can confine): they also write below
//!   the working directory and the directories added with `--add-dir`;
//! - `danger-full-access`: no sandbox, the user's explicit choice.
//!
//! In both confined modes the network is off unless `sandbox.network: true`, credential
//! files and loki's own directories cannot be read ([`Policy`]), and nothing outside can
//! be reached through a socket, a signal, `ptrace`, the terminal or `/proc`.
//!
//! loki starts a confined command as `loki --sandbox-exec POLICY -- PROGRAM ARGS…`: that
//! process confines itself (on Linux, the layers of `linux/`) and then becomes the
//! program, so the command and everything it starts stay inside. Where the mode cannot be
//! honoured at all the wrapper refuses (exit 126, one line on stderr), never running the
//! command unconfined. Other systems have no confinement yet: on macOS it would be a
//! Seatbelt profile passed to `sandbox-exec` at the same seam (docs/sandbox.md).

mod error;
mod layers;
#[cfg(target_os = "linux")]
mod linux;
mod policy;
mod settings;

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::OnceLock;

pub use error::SandboxError;
pub use layers::Layers;
pub use policy::{Policy, PolicyInput};
pub use settings::{SandboxMode, SandboxSettings};

/// The first argument that makes `loki` the confining wrapper.
pub const EXEC_FLAG: &str = "--sandbox-exec";

/// Asks the wrapper to report its layers instead of running a program.
const PROBE_FLAG: &str = "--probe";

/// The exit status of a command that could not be confined (as a shell's "cannot run").
const REFUSED: u8 = 126;

/// One confinement: its policy and the private temporary directory it owns (removed when
/// the sandbox is dropped). The policy is worked out when first needed: a conversation
/// that never runs a command or touches a file pays nothing for it.
#[derive(Debug)]
pub struct Sandbox {
    mode: SandboxMode,
    input: PolicyInput,
    temp: PathBuf,
    /// The policy and its text for the wrapper, once worked out.
    policy: OnceLock<(Policy, String)>,
    /// The working directory it was made for.
    root: PathBuf,
    /// File tools, too, may touch nothing outside `root` (`loki --serve`).
    held: bool,
    /// Whether the private temporary directory was made (on first use).
    made: OnceLock<Result<(), SandboxError>>,
}

impl Sandbox {
    /// A sandbox of `mode` (not `danger-full-access`) for `input`, with a fresh private
    /// temporary directory.
    pub fn new(mode: SandboxMode, input: PolicyInput) -> std::io::Result<Self> {
        let root = std::fs::canonicalize(&input.cwd)?;
        let temp = std::env::temp_dir().join(format!("loki-sandbox-{}", uuid::Uuid::new_v4()));
        Ok(Self {
            mode,
            input,
            temp,
            policy: OnceLock::new(),
            root,
            held: false,
            made: OnceLock::new(),
        })
    }

    /// The same sandbox, with file tools also held to the working directory (a server's
    /// `api.tools.root`: reads outside it are refused, not asked about).
    pub fn holding_tools_to_root(mut self) -> Self {
        self.held = true;
        self
    }

    /// Whether file tools are held to the working directory.
    pub fn held_to_root(&self) -> bool {
        self.held
    }

    /// Its mode.
    pub fn mode(&self) -> SandboxMode {
        self.mode
    }

    /// What it enforces.
    pub fn policy(&self) -> &Policy {
        &self.worked_out().0
    }

    fn worked_out(&self) -> &(Policy, String) {
        self.policy.get_or_init(|| {
            let policy = Policy::new(self.mode, &self.input, &self.temp);
            let encoded = serde_json::to_string(&policy).unwrap_or_default();
            (policy, encoded)
        })
    }

    /// The working directory it was made for.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The private temporary directory (`TMPDIR` of every command), made on first use.
    pub fn temp(&self) -> Result<&Path, SandboxError> {
        self.made
            .get_or_init(|| {
                create_private_dir(&self.temp).map_err(|e| SandboxError::TempDir {
                    path: self.temp.display().to_string(),
                    message: e.to_string(),
                })
            })
            .clone()?;
        Ok(&self.temp)
    }

    /// The command that runs `program` with `args`, confined (as it is, in a
    /// `danger-full-access` sandbox that only fences the file tools). The caller sets the
    /// working directory and the environment, then adds [`Sandbox::temp_vars`].
    ///
    /// Fails, saying why, when this system cannot confine at all (nothing runs
    /// unconfined) or the temporary directory cannot be made.
    pub fn command(
        &self,
        program: impl AsRef<std::ffi::OsStr>,
        args: &[impl AsRef<std::ffi::OsStr>],
    ) -> Result<tokio::process::Command, SandboxError> {
        if self.mode == SandboxMode::DangerFullAccess {
            let mut plain = tokio::process::Command::new(program);
            plain.args(args);
            return Ok(plain);
        }
        if let Err(why) = probe() {
            return Err(SandboxError::Unconfinable(format!(
                "the sandbox ({}) cannot confine commands on this system: {why}; nothing was \
                 run (the user can choose --sandbox danger-full-access)",
                self.mode
            )));
        }
        self.temp()?;
        let mut wrapped = tokio::process::Command::new(loki_binary());
        wrapped
            .arg(EXEC_FLAG)
            .arg(&self.worked_out().1)
            .arg("--")
            .arg(program)
            .args(args);
        Ok(wrapped)
    }

    /// The variables that point a command's temporary files into the sandbox.
    pub fn temp_vars(&self) -> [(&'static str, &Path); 3] {
        let temp = self.temp.as_path();
        [("TMPDIR", temp), ("TMP", temp), ("TEMP", temp)]
    }

    /// Whether a file tool may change `path` (absolute) under this sandbox.
    pub fn may_write(&self, path: &Path) -> bool {
        self.policy().may_write(&resolved(path))
    }

    /// Whether a file tool may read `path` (absolute) under this sandbox.
    pub fn may_read(&self, path: &Path) -> bool {
        self.policy().may_read(&resolved(path))
    }

    /// The layers this system gives a sandbox (probed once per process), or why it
    /// cannot confine.
    pub fn layers(&self) -> Result<Layers, SandboxError> {
        probe()
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if self.made.get().is_some_and(Result::is_ok) {
            let _ = std::fs::remove_dir_all(&self.temp);
        }
    }
}

/// `path` with its links resolved as far as it exists (a file not written yet resolves
/// through its parent directory).
fn resolved(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => resolved(parent).join(name),
        _ => path.to_path_buf(),
    }
}

/// The wrapper program, when it is not the running program itself.
static WRAPPER: OnceLock<PathBuf> = OnceLock::new();

/// Makes `program` (a loki binary) the wrapper of confined commands: for a program that
/// embeds loki's library without being loki, such as the test suite.
pub fn use_wrapper(program: PathBuf) {
    let _ = WRAPPER.set(program);
}

/// The program to start as the wrapper: this very binary, even if the file was replaced
/// since loki started.
fn loki_binary() -> PathBuf {
    if let Some(program) = WRAPPER.get() {
        return program.clone();
    }
    if cfg!(target_os = "linux") {
        PathBuf::from("/proc/self/exe")
    } else {
        std::env::current_exe().unwrap_or_else(|_| PathBuf::from("loki"))
    }
}

/// Whether the kernel looks able to confine, read cheaply (no process started): the
/// default mode is `workspace-write` only where it is.
pub fn likely_available() -> bool {
    static FOUND: OnceLock<bool> = OnceLock::new();
    *FOUND.get_or_init(look_for_layers)
}

fn look_for_layers() -> bool {
    #[cfg(target_os = "linux")]
    {
        let namespaces = std::fs::read_to_string("/proc/sys/user/max_user_namespaces")
            .ok()
            .and_then(|n| n.trim().parse::<u64>().ok())
            .is_some_and(|n| n > 0);
        namespaces || landlock_present()
    }
    #[cfg(not(target_os = "linux"))]
    false
}

#[cfg(target_os = "linux")]
fn landlock_present() -> bool {
    use landlock::{ABI, Access, AccessFs, CompatLevel, Compatible, Ruleset, RulesetAttr};
    Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))
        .and_then(Ruleset::create)
        .is_ok()
}

/// The layers a sandbox gets on this system, found once per process by running the
/// wrapper in report mode; the error says why nothing can confine.
pub fn probe() -> Result<Layers, SandboxError> {
    PROBE.get_or_init(run_probe).clone()
}

/// The probe's finding, once made.
static PROBE: OnceLock<Result<Layers, SandboxError>> = OnceLock::new();

/// Once per process, after the first probe: what the missing layers leave open, for the
/// user (none when nothing is missing or nothing was probed yet).
pub fn missing_layers_note() -> Option<String> {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let layers = match PROBE.get()? {
        Ok(layers) => *layers,
        Err(_) => return None,
    };
    let missing = layers.missing();
    if missing.is_empty() || SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    Some(format!(
        "sandbox: {} only — {}",
        layers.describe(),
        missing.join("; ")
    ))
}

fn run_probe() -> Result<Layers, SandboxError> {
    if cfg!(not(target_os = "linux")) {
        return Err(SandboxError::Unconfinable(UNSUPPORTED.into()));
    }
    let sandbox = Sandbox::new(
        SandboxMode::WorkspaceWrite,
        PolicyInput {
            cwd: std::env::temp_dir(),
            ..PolicyInput::default()
        },
    )
    .map_err(|e| SandboxError::Start(e.to_string()))?;
    sandbox.temp()?;
    let output = std::process::Command::new(loki_binary())
        .arg(EXEC_FLAG)
        .arg(PROBE_FLAG)
        .arg(&sandbox.worked_out().1)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| SandboxError::Start(e.to_string()))?;
    let text = String::from_utf8_lossy(&output.stdout);
    serde_json::from_str(text.trim()).map_err(|_| {
        let why = String::from_utf8_lossy(&output.stderr);
        let why = why.trim();
        SandboxError::Unconfinable(
            why.strip_prefix("loki: cannot confine the command: ")
                .unwrap_or(why)
                .to_string(),
        )
    })
}

/// Why other systems cannot confine.
const UNSUPPORTED: &str = "commands can be confined on Linux only (namespaces, Landlock, seccomp)";

#[cfg(unix)]
fn create_private_dir(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().mode(0o700).create(path)
}

#[cfg(not(unix))]
fn create_private_dir(path: &Path) -> std::io::Result<()> {
    std::fs::create_dir(path)
}

/// When loki was started as the wrapper (`loki --sandbox-exec POLICY -- PROGRAM ARGS…`,
/// or `--sandbox-exec --probe POLICY`): confines this process and becomes `PROGRAM`.
/// Returns the exit status when it ends otherwise; `None` when loki was started for
/// anything else.
pub fn exec_if_asked() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(std::ffi::OsStr::new(EXEC_FLAG)) {
        return None;
    }
    let args: Vec<OsString> = args.collect();
    let outcome = parse(&args).and_then(|(policy, program)| wrap(&policy, program));
    match outcome {
        Ok(code) => Some(code),
        Err(message) => {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "loki: cannot confine the command: {message}"
            );
            Some(ExitCode::from(REFUSED))
        }
    }
}

/// The program to run and its arguments; none: report the layers.
type Program<'a> = Option<(&'a OsString, &'a [OsString])>;

fn parse(args: &[OsString]) -> Result<(Policy, Program<'_>), SandboxError> {
    let usage =
        || SandboxError::Usage(format!("usage: loki {EXEC_FLAG} POLICY -- PROGRAM [ARGS…]"));
    let decode = |text: &OsString| {
        serde_json::from_str::<Policy>(&text.to_string_lossy())
            .map_err(|e| SandboxError::Usage(format!("bad policy: {e}")))
    };
    match args {
        [probe, policy] if probe == PROBE_FLAG => Ok((decode(policy)?, None)),
        [policy, dashes, program, rest @ ..] if dashes == "--" => {
            Ok((decode(policy)?, Some((program, rest))))
        }
        _ => Err(usage()),
    }
}

#[cfg(target_os = "linux")]
fn wrap(policy: &Policy, program: Program<'_>) -> Result<ExitCode, SandboxError> {
    if policy.mode == SandboxMode::DangerFullAccess {
        return Err(SandboxError::Usage(
            "danger-full-access is not a sandbox".into(),
        ));
    }
    let then = match program {
        Some((program, args)) => linux::Then::Exec { program, args },
        None => linux::Then::Report,
    };
    linux::confine(policy, &then)
}

#[cfg(not(target_os = "linux"))]
fn wrap(_: &Policy, _: Program<'_>) -> Result<ExitCode, SandboxError> {
    Err(SandboxError::Unconfinable(UNSUPPORTED.into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wrapper_needs_a_policy_and_a_program() {
        let policy = Policy {
            mode: SandboxMode::WorkspaceWrite,
            writable: vec!["/r".into()],
            deny_read: Vec::new(),
            network: false,
            temp: "/t".into(),
            namespaces: true,
            readable: None,
        };
        let json = OsString::from(serde_json::to_string(&policy).unwrap());
        let args: Vec<OsString> = vec![json.clone(), "--".into(), "sh".into(), "-c".into()];
        let (parsed, program) = parse(&args).unwrap();
        assert_eq!(parsed, policy);
        let (program, rest) = program.unwrap();
        assert_eq!(program, "sh");
        assert_eq!(rest.len(), 1);
        let probe: Vec<OsString> = vec![PROBE_FLAG.into(), json];
        assert!(parse(&probe).unwrap().1.is_none());
        assert!(parse(&args[..2]).is_err());
        assert!(parse(&[OsString::from("{}"), "--".into(), "sh".into()]).is_err());
    }
}
