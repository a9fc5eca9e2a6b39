//! The one-shot front end: parse arguments, load configuration, build one
//! `RequestContext`, call `Engine::run` once, map the result to an exit code.
//!
//! This is also where the process starts (`main_entry`): the runtime is a single-threaded
//! tokio runtime, created only after argument parsing so `--version` and `--help` cost
//! nothing beyond clap.

pub mod args;
pub mod authenticate;
mod build_tools;
mod complete;
mod execute;
mod info;
mod menu;
pub(crate) mod rag;
mod sync_models;
pub mod vault;
mod wizard;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use clap::Parser;

use crate::client::config::ModelKind;
use crate::config::{self, AppConfig, ConfigError, Env, Paths};
use crate::context::RequestContext;
use crate::engine::{CoreError, Engine, RunOptions, RunRequest, UserInput};
use crate::render::sanitize;
use crate::render::theme::{Style, Theme};
use crate::render::{Display, TerminalEmitter, TerminalOptions};
use crate::role::{self, Role, SystemVars};
use crate::state::AppState;
use args::{Args, ShellKind};

/// Runs loki with the process arguments and environment; returns the exit status.
pub fn main_entry() -> ExitCode {
    if std::env::var_os("COMPLETE").is_some_and(|v| !v.is_empty()) {
        complete::complete_from_env();
    }
    let args = match Args::try_parse() {
        Ok(args) => args,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    if let Some(shell) = args.completions {
        return print_completions(shell);
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
        return ExitCode::SUCCESS;
    }
    let mut env = Env::capture();
    let paths = Paths::resolve(&env);
    let stderr_theme = Theme::detect(
        std::io::stderr().is_terminal(),
        env.get("NO_COLOR").is_some(),
        true,
        false,
    );
    if let Err(e) = env.load_dotenv(&paths.env_file) {
        report_error(
            &stderr_theme,
            &format!("cannot read {}: {e}", paths.env_file.display()),
        );
        return ExitCode::from(1);
    }
    let paths = paths.reresolve(&env);
    crate::logging::init(&env, paths.log_file.clone());
    // A panic aborts in release builds: stop MCP servers' process groups first.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        crate::mcp::server::terminate_all();
        default_hook(info);
    }));

    // The REPL's line editor blocks its thread while the user types, and MCP servers (and
    // background starts) must keep running meanwhile: it gets two workers. One-shot runs
    // stay on one thread, where streaming is several times cheaper (no cross-thread wakeup
    // per network read).
    let repl = args.text.is_empty()
        && args.files.is_empty()
        && !args.execute
        && std::io::stdin().is_terminal();
    let runtime = match if repl {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    } {
        Ok(rt) => rt,
        Err(e) => {
            report_error(
                &stderr_theme,
                &format!("cannot start the async runtime: {e}"),
            );
            return ExitCode::from(1);
        }
    };
    let outcome = runtime.block_on(run(args, env, paths));
    if crate::signals::blocked_threads_left() {
        // A thread may still be blocked on the terminal or a lock; do not wait for it.
        runtime.shutdown_background();
    }
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            report_error(&stderr_theme, &format!("{e:#}"));
            ExitCode::from(1)
        }
    }
}

fn print_completions(shell: ShellKind) -> ExitCode {
    use clap::CommandFactory;
    let mut cmd = Args::command();
    let mut out = std::io::stdout().lock();
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
    ExitCode::SUCCESS
}

/// `error: <message>` on stderr; the message (often a provider's or server's words) has
/// its control characters escaped.
fn report_error(theme: &Theme, message: &str) {
    // Known keys and tokens never reach the terminal, whatever a server echoed.
    let message = crate::secrets::redact(message);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "{} {}",
        theme.paint(Style::Error, "error:"),
        sanitize::display(&message)
    );
}

fn report_warning(theme: &Theme, message: &str) {
    let message = crate::secrets::redact(message);
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "{} {}",
        theme.paint(Style::Warning, "warning:"),
        sanitize::display(&message)
    );
}

/// A one-line note about the session on stderr (waiting for its lock, merges).
fn session_note(line: &str) {
    let theme = Theme::detect(
        std::io::stderr().is_terminal(),
        std::env::var_os("NO_COLOR").is_some(),
        true,
        false,
    );
    let _ = writeln!(
        std::io::stderr().lock(),
        "{}",
        theme.paint(Style::Dim, line)
    );
}

