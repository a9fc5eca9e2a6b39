//! The application: where the process starts. [`main_entry`] parses the arguments,
//! captures the environment, sets up logging and the runtime, decides the [`Mode`] once,
//! finds the configuration, builds the shared [`AppState`] and hands over to the front end
//! for that mode. Front ends are siblings: the one-shot CLI (`cli`), the REPL (`repl`),
//! the shell assistant (`cli::execute`) and the information commands never call each
//! other; what they share lives here (flags → first conversation) and in `term`.

mod project;
mod setup;

use std::io::Write;
use std::ops::ControlFlow;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use crate::cli::args::{Args, InputFormat, OutputFormat, ShellKind};
use crate::config::{ConfigError, Env, Paths, TerminalCaps};
use crate::render::theme::Theme;
use crate::state::AppState;
use crate::term;

/// What this run of loki does, decided once from the arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// `--info`, `--list-*`, `--sync-models`, `--authenticate`, `--build-tools`.
    Info,
    /// The interactive REPL (no prompt, stdin a terminal).
    Repl,
    /// `-e`: the shell assistant.
    Execute,
    /// `--macro NAME args…`: a macro's steps in a conversation of their own.
    Macro,
    /// One question, answered as text.
    OneShot,
    /// One question (or a stream of them), answered as JSON (`--output-format`,
    /// `--input-format stream-json`).
    Headless,
    /// `--serve`: the HTTP server.
    Serve,
    /// `--mcp-server`: loki as an MCP server.
    McpServer,
    /// `--acp`: loki as an agent of the Agent Client Protocol (editors).
    Acp,
    /// Started by a Claude Agent SDK program: Claude Code's stream-json.
    ClaudeSdk,
    /// `--run-tool NAME`: one tool call from a shell.
    RunTool,
    /// `-s NAME --rewind [N]`: undo the session's last turns.
    Rewind,
    /// `--init`: write AGENTS.md for the repository.
    Init,
}

impl Mode {
    /// The mode for `args`.
    pub fn choose(args: &Args, stdin_tty: bool) -> Self {
        if args.serve.is_some() {
            Self::Serve
        } else if args.mcp_server.is_some() {
            Self::McpServer
        } else if args.acp {
            Self::Acp
        } else if args.info_only()
            || args.authenticate.is_some()
            || args.mcp_login.is_some()
            || args.mcp_logout.is_some()
            || args.build_tools
        {
            Self::Info
        } else if args.rewind.is_some() {
            Self::Rewind
        } else if args.run_tool.is_some() {
            Self::RunTool
        } else if args.init {
            Self::Init
        } else if args.macro_name.is_some() {
            Self::Macro
        } else if args.output_format != OutputFormat::Text
            || args.input_format == InputFormat::StreamJson
        {
            Self::Headless
        } else if args.text.is_empty()
            && args.files.is_empty()
            && stdin_tty
            && !args.execute
            && !args.print
        {
            Self::Repl
        } else if args.execute && args.prompt.is_none() && args.role.is_none() {
            Self::Execute
        } else {
            Self::OneShot
        }
    }
}

/// Runs loki with the process arguments and environment; returns the exit status.
/// Prints a command-line error and returns its exit status. `--help` and `--version`
/// print as clap renders them; a usage error is one line (clap's message with its
/// possible values and tip folded in), like every other error.
fn usage_error(e: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    let code = ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return code;
    }
    let rendered = e.render().to_string();
    let mut parts = Vec::new();
    for line in rendered.lines().map(str::trim) {
        if line.is_empty() || line.starts_with("Usage:") || line.starts_with("For more information")
        {
            continue;
        }
        parts.push(line.strip_prefix("error: ").unwrap_or(line).to_string());
    }
    // A line ending in `:` introduces the next (clap's list of missing arguments).
    let mut joined = String::new();
    for part in &parts {
        if !joined.is_empty() {
            joined.push_str(if joined.ends_with(':') { " " } else { "; " });
        }
        joined.push_str(part);
    }
    let message = format!("{joined} (see loki --help)");
    let caps = TerminalCaps::capture(&Env::capture());
    crate::term::report_error(&crate::render::theme::Theme::stderr(&caps), &message);
    code
}

/// A server that hands memory back: at most two malloc arenas (one per worker thread)
/// instead of eight per core, large blocks (an argon2 check's 19 MiB, a request body) in
/// their own mappings returned when freed, and the heap trimmed past 1 MiB. Without this a
/// cold burst of requests left hundreds of megabytes in per-thread arenas for good.
/// Called before the runtime starts its threads.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn bound_allocator_for_a_server() {
    // SAFETY: mallopt only sets glibc allocator parameters (under glibc's own locks);
    // called before the runtime's threads exist.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 1024 * 1024);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn bound_allocator_for_a_server() {}

pub fn main_entry() -> ExitCode {
    // `loki --sandbox-exec …`: confine this process and become the command it names.
    if let Some(refused) = crate::sandbox::exec_if_asked() {
        return refused;
    }
    // Not dumpable: what loki holds in memory and in `/proc/<pid>/environ` (provider keys)
    // stays out of reach of the user's other processes, commands a model runs included.
    #[cfg(target_os = "linux")]
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
    if std::env::var_os("COMPLETE").is_some_and(|v| !v.is_empty()) {
        crate::cli::complete::complete_from_env();
    }
    let (args, claude) = match parse_args() {
        Ok(parsed) => parsed,
        Err(code) => return code,
    };
    if let Some(code) = answered_from_args(&args) {
        return code;
    }
    let mut env = Env::capture();
    let paths = Paths::resolve(&env);
    let caps = TerminalCaps::capture(&env);
    let stderr_theme = Theme::stderr(&caps);
    if let Err(e) = env.load_dotenv(&paths.env_file) {
        term::report_error(
            &stderr_theme,
            &format!("cannot read {}: {e}", paths.env_file.display()),
        );
        return ExitCode::from(1);
    }
    let paths = paths.reresolve(&env);
    // The terminal is captured once; `NO_COLOR` may come from the `.env` file.
    let caps = TerminalCaps {
        no_color: env.get("NO_COLOR").is_some(),
        ..caps
    };
    let stderr_theme = Theme::stderr(&caps);
    if args.tail_logs {
        return tail_logs(&args, &paths, &caps, &stderr_theme);
    }
    // Off the record, not even the log is written.
    if !args.otr {
        crate::logging::init(&env, paths.log_file.clone());
    }
    install_panic_hook(&paths);
    let mode = if claude.is_some() {
        Mode::ClaudeSdk
    } else {
        Mode::choose(&args, caps.stdin_tty)
    };
    if mode == Mode::Serve {
        bound_allocator_for_a_server();
    }
    let runtime = match runtime_for(mode) {
        Ok(rt) => rt,
        Err(e) => {
            term::report_error(
                &stderr_theme,
                &format!("cannot start the async runtime: {e}"),
            );
            return ExitCode::from(1);
        }
    };
    // The unsaved knowledge base (`.rag` without a name) ends with the process.
    let temp_rags = paths.temp_rags_dir.clone();
    let outcome = runtime.block_on(run(mode, args, claude, env, paths, caps));
    crate::repl::release_startup_keys();
    if temp_rags.exists() {
        let _ = std::fs::remove_dir_all(&temp_rags);
    }
    if crate::signals::blocked_threads_left() {
        // A thread may still be blocked on the terminal or a lock; do not wait for it.
        runtime.shutdown_background();
    }
    match outcome {
        Ok(code) => ExitCode::from(code),
        // `loki … | head`: the reader took what it wanted and closed the pipe. That is
        // its choice, not loki's failure: end quietly, as `cat` does.
        Err(e) if broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            term::report_error(&stderr_theme, &error_chain(&e));
            ExitCode::from(1)
        }
    }
}