/// Warns when the session opened names a model that is not available.
fn warn_session_model(ctx: &RequestContext) {
    if let Some(warning) = ctx.session_model_warning() {
        let theme = Theme::detect(
            std::io::stderr().is_terminal(),
            std::env::var_os("NO_COLOR").is_some(),
            true,
            false,
        );
        report_warning(&theme, &warning);
    }
}

/// `--empty-session`: forget the session's conversation (after taking its lock, when
/// the run holds one, so nobody else's exchange is forgotten unseen).
fn empty_session(state: &AppState, ctx: &mut RequestContext, args: &Args) -> Result<(), CoreError> {
    if args.empty_session && ctx.session.is_some() {
        crate::engine::command::apply(
            state,
            ctx,
            crate::engine::command::Command::ClearConversation,
        )?;
    }
    Ok(())
}

async fn run(args: Args, env: Env, paths: Paths) -> anyhow::Result<u8> {
    // Before the configuration: its placeholders may name the secret being added.
    if let Some(op) = vault::Op::from_args(&args) {
        return vault::run(op, &paths, &env);
    }
    let stdin_tty = std::io::stdin().is_terminal();
    let stdout_tty = std::io::stdout().is_terminal();
    let info_only = args.info
        || args.list_models
        || args.list_roles
        || args.list_sessions
        || args.list_rags
        || args.sync_models;

    let (config, origin) = match load_config(&paths, &env, stdin_tty && stdout_tty, info_only).await
    {
        Ok(found) => found,
        // Leaving the setup is a choice, not a failure: one quiet line, status 0.
        Err(ConfigError::SetupCancelled) => {
            session_note(&ConfigError::SetupCancelled.to_string());
            return Ok(0);
        }
        Err(e) => return Err(e.into()),
    };
    let state = Arc::new(AppState::new(config, paths, env, origin));

    if let Some(name) = &args.authenticate {
        let config = authenticate::choose(&state, name.as_deref())?;
        let done = authenticate::run(&config).await?;
        writeln!(std::io::stderr().lock(), "{}", sanitize::display(&done))?;
        return Ok(0);
    }
    if args.sync_models {
        let url = state
            .config
            .sync_models_url
            .clone()
            .unwrap_or_else(|| sync_models::DEFAULT_URL.to_string());
        let target = &state.paths.models_override_file;
        sync_models::sync(&url, target, state.config.user_agent().as_deref()).await?;
        let mut err = std::io::stderr().lock();
        writeln!(err, "✓ Fetched '{url}'")?;
        writeln!(err, "✓ Updated '{}'", target.display())?;
        return Ok(0);
    }
    if args.list_roles {
        let mut out = std::io::stdout().lock();
        for name in role::list(&state.paths.roles_dir) {
            writeln!(out, "{}", sanitize::for_terminal(&name, stdout_tty))?;
        }
        return Ok(0);
    }
    if args.build_tools {
        return build_tools::run(&state);
    }
    if args.list_rags {
        let mut out = std::io::stdout().lock();
        for name in crate::rag::list(&state.paths.rags_dir) {
            writeln!(out, "{name}")?;
        }
        return Ok(0);
    }
    if args.list_sessions {
        let mut out = std::io::stdout().lock();
        for meta in state.sessions.list() {
            writeln!(out, "{}", sanitize::for_terminal(&meta.name(), stdout_tty))?;
        }
        return Ok(0);
    }
    if args.list_models {
        let mut out = std::io::stdout().lock();
        // Chat models one per line (ready for `-m`), then embedding and reranker models
        // marked with their type.
        for model in state.providers.models(ModelKind::Chat)? {
            writeln!(out, "{}", sanitize::for_terminal(&model.id(), stdout_tty))?;
        }
        for kind in [ModelKind::Embedding, ModelKind::Reranker] {
            for model in state.providers.models(kind)? {
                let id = model.id();
                let id = sanitize::for_terminal(&id, stdout_tty);
                // A tab-separated type column: `cut -f1` leaves plain ids.
                writeln!(out, "{id}\t{}", kind.as_str())?;
            }
        }
        return Ok(0);
    }
    if args.info {
        let active = info::active(&state, args.role.as_deref(), args.session.as_deref())?;
        let text = info::render(&state, args.model.as_deref(), active);
        let text = sanitize::for_terminal(&text, stdout_tty);
        std::io::stdout().lock().write_all(text.as_bytes())?;
        return Ok(0);
    }

    // First run: write the built-in roles where the user can edit them. The information
    // commands above never write anything.
    if let Err(e) = role::install_builtins(&state.paths.roles_dir) {
        tracing::warn!("cannot install the built-in roles: {e}");
    }
    let mut text = args.text.join(" ");
    if text.is_empty() && args.files.is_empty() && stdin_tty && !args.execute {
        if !stdout_tty {
            anyhow::bail!("the REPL needs a terminal on stdout; give a prompt to run one-shot");
        }
        let mut ctx = RequestContext::resolve(&state, args.model.as_deref())?;
        set_approver(&mut ctx, &args);
        apply_role_flags(
            &state,
            &mut ctx,
            &args,
            state.config.repl_prelude.as_deref(),
        )?;
        empty_session(&state, &mut ctx, &args)?;
        warn_session_model(&ctx);
        if args.dry_run {
            ctx.dry_run = true;
        }
        if args.no_stream {
            ctx.stream = false;
        }
        if rag::prepare(&state, &mut ctx, &args, false, true).await? == rag::RagStep::Done {
            return Ok(0);
        }
        return crate::repl::run(state, ctx).await;
    }
    if !stdin_tty {
        let piped = crate::engine::input::read_text_bounded(
            std::io::stdin().lock(),
            state.config.max_input_size,
        )?;
        if !piped.trim().is_empty() {
            text = if text.is_empty() {
                piped
            } else {
                format!("{text}\n{piped}")
            };
        }
    }

    let mut ctx = RequestContext::resolve(&state, args.model.as_deref())?;
    set_approver(&mut ctx, &args);
    if args.execute && args.prompt.is_none() && args.role.is_none() {
        if args.dry_run {
            ctx.dry_run = true;
        }
        if let Some(name) = &args.session {
            ctx.open_session(&state, name)?;
            // Held until the session is written, so a concurrent run on it waits.
            ctx.lock_session(&state, None, &session_note).await?;
            empty_session(&state, &mut ctx, &args)?;
            warn_session_model(&ctx);
        }
        let cwd = std::env::current_dir().context("cannot determine the current directory")?;
        let engine = Engine::new(Arc::clone(&state), cwd);
        let input = UserInput {
            text,
            files: args.files.clone(),
            continuation: None,
        };
        let status = execute::run(&engine, &mut ctx, input, args.model.as_deref()).await;
        finish_session(&state, &mut ctx, args.save_session).await?;
        return status;
    }

    // Ctrl-C, SIGTERM and SIGHUP all stop the turn the same way: the partial answer is
    // kept and the session saved; the exit status names the signal.
    let stopped = Arc::new(std::sync::OnceLock::new());
    let mut signals =
        crate::signals::StopSignals::listen(true).context("cannot listen for signals")?;
    let listener = {
        let cancel = ctx.cancel.clone();
        let stopped = Arc::clone(&stopped);
        tokio::spawn(async move {
            let signal = signals.recv().await;
            let _ = stopped.set(signal);
            cancel.cancel();
            // Later signals are absorbed: the run is already finishing.
            loop {
                signals.recv().await;
            }
        })
    };
    let stop_code = |fallback: u8| {
        stopped
            .get()
            .map_or(fallback, |s: &crate::signals::StopSignal| s.exit_code())
    };

    apply_role_flags(&state, &mut ctx, &args, state.config.cmd_prelude.as_deref())?;
    // Held until the session is written: a concurrent run on the same session waits, and
    // then starts from the history this run saved.
    let cancel = ctx.cancel.clone();
    match ctx.lock_session(&state, Some(&cancel), &session_note).await {
        Ok(_) => {}
        Err(CoreError::Cancelled) => return Ok(stop_code(130)),
        Err(e) => return Err(e.into()),
    }
    empty_session(&state, &mut ctx, &args)?;
    warn_session_model(&ctx);
    if args.dry_run {
        ctx.dry_run = true;
    }
    let has_prompt = !text.trim().is_empty() || !args.files.is_empty();
    if rag::prepare(&state, &mut ctx, &args, has_prompt, false).await? == rag::RagStep::Done {
        return Ok(0);
    }

    let no_color = state.env.get("NO_COLOR").is_some();
    let display = Display::from_config(&state.config);
    let opts = TerminalOptions::detect(&display, no_color, args.code);
    let stderr_theme = opts.stderr;
    let emitter = TerminalEmitter::new(opts, Some(ctx.cancel.clone()));

    let cwd = std::env::current_dir().context("cannot determine the current directory")?;
    let engine = Engine::new(Arc::clone(&state), cwd);
    let request = RunRequest {
        input: Some(UserInput {
            text,
            files: args.files.clone(),
            continuation: None,
        }),
        options: RunOptions {
            stream: (args.no_stream || args.code).then_some(false),
        },
    };
    let result = engine.run(&mut ctx, request, &emitter).await;
    if args.save_session && result.is_ok() && stopped.get().is_none() {
        engine.autoname_or_warn(&mut ctx, &emitter).await;
    }
    if stopped.get().is_some() {
        // A tool approval menu may have been waiting in raw mode.
        crate::signals::restore_terminal();
    }
    let finished = finish_session(&state, &mut ctx, args.save_session).await;
    ctx.unlock_session();
    listener.abort();
    if let Err(e) = finished {
        report_error(&stderr_theme, &e.to_string());
        // The run's own failure (say Ctrl-C, 130) still decides the exit code.
        return Ok(match &result {
            Err(CoreError::Cancelled) if !emitter.broken_pipe() => stop_code(130),
            Err(e) if !emitter.broken_pipe() => e.exit_code(),
            _ => 1,
        });
    }
    match result {
        Ok(_) if stopped.get().is_some() => Ok(stop_code(0)),
        Ok(_) => Ok(0),
        Err(_) if emitter.broken_pipe() => Ok(0),
        Err(CoreError::Cancelled) => Ok(stop_code(130)),
        Err(e) => {
            let code = e.exit_code();
            report_error(&stderr_theme, &e.to_string());
            Ok(code)
        }
    }
}