/// The command line: loki's flags, or Claude Code's when a Claude Agent SDK program
/// started loki; the exit code of a usage error otherwise.
fn parse_args() -> Result<(Args, Option<crate::claude_sdk::flags::ClaudeOptions>), ExitCode> {
    // A Claude Agent SDK program that set `cli_path` to loki speaks Claude Code's flags.
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let claude = if crate::claude_sdk::flags::started_by_sdk(&argv, |k| std::env::var(k).ok()) {
        match crate::claude_sdk::flags::parse(&argv) {
            Ok(options) => Some(options),
            Err(message) => {
                use clap::CommandFactory;
                let e = Args::command().error(clap::error::ErrorKind::InvalidValue, message);
                return Err(usage_error(&e));
            }
        }
    } else {
        None
    };
    let parsed = if claude.is_some() {
        Args::try_parse_from(["loki"])
    } else {
        match crate::cli::trailing::hoist(&argv) {
            Some(hoisted) => {
                Args::try_parse_from(std::iter::once("loki".to_string()).chain(hoisted))
            }
            None => Args::try_parse(),
        }
    };
    let args = match parsed {
        Ok(args) => args,
        Err(e) => return Err(usage_error(&e)),
    };
    if claude.is_none()
        && let Some(message) = compat_unused(&args)
    {
        use clap::CommandFactory;
        let e = Args::command().error(clap::error::ErrorKind::ArgumentConflict, message);
        return Err(usage_error(&e));
    }
    let claude = claude.or_else(|| claude_print(&args, &argv));
    Ok((args, claude))
}

/// Why `--compat claude` would change nothing in this run (a flag is honoured or refused,
/// never dropped): it shapes `--output-format json` and `stream-json` of a prompt.
fn compat_unused(args: &Args) -> Option<&'static str> {
    use crate::cli::args::{InputFormat, OutputFormat};
    args.compat.as_ref()?;
    match (args.output_format, args.input_format) {
        (OutputFormat::Text, _) => {
            Some("--compat claude shapes --output-format json or stream-json; add one of them")
        }
        (OutputFormat::StreamJson, InputFormat::StreamJson) => Some(
            "--compat claude with --input-format stream-json: use --output-format json (one \
             Claude result per prompt), or let a Claude Agent SDK program start loki as its \
             cli_path (docs/claude-sdk.md)",
        ),
        _ => None,
    }
}

/// `--compat claude --output-format stream-json` with a prompt (`claude -p PROMPT
/// --output-format stream-json`): Claude Code's stream messages for one prompt, written by
/// the Agent SDK mode that already speaks them, with the Claude flags of the command line
/// (`--allowedTools`, `--max-turns`, …). The prompt is the text, or stdin when there is
/// none.
fn claude_print(args: &Args, argv: &[String]) -> Option<crate::claude_sdk::flags::ClaudeOptions> {
    use crate::cli::args::{InputFormat, OutputFormat};
    if args.compat.is_none()
        || args.output_format != OutputFormat::StreamJson
        || args.input_format == InputFormat::StreamJson
    {
        return None;
    }
    let mut options = crate::claude_sdk::flags::parse(argv).ok()?;
    let mut prompt = args.text.join(" ");
    if prompt.trim().is_empty() && !std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        prompt = std::io::read_to_string(std::io::stdin()).unwrap_or_default();
    }
    // Claude's own flags name what a loki flag also sets: the ones loki parsed win.
    options.ignored.clear();
    options.model = options.model.or_else(|| args.model.clone());
    // `-C` is loki's `--continue`.
    options.continue_last |= args.continue_last;
    // These are applied to the run's configuration already (as in every other mode,
    // `--max-turns N` is N tool rounds): once is enough.
    options.append_system_prompt = None;
    options.max_turns = None;
    options.prompt = Some(prompt);
    Some(options)
}

/// What the flags alone answer (completions, a flag conflict, the shell integration
/// script); `None` when loki goes on.
fn answered_from_args(args: &Args) -> Option<ExitCode> {
    if let Some(shell) = args.completions {
        return Some(print_completions(shell));
    }
    if let Some(message) = args.headless_conflict() {
        use clap::CommandFactory;
        let e = Args::command().error(clap::error::ErrorKind::ArgumentConflict, message);
        return Some(usage_error(&e));
    }
    if let Some(shell) = args.shell_integration {
        let script = match shell {
            ShellKind::Bash => include_str!("../../assets/shell/loki.bash"),
            ShellKind::Zsh => include_str!("../../assets/shell/loki.zsh"),
            ShellKind::Fish => include_str!("../../assets/shell/loki.fish"),
            ShellKind::Nushell => include_str!("../../assets/shell/loki.nu"),
            ShellKind::Elvish => include_str!("../../assets/shell/loki.elv"),
            ShellKind::Powershell => include_str!("../../assets/shell/loki.ps1"),
        };
        let _ = std::io::stdout().lock().write_all(script.as_bytes());
        return Some(ExitCode::SUCCESS);
    }
    None
}

/// A panic aborts in release builds: MCP servers' process groups are stopped and the open
/// sessions' unsaved messages saved as new sessions first.
fn install_panic_hook(paths: &Paths) {
    let default_hook = std::panic::take_hook();
    let sessions_dir = paths.sessions_dir.clone();
    std::panic::set_hook(Box::new(move |info| {
        crate::mcp::server::terminate_all();
        crate::repl::release_startup_keys();
        default_hook(info);
        let base = format!(
            "rescued-{}",
            crate::role::compact_timestamp(std::time::SystemTime::now())
        );
        for name in crate::session::rescue::rescue_all(&sessions_dir, &base) {
            let _ = writeln!(
                std::io::stderr().lock(),
                "loki stopped on an internal error; the conversation was saved as session `{name}` (resume it with loki -s {name})"
            );
        }
    }));
}

/// The runtime for `mode`. The REPL's line editor blocks its thread while the user
/// types, and MCP servers (and background starts) must keep running meanwhile: it gets
/// two workers, as the servers do. One-shot runs stay on one thread, where streaming is
/// several times cheaper (no cross-thread wakeup per network read).
fn runtime_for(mode: Mode) -> std::io::Result<tokio::runtime::Runtime> {
    if matches!(
        mode,
        Mode::Repl | Mode::Serve | Mode::McpServer | Mode::Acp | Mode::ClaudeSdk
    ) {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    }
}

/// Whether `e` is (or was caused by) a write to a pipe whose reader went away. Every
/// printing path that propagates its write errors ends here, so this one check covers
/// them all.
fn broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// The error and its causes as one message, leaving out a cause the message already
/// quotes (`cannot read x: Is a directory (os error 21)` once, not twice).
fn error_chain(e: &anyhow::Error) -> String {
    let mut message = e.to_string();
    for cause in e.chain().skip(1) {
        let cause = cause.to_string();
        if !message.contains(&cause) {
            message.push_str(": ");
            message.push_str(&cause);
        }
    }
    message
}

/// `--tail-logs [--disable-log-colors]`.
fn tail_logs(args: &Args, paths: &Paths, caps: &TerminalCaps, stderr_theme: &Theme) -> ExitCode {
    let tty = caps.stdout_tty;
    let opts = crate::logging::tail::TailOptions {
        colors: tty && !args.disable_log_colors && !caps.no_color,
        escape: tty,
    };
    // Ctrl-C, SIGTERM and SIGHUP stop following (also when the shell that started loki
    // left SIGINT ignored, as background jobs do).
    let stopped = std::sync::Arc::new(std::sync::OnceLock::new());
    // The handlers are in place before the first line is shown; a thread waits for them
    // (and is left behind at exit).
    let listening = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .ok()
        .and_then(|runtime| {
            let signals = runtime
                .block_on(async { crate::signals::StopSignals::listen(true) })
                .ok()?;
            Some((runtime, signals))
        });
    if let Some((runtime, mut signals)) = listening {
        let stopped = std::sync::Arc::clone(&stopped);
        std::thread::spawn(move || {
            runtime.block_on(async move {
                let _ = stopped.set(signals.recv().await);
            });
        });
    }
    let log_file = paths.log_file.clone();
    let watched = std::sync::Arc::clone(&stopped);
    let result = crate::logging::tail::run(&log_file, opts, &|| watched.get().is_some());
    if let Some(signal) = stopped.get() {
        return ExitCode::from(signal.exit_code());
    }
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let path = paths.log_file.display();
            term::report_error(stderr_theme, &format!("cannot follow {path}: {e}"));
            ExitCode::from(1)
        }
    }
}

fn print_completions(shell: ShellKind) -> ExitCode {
    use clap::CommandFactory;
    let mut cmd = Args::command();
    // clap_complete panics when its writer fails; it writes to memory, and a reader that
    // closed the pipe early (`loki --completions zsh | head`) is not an error.
    let mut out = Vec::new();
    match shell {
        ShellKind::Bash => {
            clap_complete::generate(clap_complete::Shell::Bash, &mut cmd, "loki", &mut out)
        }
        ShellKind::Zsh => {
            clap_complete::generate(clap_complete::Shell::Zsh, &mut cmd, "loki", &mut out)
        }
        ShellKind::Fish => {
            clap_complete::generate(clap_complete::Shell::Fish, &mut cmd, "loki", &mut out)
        }
        ShellKind::Elvish => {
            clap_complete::generate(clap_complete::Shell::Elvish, &mut cmd, "loki", &mut out)
        }
        ShellKind::Powershell => {
            clap_complete::generate(clap_complete::Shell::PowerShell, &mut cmd, "loki", &mut out)
        }
        ShellKind::Nushell => {
            clap_complete::generate(clap_complete_nushell::Nushell, &mut cmd, "loki", &mut out)
        }
    }
    let _ = std::io::stdout().lock().write_all(&out);
    ExitCode::SUCCESS
}