/// Who approves tool calls: `--yolo` approves all; with a terminal to ask on, the
/// person there; otherwise calls that need approval are refused.
fn set_approver(ctx: &mut RequestContext, args: &Args) {
    if args.yolo {
        ctx.tool_policy.yolo = true;
    }
    let interactive = std::io::stderr().is_terminal() && std::io::stdin().is_terminal();
    if interactive {
        let theme = Theme::detect(true, std::env::var_os("NO_COLOR").is_some(), true, false);
        ctx.approver = Arc::new(crate::render::approval::TerminalApprover::new(theme));
    }
}

/// `cmd_prelude` / `repl_prelude`: `role:<name>`, `session:<name>` or
/// `<session>:<role>`, applied when no role or session was given on the command line.
fn apply_prelude(
    state: &AppState,
    ctx: &mut RequestContext,
    prelude: &str,
    model: Option<&str>,
) -> Result<(), CoreError> {
    let vars = SystemVars::detect(&state.env);
    let (session, role) = match prelude.split_once(':') {
        Some(("role", name)) => (None, Some(name)),
        Some(("session", name)) => (Some(name), None),
        Some((session, role)) => (Some(session), Some(role)),
        None => {
            return Err(CoreError::InvalidRequest(format!(
                "invalid prelude `{prelude}`: use role:<name>, session:<name> or <session>:<role>"
            )));
        }
    };
    if let Some(name) = session {
        ctx.open_session(state, name)?;
    }
    if let Some(name) = role
        && ctx.history.is_empty()
    {
        ctx.use_role(state, Role::load(&state.paths.roles_dir, name, &vars)?)?;
    }
    if let Some(model) = model {
        ctx.set_model(state, model)?;
    }
    Ok(())
}

/// Saves the session after a one-shot run: named sessions are saved unless
/// `save_session: false`; the temporary session only with `save_session: true` or
/// `--save-session` (under `_/<timestamp>-<title>`). Whatever arrived before an error,
/// Ctrl-C, SIGTERM or SIGHUP is saved too.
async fn finish_session(
    state: &AppState,
    ctx: &mut RequestContext,
    force: bool,
) -> Result<(), CoreError> {
    let Some(active) = &ctx.session else {
        return Ok(());
    };
    let setting = active
        .lock()
        .get()
        .save_session
        .or(state.config.save_session);
    let temp = active.name() == crate::session::TEMP_SESSION;
    let save =
        force || (active.is_dirty() && setting != Some(false) && (!temp || setting == Some(true)));
    if save {
        let saved = ctx.save_session(state, None, &session_note).await?;
        if let Some(forked) = &saved.forked {
            let theme = Theme::detect(std::io::stderr().is_terminal(), false, true, false);
            report_warning(&theme, forked);
        }
        tracing::info!("saved session to {}", saved.path.display());
    }
    Ok(())
}

/// Applies `-s`, then the role flags, then `-m`: `--prompt` (a temporary role) wins over
/// `-r`, which wins over the `code` role of `-c`; `-m` overrides the session's and the
/// role's model.
fn apply_role_flags(
    state: &AppState,
    ctx: &mut RequestContext,
    args: &Args,
    prelude: Option<&str>,
) -> Result<(), CoreError> {
    let explicit =
        args.session.is_some() || args.role.is_some() || args.prompt.is_some() || args.code;
    if let Some(prelude) = prelude.filter(|p| !explicit && !p.trim().is_empty()) {
        return apply_prelude(state, ctx, prelude, args.model.as_deref());
    }
    if let Some(name) = &args.session {
        ctx.open_session(state, name)?;
    }
    let vars = SystemVars::detect(&state.env);
    let role = match (&args.prompt, &args.role, args.code) {
        (Some(prompt), _, _) => Some(Role::temp(prompt)),
        (None, Some(name), _) => Some(Role::load(&state.paths.roles_dir, name, &vars)?),
        (None, None, true) => Some(Role::load(&state.paths.roles_dir, "code", &vars)?),
        _ => None,
    };
    if let Some(role) = role {
        ctx.use_role(state, role)?;
    }
    if let Some(model) = &args.model {
        ctx.set_model(state, model)?;
    }
    Ok(())
}