async fn run(
    mode: Mode,
    mut args: Args,
    claude: Option<crate::claude_sdk::flags::ClaudeOptions>,
    env: Env,
    paths: Paths,
    caps: TerminalCaps,
) -> anyhow::Result<u8> {
    if args.api_key_hash {
        return api_key_hash();
    }
    // Before the configuration: its placeholders may name the secret being added.
    if let Some(op) = vault_op(&args) {
        return crate::cli::vault::run(op, &paths, &env, &caps);
    }
    let stdin_tty = caps.stdin_tty;
    let stdout_tty = caps.stdout_tty;
    if mode == Mode::Repl && stdout_tty {
        // What is typed while loki starts waits, unechoed, for the first prompt.
        crate::repl::hold_startup_keys();
    }
    let interactive = stdin_tty
        && stdout_tty
        && !matches!(
            mode,
            Mode::Headless | Mode::Serve | Mode::McpServer | Mode::Acp
        );
    let state = match open_state(mode, &args, env, paths, caps, interactive).await? {
        ControlFlow::Continue(state) => state,
        ControlFlow::Break(status) => return Ok(status),
    };
    // `-C` and `--resume`: the conversation to continue (agents' included).
    if !crate::cli::resume::choose(&state, &mut args).await? {
        return Ok(0);
    }
    if let Some(direction) = &args.migrate_sessions {
        let copied =
            crate::conversation::catalog::migrate_sessions(&state, direction == "in").await?;
        term::session_note(
            &Theme::stderr(&state.terminal),
            &format!("copied {copied} session(s)"),
        );
        return Ok(0);
    }
    if mode == Mode::Info {
        return crate::cli::listing::run(&state, &args).await;
    }
    // A rule naming no tool protects nothing: refuse to start rather than run without it.
    let servers_come_later = matches!(
        mode,
        Mode::Acp | Mode::ClaudeSdk | Mode::Serve | Mode::McpServer
    );
    let unknown = crate::conversation::rule_check::unknown_rules(&state, !servers_come_later);
    for warning in &unknown.warnings {
        term::report_warning(&Theme::stderr(&state.terminal), warning);
    }
    if let Some(problem) = unknown.error {
        anyhow::bail!("{problem}");
    }
    if matches!(mode, Mode::OneShot | Mode::Execute | Mode::Macro)
        && args.sandbox.is_none()
        && let Some(note) = crate::conversation::confinement::default_note(&state)
    {
        term::session_note(&Theme::stderr(&state.terminal), &note);
    }
    // First run: write the built-ins where the user can edit them. The information
    // commands above never write anything.
    install_builtins(&state);
    unlock_for_mcp(&state).await;
    // Language servers started on the way are stopped politely at the end.
    let lsp = Arc::clone(&state.lsp);
    let outcome = drive(mode, state, &args, claude).await;
    lsp.shutdown().await;
    outcome
}