/// Applies `LOKI_<KEY>` overrides to a configuration synthesised without a file: the
/// overrides are read into a default configuration, which then takes the synthesised
/// clients (and model, unless `LOKI_MODEL` chose one).
fn with_env_overrides(
    synth: AppConfig,
    paths: &Paths,
    env: &Env,
) -> Result<AppConfig, ConfigError> {
    let mut config = config::load::parse("", &paths.config_file, env)?.config;
    config.clients = synth.clients;
    if config.model.is_none() {
        config.model = synth.model;
    }
    Ok(config)
}

/// Finds the configuration: the config file, else the environment, else a local model
/// server, else (on a terminal) the first-run wizard.
async fn load_config(
    paths: &Paths,
    env: &Env,
    interactive: bool,
    info_only: bool,
) -> Result<(AppConfig, String), ConfigError> {
    if let Some(loaded) = config::load::load(paths, env)? {
        let theme = Theme::detect(
            std::io::stderr().is_terminal(),
            env.get("NO_COLOR").is_some(),
            true,
            false,
        );
        let mut err = std::io::stderr().lock();
        for warning in &loaded.warnings {
            let _ = writeln!(
                err,
                "{} {}",
                theme.paint(Style::Warning, "warning:"),
                sanitize::display(warning)
            );
        }
        return Ok((loaded.config, paths.config_file.display().to_string()));
    }
    if let Some(found) = config::zero::from_env(env)? {
        return Ok((with_env_overrides(found.config, paths, env)?, found.origin));
    }
    if let Some(found) = config::zero::probe_local(env).await {
        return Ok((with_env_overrides(found.config, paths, env)?, found.origin));
    }
    if info_only {
        return Ok((AppConfig::default(), "none".into()));
    }
    if interactive {
        return wizard::run(paths, env).await;
    }
    Err(ConfigError::NoConfig {
        path: paths.config_file.clone(),
        vars: config::zero::hint_vars(),
    })
}