/// The configuration (set up on first use), the trusted project's additions and the
/// session store, as the shared state; `Break` with the exit status when the setup was
/// left or (headless) failed.
async fn open_state(
    mode: Mode,
    args: &Args,
    env: Env,
    paths: Paths,
    caps: TerminalCaps,
    interactive: bool,
) -> anyhow::Result<ControlFlow<u8, Arc<AppState>>> {
    let (config, origin, vault) =
        match setup::load_config(&paths, &env, &caps, interactive, args.info_only()).await {
            Ok(found) => found,
            // Leaving the setup is a choice, not a failure: one quiet line, status 0.
            Err(ConfigError::SetupCancelled) => {
                term::session_note(
                    &Theme::stderr(&caps),
                    &ConfigError::SetupCancelled.to_string(),
                );
                return Ok(ControlFlow::Break(0));
            }
            // Headless: even a missing or broken configuration is a started-and-aborted run.
            Err(e) if mode == Mode::Headless => {
                return Ok(ControlFlow::Break(crate::cli::oneshot::setup_failed(
                    args,
                    &caps,
                    &e.into(),
                )));
            }
            Err(e) => return Err(e.into()),
        };
    let mut config = config;
    crate::render::themes::adopt_terminal(&mut config, &paths, &env);
    // Claude Code's run flags (`--allowedTools`, `--max-turns`, …) hold for this run.
    if let Err(message) = crate::cli::flags::apply_to_config(args, &mut config) {
        crate::term::report_error(
            &crate::render::theme::Theme::stderr(&caps),
            &format!("{message} (see loki --help)"),
        );
        return Ok(ControlFlow::Break(2));
    }
    if mode == Mode::Info {
        // `--info` shows what a run with these flags would use; a run applies them to its
        // conversation instead.
        crate::cli::flags::apply_to_info(args, &mut config);
    }
    let project = match std::env::current_dir() {
        Ok(here) => project::apply(
            &mut config,
            &paths.config_dir,
            &here,
            &caps,
            interactive && matches!(mode, Mode::Repl | Mode::OneShot | Mode::Execute),
            args.trust_project,
        ),
        _ => project::Trusted::default(),
    };
    let mut paths = paths;
    paths.project_agents = project.agents;
    paths.trusted_project = project.root;
    let state = AppState::new(config, paths, env, origin, vault)
        .with_terminal(caps)
        .connect_sessions()
        .await
        .map_err(|e| anyhow::anyhow!("cannot open the session store: {e}"))?;
    let state = Arc::new(state);
    if let Some(text) = project.mcp_json {
        state.mcp.add_project(&text, &state.env);
    }
    Ok(ControlFlow::Continue(state))
}

/// Writes the built-in roles, macros, agents and tool wrappers where the user can edit
/// them (first run); a failure is logged, not fatal.
fn install_builtins(state: &AppState) {
    if let Err(e) = crate::role::install_builtins(&state.paths.roles_dir) {
        tracing::warn!("cannot install the built-in roles: {e}");
    }
    if let Err(e) = crate::macros::install_builtins(&state.paths.macros_dir) {
        tracing::warn!("cannot install the built-in macros: {e}");
    }
    if let Err(e) = crate::agent::install_builtins(&state.paths.agents_dir) {
        tracing::warn!("cannot install the built-in agents: {e}");
    }
    if let Ok(exe) = std::env::current_exe()
        && let Err(e) = crate::tool::wrappers::install_builtins(
            &state.paths.functions_dir,
            crate::tool::wrappers::Runner {
                exe: &exe,
                config_dir: &state.paths.config_dir,
            },
        )
    {
        tracing::warn!("cannot install functions/mcp.json and the tool wrappers: {e}");
    }
}

/// Runs the front end `mode` names; returns the exit status.
async fn drive(
    mode: Mode,
    state: Arc<AppState>,
    args: &Args,
    claude: Option<crate::claude_sdk::flags::ClaudeOptions>,
) -> anyhow::Result<u8> {
    let stdin_tty = state.terminal.stdin_tty;
    let stdout_tty = state.terminal.stdout_tty;
    match mode {
        Mode::Serve => crate::server::serve(state, args.serve.as_deref()).await,
        Mode::Acp => Box::pin(crate::acp::serve(state, args.yolo)).await,
        Mode::ClaudeSdk => {
            Box::pin(crate::claude_sdk::serve(state, claude.unwrap_or_default())).await
        }
        Mode::McpServer => {
            // Boxed: its future (rmcp's server) is too deep to inline here.
            Box::pin(crate::mcp_serve::serve(
                state,
                args.mcp_server.as_deref(),
                args.yolo,
            ))
            .await
        }
        Mode::Repl => {
            if !stdout_tty {
                anyhow::bail!("the REPL needs a terminal on stdout; give a prompt to run one-shot");
            }
            let cancel = tokio_util::sync::CancellationToken::new();
            let queue = Arc::new(crate::conversation::PromptQueue::default());
            let conversation = repl_conversation(&state, args, &cancel, &queue).await?;
            let Some(conversation) = conversation else {
                return Ok(0);
            };
            crate::repl::run(state, conversation, cancel, queue).await
        }
        Mode::Macro => {
            let mut macro_args = args.text.clone();
            if !stdin_tty {
                // Piped input is the macro's last argument (`git diff | loki --macro …`).
                let piped = read_piped(&state)?;
                if !piped.trim().is_empty() {
                    macro_args.push(piped);
                }
            }
            crate::cli::macro_run::run(&state, args, &macro_args).await
        }
        Mode::RunTool => {
            let piped = if stdin_tty {
                None
            } else {
                Some(read_piped(&state)?)
            };
            crate::cli::run_tool::run(&state, args, piped).await
        }
        Mode::Rewind => {
            // A prompt given with the rewind (on the command line or piped) is asked once
            // the rewind succeeded.
            let text = prompt_text(args, stdin_tty, &state)?;
            let asks = !text.trim().is_empty() || !args.files.is_empty();
            match crate::cli::rewind::run(&state, args, asks).await {
                Ok(0) if asks => crate::cli::oneshot::run(&state, args, text).await,
                done => done,
            }
        }
        Mode::Execute => {
            let text = prompt_text(args, stdin_tty, &state)?;
            crate::cli::execute::start(&state, args, text).await
        }
        Mode::Init => crate::cli::init::run(&state, args).await,
        Mode::Headless if args.input_format == InputFormat::StreamJson => {
            crate::cli::oneshot::run(&state, args, String::new()).await
        }
        _ => {
            let text = prompt_text(args, stdin_tty, &state)?;
            if args.print && text.trim().is_empty() && args.files.is_empty() {
                anyhow::bail!("-p needs a prompt: give it as arguments or pipe it on stdin");
            }
            crate::cli::oneshot::run(&state, args, text).await
        }
    }
}

/// When the MCP servers the configuration enables read secrets from a vault that only a
/// person can unlock (no password file), asks for the password now, before the REPL or
/// the answer takes the terminal. With a password file the vault is opened lazily, when
/// such a server starts (in the REPL, in the background).
async fn unlock_for_mcp(state: &AppState) {
    let access = state.vault.access();
    if access.password_file.is_some() || !access.exists() || !state.terminal.interactive() {
        return;
    }
    let enabled = state.config.enabled_mcp_servers.clone();
    let Some(enabled) = enabled.filter(|_| state.config.mcp_server_support) else {
        return;
    };
    let (names, _) = state
        .mcp
        .expand(&enabled, &state.config.mapping_mcp_servers);
    state.mcp.resolve_deferred(&names).await;
}

/// `--api-key-hash`: a new key, and the entry that lets it in.
fn api_key_hash() -> anyhow::Result<u8> {
    let made = crate::server::auth::new_key()?;
    let mut out = std::io::stdout().lock();
    writeln!(out, "key:  {}", made.key)?;
    writeln!(
        out,
        "# for config.yaml (the key itself is not stored; give it to the client):"
    )?;
    writeln!(out, "api:\n  auth:\n    mode: StaticKeys\n    keys:")?;
    writeln!(
        out,
        "      - subject: <who>\n        id: \"{}\"\n        key_hash: \"{}\"\n        scopes: [read, write]",
        made.id, made.hash
    )?;
    Ok(0)
}

/// The REPL's conversation: the flags and `repl_prelude`, the person at the terminal
/// approving calls and answering the user-interaction tools. `None` when a
/// knowledge-base build was all that was asked. The REPL keeps `cancel` (SIGTERM and
/// SIGHUP cancel it) and `queue` (lines typed during a turn).
async fn repl_conversation(
    state: &Arc<AppState>,
    args: &Args,
    cancel: &tokio_util::sync::CancellationToken,
    queue: &Arc<crate::conversation::PromptQueue>,
) -> anyhow::Result<Option<crate::conversation::Conversation>> {
    let id = loki_protocol::event::next_conversation_id();
    let spec = crate::conversation::ConversationSpec {
        id: Some(id.clone()),
        approver: crate::cli::flags::terminal_approver(&state.terminal, &id),
        asker: Some(Arc::new(term::ask::TerminalAsker::new(&id))),
        user_tools: true,
        carry_on: crate::conversation::CarryOn::DotContinue,
        cancel: Some(cancel.clone()),
        queue: Some(Arc::clone(queue)),
        ..crate::cli::flags::spec(args, &state.terminal, state.config.repl_prelude.as_deref())
    };
    let mut conversation = crate::conversation::Conversation::open(state, spec).await?;
    let theme = Theme::stderr(&state.terminal);
    for warning in conversation.take_warnings() {
        term::report_warning(&theme, &warning);
    }
    let step =
        crate::cli::rag::prepare(state, &mut conversation, args, false, true, cancel).await?;
    Ok((step != crate::cli::rag::RagStep::Done).then_some(conversation))
}

/// The vault operation asked for on the command line, if any.
fn vault_op(args: &Args) -> Option<crate::vault::commands::Op> {
    use crate::vault::commands::Op;
    if let Some(name) = &args.add_secret {
        return Some(Op::Add(name.clone()));
    }
    if let Some(name) = &args.get_secret {
        return Some(Op::Get(name.clone()));
    }
    if let Some(name) = &args.update_secret {
        return Some(Op::Update(name.clone()));
    }
    if let Some(name) = &args.delete_secret {
        return Some(Op::Delete(name.clone()));
    }
    args.list_secrets.then_some(Op::List)
}

/// Piped stdin as text, bounded by `max_input_size`. Bytes that are not UTF-8 are
/// replaced by U+FFFD (a binary diff should not stop a commit message), with a warning
/// saying so.
fn read_piped(state: &AppState) -> anyhow::Result<String> {
    let mut bytes =
        crate::input::read_bytes_bounded(std::io::stdin().lock(), state.config.max_input_size)?;
    // A byte-order mark (Windows editors, PowerShell pipes) is not part of the text.
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let bytes = e.into_bytes();
            let at = std::str::from_utf8(&bytes).map_or_else(|e| e.valid_up_to(), |_| 0);
            let caps = TerminalCaps::capture(&state.env);
            crate::term::report_warning(
                &Theme::stderr(&caps),
                &format!(
                    "piped input is not UTF-8 (first bad byte at offset {at}); invalid bytes were replaced with U+FFFD"
                ),
            );
            String::from_utf8_lossy(&bytes).into_owned()
        }
    })
}

/// The prompt: the arguments, with piped stdin appended (bounded by `max_input_size`).
/// After a `/command`, arguments keep the shell's grouping: `loki /review a.rs "the
/// parser"` gives the command `$1` = `the parser` (quoted again as it was).
fn prompt_text(args: &Args, stdin_tty: bool, state: &AppState) -> anyhow::Result<String> {
    let mut text = match args.text.split_first() {
        Some((command, rest)) if command.starts_with('/') && !command.contains(' ') => {
            std::iter::once(command.clone())
                .chain(rest.iter().map(|word| crate::shell_words::quote(word)))
                .collect::<Vec<_>>()
                .join(" ")
        }
        _ => args.text.join(" "),
    };
    if !stdin_tty {
        let piped = read_piped(state)?;
        if !piped.trim().is_empty() {
            text = if text.is_empty() {
                piped
            } else {
                format!("{text}\n{piped}")
            };
        }
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[test]
    fn the_mode_follows_the_flags_and_the_terminal() {
        let cases: &[(&[&str], bool, Mode)] = &[
            (&[], true, Mode::Repl),
            (&[], false, Mode::OneShot),
            (&["hello"], true, Mode::OneShot),
            (&["-f", "a.txt"], true, Mode::OneShot),
            (&["--info"], true, Mode::Info),
            (&["--list-models"], false, Mode::Info),
            (&["--build-tools"], true, Mode::Info),
            (&["--macro", "m", "x"], true, Mode::Macro),
            (&["--output-format", "json", "hi"], true, Mode::Headless),
            (&["--input-format", "stream-json"], false, Mode::Headless),
            (&["-e", "list files"], true, Mode::Execute),
            (&["-e"], false, Mode::Execute),
            // A role or a prompt turns `-e` into a one-shot question.
            (&["-e", "-r", "coder", "x"], true, Mode::OneShot),
            // `--info` wins over everything else.
            (&["--info", "--macro", "m"], true, Mode::Info),
        ];
        for (flags, stdin_tty, mode) in cases {
            let args = Args::try_parse_from(std::iter::once("loki").chain(flags.iter().copied()))
                .unwrap_or_else(|e| panic!("{flags:?}: {e}"));
            assert_eq!(
                Mode::choose(&args, *stdin_tty),
                *mode,
                "{flags:?} tty={stdin_tty}"
            );
        }
    }
}
