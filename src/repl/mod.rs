//! The interactive REPL: a reedline loop over one long-lived `RequestContext`.
//!
//! Each line is either a dot-command (parsed by the table in [`commands`] into an
//! [`commands::Action`]) or a prompt sent through `Engine::run` — the same engine the
//! one-shot CLI uses. The conversation is kept across turns until `.empty session`.
//! Ctrl-C while an answer streams cancels that turn only; Ctrl-C at the prompt explains
//! how to leave; Ctrl-D and `.exit` leave.

pub mod clipboard;
pub mod commands;
pub mod completer;
pub mod line_editor;
pub mod prompt;

use std::io::Write;
use std::sync::{Arc, Mutex, RwLock};

use reedline::{Reedline, Signal};
use tokio_util::sync::CancellationToken;

use crate::client::config::ModelKind;
use crate::config::{self, Wrap};
use crate::context::RequestContext;
use crate::engine::command::{self, parse_bool};
use crate::engine::{CoreError, Engine, RunOptions, RunRequest, UserInput};
use crate::render::theme::{Style, Theme};
use crate::render::{Display, TerminalEmitter, TerminalOptions};
use crate::state::AppState;
use commands::Action;
use completer::CompletionData;

/// The REPL's state between lines.
struct Repl {
    engine: Engine,
    ctx: RequestContext,
    display: Display,
    no_color: bool,
    completion: Arc<RwLock<CompletionData>>,
    /// The token Ctrl-C cancels; swapped for a fresh one before every turn.
    current_cancel: Arc<Mutex<CancellationToken>>,
}

/// Runs the REPL until `.exit` or Ctrl-D; returns the exit status.
pub async fn run(state: Arc<AppState>, ctx: RequestContext) -> anyhow::Result<u8> {
    let cwd = std::env::current_dir()?;
    let no_color = state.env.get("NO_COLOR").is_some();
    let display = Display::from_config(&state.config);
    let completion = Arc::new(RwLock::new(completion_data(&state)));
    let editor_cmd = editor_command(&state);
    let mut line_editor = line_editor::build(line_editor::EditorOptions {
        keybindings: &state.config.keybindings,
        history_file: &state.paths.history_file,
        color: display.highlight && !no_color,
        editor: editor_cmd,
        completion: Arc::clone(&completion),
    });
    let current_cancel = Arc::new(Mutex::new(ctx.cancel.clone()));
    let watcher = {
        let current = Arc::clone(&current_cancel);
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                if let Ok(token) = current.lock() {
                    token.cancel();
                }
            }
        })
    };
    let mut repl = Repl {
        engine: Engine::new(state, cwd),
        ctx,
        display,
        no_color,
        completion,
        current_cancel,
    };
    repl.banner();
    // MCP servers start while the user types; the first turn waits only for what is left.
    repl.prepare_mcp();
    let result = repl.run_loop(&mut line_editor).await;
    watcher.abort();
    result
}

impl Repl {
    fn state(&self) -> &Arc<AppState> {
        self.engine.state()
    }

    /// Starts (and stops) MCP servers for the conversation's current scope in the
    /// background.
    fn prepare_mcp(&self) {
        if !self.ctx.function_calling_support {
            return;
        }
        let (servers, _) = self.ctx.mcp_servers(self.state());
        let state = Arc::clone(self.state());
        tokio::spawn(async move { state.mcp.prepare(&servers).await });
    }

    fn theme(&self) -> Theme {
        Theme::detect(true, self.no_color, true, self.display.light)
    }

    fn banner(&self) {
        let theme = self.theme();
        self.println(&format!(
            "loki {} · {} · {} for commands, Ctrl-D to quit",
            env!("CARGO_PKG_VERSION"),
            theme.paint(Style::Bold, &self.ctx.model.id()),
            theme.paint(Style::Bold, ".help"),
        ));
    }

    async fn run_loop(&mut self, editor: &mut Reedline) -> anyhow::Result<u8> {
        loop {
            let prompt = self.prompt();
            let signal = match editor.read_line(&prompt) {
                Ok(signal) => signal,
                Err(e) => anyhow::bail!("terminal error: {e}"),
            };
            match signal {
                Signal::Success(line) if self.handle_line(&line).await => return Ok(0),
                Signal::Success(_) => {}
                Signal::CtrlC => self.note("(to quit, press Ctrl-D or type .exit)"),
                Signal::CtrlD => {
                    self.close_session();
                    return Ok(0);
                }
                _ => {}
            }
        }
    }

    /// Handles one submitted line; true means leave the REPL.
    async fn handle_line(&mut self, line: &str) -> bool {
        let line = line_editor::strip_block(line);
        if line.trim().is_empty() {
            return false;
        }
        let action = if line.trim_start().starts_with('.') {
            commands::parse(&line)
        } else {
            Action::Ask(UserInput {
                text: line,
                ..UserInput::default()
            })
        };
        match action {
            Action::Exit => {
                self.close_session();
                return true;
            }
            Action::Ask(input) => self.ask(input).await,
            Action::Apply(cmd) => {
                match command::apply(self.engine.state(), &mut self.ctx, cmd) {
                    Ok(message) => self.note(&message),
                    Err(e) => self.error(&e.to_string()),
                }
                // A role, session or setting change may need other servers.
                self.prepare_mcp();
            }
            Action::Display { key, value } => self.set_display(&key, &value),
            Action::Help => self.println(&commands::help_text()),
            Action::Info => self.println(&self.info()),
            Action::InfoRole => match &self.ctx.role {
                Some(role) => self.println(&role.export()),
                None => self.error("no role is active"),
            },
            Action::AskWithRole { role, input } => {
                self.ask_with_role(&role, input).await;
                // The role's turn may have run other servers; bring back the usual ones.
                self.prepare_mcp();
            }
            Action::OpenSession(name) => self.open_session(&name),
            Action::ExitSession => {
                if self.ctx.session.is_none() {
                    self.error("no session is open");
                } else {
                    self.close_session();
                }
            }
            Action::SaveSession(name) => {
                match self.ctx.save_session(self.engine.state(), name.as_deref()) {
                    Ok(path) => self.note(&format!("saved {}", path.display())),
                    Err(e) => self.error(&e.to_string()),
                }
            }
            Action::CompressSession => self.compress_session().await,
            Action::Authenticate => self.authenticate().await,
            Action::InfoSession => match self.ctx.session_snapshot() {
                Some(snapshot) => {
                    let yaml = serde_yaml::to_string(&snapshot).unwrap_or_default();
                    self.println(&format!("{yaml}{}", token_summary(&self.ctx)));
                }
                None => self.error("no session is open"),
            },
            Action::Copy => match command::last_answer(&self.ctx) {
                None => self.error("there is no answer to copy yet"),
                Some(text) => match clipboard::copy(&text) {
                    Ok(tool) => self.note(&format!("copied the last answer ({tool})")),
                    Err(e) => self.error(&e),
                },
            },
            Action::ToolResults => match tool_results_text(&self.ctx) {
                Some(text) => self.println(&text),
                None => self.note("the last turn called no tools"),
            },
            Action::EditConfig => self.edit_config(),
            Action::EditRole => self.edit_role(),
            Action::EditSession => self.edit_session(),
            Action::SaveRole(name) => self.save_role(name.as_deref()),
            Action::DeleteRole(name) => {
                let path = self.state().paths.roles_dir.join(format!("{name}.md"));
                match std::fs::remove_file(&path) {
                    Ok(()) => self.note(&format!("deleted {}", path.display())),
                    Err(e) => self.error(&format!("cannot delete {}: {e}", path.display())),
                }
            }
            Action::DeleteSession(name)
                if self
                    .ctx
                    .session
                    .as_ref()
                    .is_some_and(|s| s.name() == name || s.id().to_string() == name) =>
            {
                self.error("that session is open; .exit session first");
            }
            Action::DeleteSession(name) => match self.state().sessions.delete_key(&name) {
                Ok(()) => self.note(&format!("deleted session {name}")),
                Err(e) => self.error(&e.to_string()),
            },
            Action::Usage(message) => self.error(&message),
        }
        false
    }

    async fn ask(&mut self, input: UserInput) {
        let token = CancellationToken::new();
        self.ctx.cancel = token.clone();
        if let Ok(mut current) = self.current_cancel.lock() {
            *current = token.clone();
        }
        let opts = TerminalOptions::detect(&self.display, self.no_color, false);
        let emitter = TerminalEmitter::new(opts, Some(token));
        let request = RunRequest {
            input: Some(input),
            options: RunOptions::default(),
        };
        match self.engine.run(&mut self.ctx, request, &emitter).await {
            Ok(_) | Err(CoreError::Cancelled) => {}
            Err(e) => self.error(&e.to_string()),
        }
        self.println("");
    }

    /// `.role <name> <text>`: one message with the role; the conversation's role, model
    /// and settings are restored afterwards.
    async fn ask_with_role(&mut self, name: &str, input: UserInput) {
        let saved = (
            self.ctx.role.clone(),
            self.ctx.model.clone(),
            Arc::clone(&self.ctx.provider),
            self.ctx.temperature,
            self.ctx.top_p,
        );
        let applied = command::apply(
            self.engine.state(),
            &mut self.ctx,
            command::Command::UseRole(name.to_string()),
        );
        match applied {
            Ok(_) => self.ask(input).await,
            Err(e) => self.error(&e.to_string()),
        }
        (
            self.ctx.role,
            self.ctx.model,
            self.ctx.provider,
            self.ctx.temperature,
            self.ctx.top_p,
        ) = saved;
    }

    /// Runs the editor on `path`; false (after an error line) when it fails.
    fn run_editor(&self, path: &std::path::Path) -> bool {
        let editor = editor_command(self.state());
        let status = editor_process(&editor).arg(path).status();
        if matches!(status, Ok(s) if s.success()) {
            return true;
        }
        self.error(&format!(
            "could not run the editor `{editor}` (set `editor:` or $EDITOR)"
        ));
        false
    }

    fn save_role(&mut self, name: Option<&str>) {
        let Some(role) = self.ctx.role.clone() else {
            return self.error("no role is active");
        };
        let name = name.unwrap_or(&role.name);
        if name == crate::role::TEMP_ROLE {
            return self.error("give the role a name: .save role <name>");
        }
        let path = self.state().paths.roles_dir.join(format!("{name}.md"));
        match crate::atomic_file::write_atomic(&path, role.export().as_bytes(), false) {
            Ok(()) => {
                if let Some(active) = self.ctx.role.as_mut() {
                    active.name = name.to_string();
                }
                self.note(&format!("saved {}", path.display()));
            }
            Err(e) => self.error(&format!("cannot write {}: {e}", path.display())),
        }
    }

    fn edit_role(&mut self) {
        let Some(role) = self.ctx.role.clone() else {
            return self.error("no role is active");
        };
        if role.name == crate::role::TEMP_ROLE {
            return self.error("the temporary role has no file; .save role <name> first");
        }
        let path = self
            .state()
            .paths
            .roles_dir
            .join(format!("{}.md", role.name));
        if !path.exists()
            && crate::atomic_file::write_atomic(&path, role.export().as_bytes(), false).is_err()
        {
            return self.error(&format!("cannot write {}", path.display()));
        }
        if !self.run_editor(&path) {
            return;
        }
        let command = crate::engine::command::Command::UseRole(role.name);
        match command::apply(self.engine.state(), &mut self.ctx, command) {
            Ok(message) => self.note(&message),
            Err(e) => self.error(&e.to_string()),
        }
    }

    fn edit_session(&mut self) {
        let Some(name) = self.ctx.session.as_ref().map(|s| s.id().to_string()) else {
            return self.error("no session is open");
        };
        let path = match self.ctx.save_session(self.engine.state(), None) {
            Ok(path) => path,
            Err(e) => return self.error(&e.to_string()),
        };
        if !self.run_editor(&path) {
            return;
        }
        // Validate before dropping the open session, so a broken edit loses nothing.
        if let Err(e) = crate::session::store::parse_file(&path) {
            return self.error(&format!("{e}; the session stays as it was before the edit"));
        }
        self.ctx.session = None;
        match self.ctx.open_session(self.engine.state(), &name) {
            Ok(_) => self.note(&format!(
                "reloaded the session ({} messages)",
                self.ctx.history.len()
            )),
            Err(e) => self.error(&e.to_string()),
        }
    }

    async fn authenticate(&mut self) {
        let client = self.ctx.model.client.clone();
        let Some(config) = self
            .state()
            .providers
            .oauth_clients()
            .into_iter()
            .find(|c| c.client == client)
        else {
            self.error(&format!(
                "Client '{client}' doesn't either support OAuth or isn't configured to use it (set `auth: oauth` on a claude or gemini client)"
            ));
            return;
        };
        match crate::cli::authenticate::run(&config).await {
            Ok(done) => self.println(&done),
            Err(e) => self.error(&e.to_string()),
        }
    }

    async fn compress_session(&mut self) {
        if self.ctx.session.is_none() {
            return self.error("no session is open");
        }
        let opts = TerminalOptions::detect(&self.display, self.no_color, false);
        let emitter = TerminalEmitter::new(opts, None);
        match self.engine.compress(&mut self.ctx, &emitter).await {
            Ok(true) => {}
            Ok(false) => self.note("nothing to compress yet"),
            Err(e) => self.error(&e.to_string()),
        }
    }

    fn open_session(&mut self, name: &str) {
        if let Some(active) = &self.ctx.session {
            return self.error(&format!(
                "already in session `{}`; .exit session first",
                active.name()
            ));
        }
        match self.ctx.open_session(self.engine.state(), name) {
            Ok(true) => self.note(&format!(
                "session: {name} ({} messages)",
                self.ctx.history.len()
            )),
            Ok(false) => self.note(&format!("session: {name} (new)")),
            Err(e) => self.error(&e.to_string()),
        }
    }

    /// Leaves the session, saving it per `save_session` if it changed: `true` saves (the
    /// temporary session under an autoname), `false` discards, unset asks — and for the
    /// temporary session also asks for a name.
    fn close_session(&mut self) {
        let Some(active) = &self.ctx.session else {
            return;
        };
        let setting = active
            .lock()
            .get()
            .save_session
            .or(self.state().config.save_session);
        let name = active.name();
        let temp = name == crate::session::TEMP_SESSION;
        let mut rename = None;
        let save = active.is_dirty()
            && match setting {
                Some(choice) => choice,
                None => {
                    let asked = inquire::Confirm::new(&format!("Save session `{name}`?"))
                        .with_default(true)
                        .prompt()
                        .unwrap_or(false);
                    if asked && temp {
                        rename = ask_session_name();
                    }
                    asked && (!temp || rename.is_some())
                }
            };
        if save {
            match self
                .ctx
                .save_session(self.engine.state(), rename.as_deref())
            {
                Ok(path) => self.note(&format!("saved the session to {}", path.display())),
                Err(e) => self.error(&e.to_string()),
            }
        }
        self.ctx.session = None;
        self.ctx.history.clear();
        self.note("session closed");
    }

    fn set_display(&mut self, key: &str, value: &str) {
        let result = match key {
            "highlight" => parse_bool(value)
                .map(|v| self.display.highlight = v)
                .ok_or("true or false"),
            "wrap_code" => parse_bool(value)
                .map(|v| self.display.wrap_code = v)
                .ok_or("true or false"),
            _ => match value {
                "null" => {
                    self.display.wrap = None;
                    Some(())
                }
                v => Wrap::parse(v).ok().map(|w| self.display.wrap = Some(w)),
            }
            .ok_or("no, auto or a column count"),
        };
        match result {
            Ok(()) => self.note(&format!("{key}: {value}")),
            Err(expected) => self.error(&format!(
                "invalid value `{value}` for {key}: expected {expected}"
            )),
        }
    }

    fn edit_config(&mut self) {
        let path = self.state().paths.config_file.clone();
        let editor = editor_command(self.state());
        let status = std::process::Command::new(&editor).arg(&path).status();
        if !matches!(status, Ok(s) if s.success()) {
            self.error(&format!(
                "could not run the editor `{editor}` (set `editor:` or $EDITOR)"
            ));
            return;
        }
        let state = self.state();
        let loaded = match config::load::load(&state.paths, &state.env) {
            Ok(Some(loaded)) => loaded,
            Ok(None) => return self.error(&format!("{} no longer exists", path.display())),
            Err(e) => return self.error(&format!("{e} (keeping the previous configuration)")),
        };
        for warning in &loaded.warnings {
            self.note(&format!("warning: {warning}"));
        }
        let new_state = Arc::new(AppState::new(
            loaded.config,
            state.paths.clone(),
            state.env.clone(),
            path.display().to_string(),
        ));
        let model = self.ctx.model.id();
        self.engine = Engine::new(
            Arc::clone(&new_state),
            std::env::current_dir().unwrap_or_default(),
        );
        if self.ctx.set_model(&new_state, &model).is_err() {
            match RequestContext::resolve(&new_state, None) {
                Ok(fresh) => {
                    self.ctx.model = fresh.model;
                    self.ctx.provider = fresh.provider;
                }
                Err(e) => self.error(&format!("{e}")),
            }
        }
        self.display = Display::from_config(&new_state.config);
        if let Ok(mut data) = self.completion.write() {
            *data = completion_data(&new_state);
        }
        self.note(&format!("reloaded {}", path.display()));
    }

    fn prompt(&self) -> prompt::LokiPrompt {
        let config = &self.state().config;
        let vars = self.prompt_vars();
        let left = config
            .left_prompt
            .as_deref()
            .unwrap_or(prompt::DEFAULT_LEFT);
        let right = config
            .right_prompt
            .as_deref()
            .unwrap_or(prompt::DEFAULT_RIGHT);
        prompt::LokiPrompt {
            left: prompt::render(left, &vars),
            right: prompt::render(right, &vars),
        }
    }

    fn prompt_vars(&self) -> prompt::Vars {
        let ctx = &self.ctx;
        let mut vars = prompt::Vars::new().with_colors(self.display.highlight && !self.no_color);
        vars.set("model", ctx.model.id());
        vars.set("client_name", ctx.model.client.clone());
        vars.set("model_name", ctx.model.config.name.clone());
        if let Some(max) = ctx.model.config.max_input_tokens {
            vars.set("max_input_tokens", max.to_string());
        }
        if let Some(t) = ctx.temperature.filter(|t| *t != 0.0) {
            vars.set("temperature", t.to_string());
        }
        if let Some(p) = ctx.top_p {
            vars.set("top_p", p.to_string());
        }
        vars.set("dry_run", ctx.dry_run.to_string());
        vars.set("stream", ctx.stream.to_string());
        if ctx.save {
            vars.set("save", "true");
        }
        match self.display.wrap {
            Some(Wrap::Auto) => vars.set("wrap", "auto"),
            Some(Wrap::Width(w)) => vars.set("wrap", w.to_string()),
            _ => {}
        }
        if let Some(role) = &ctx.role {
            vars.set("role", role.name.clone());
        }
        if let Some(session) = &ctx.session {
            vars.set("session", session.name());
            vars.set("dirty", session.is_dirty().to_string());
            if let Some(autoname) = session.lock().get().autoname.clone() {
                vars.set("session_autoname", autoname);
            }
            let tokens = crate::engine::session_tokens(ctx);
            vars.set("consume_tokens", tokens.to_string());
            if let Some(max) = ctx.model.config.max_input_tokens.filter(|m| *m > 0) {
                vars.set(
                    "consume_percent",
                    format!("{:.2}", tokens as f64 * 100.0 / max as f64),
                );
            }
        }
        if !ctx.usage.is_empty() {
            vars.set("cost", ctx.usage.cost_text());
            vars.set("input_tokens", ctx.usage.input_tokens.to_string());
            vars.set("output_tokens", ctx.usage.output_tokens.to_string());
        }
        vars.set(
            "user_messages_len",
            ctx.history
                .iter()
                .filter(|m| m.role == crate::client::Role::User)
                .count()
                .to_string(),
        );
        vars
    }

    fn info(&self) -> String {
        let ctx = &self.ctx;
        let opt = |v: Option<String>| v.unwrap_or_else(|| "null".into());
        let rows: Vec<(&str, String)> = vec![
            ("model", ctx.model.id()),
            (
                "max_input_tokens",
                opt(ctx.model.config.max_input_tokens.map(|v| v.to_string())),
            ),
            (
                "max_output_tokens",
                opt(ctx
                    .max_output_tokens
                    .or(ctx.model.config.max_output_tokens)
                    .map(|v| v.to_string())),
            ),
            ("temperature", opt(ctx.temperature.map(|v| v.to_string()))),
            ("top_p", opt(ctx.top_p.map(|v| v.to_string()))),
            ("stream", ctx.stream.to_string()),
            ("dry_run", ctx.dry_run.to_string()),
            ("save", ctx.save.to_string()),
            (
                "function_calling_support",
                ctx.function_calling_support.to_string(),
            ),
            ("enabled_tools", opt(ctx.enabled_tools.clone())),
            ("tools", {
                let active: Vec<String> = ctx
                    .active_tools(self.state())
                    .iter()
                    .map(|t| t.name().to_string())
                    .collect();
                if active.is_empty() {
                    "none".into()
                } else {
                    active.join(", ")
                }
            }),
            ("yolo", ctx.tool_policy.yolo.to_string()),
            ("mcp_server_support", ctx.mcp_server_support.to_string()),
            ("enabled_mcp_servers", {
                let (servers, _) = ctx.mcp_servers(self.state());
                if servers.is_empty() {
                    "none".into()
                } else {
                    servers.join(", ")
                }
            }),
            (
                "usage",
                if ctx.usage.is_empty() {
                    "none yet".into()
                } else {
                    ctx.usage.summary()
                },
            ),
            (
                "role",
                ctx.role
                    .as_ref()
                    .map(|r| r.name.clone())
                    .unwrap_or_else(|| "none".into()),
            ),
            ("messages", ctx.history.len().to_string()),
            ("tokens", token_summary(ctx)),
            (
                "session",
                ctx.session
                    .as_ref()
                    .map(crate::session::handle::SessionHandle::name)
                    .unwrap_or_else(|| "none".into()),
            ),
            ("highlight", self.display.highlight.to_string()),
            (
                "wrap",
                opt(self.display.wrap.map(|w| match w {
                    Wrap::No => "no".to_string(),
                    Wrap::Auto => "auto".to_string(),
                    Wrap::Width(n) => n.to_string(),
                })),
            ),
            ("wrap_code", self.display.wrap_code.to_string()),
            ("keybindings", self.state().config.keybindings.clone()),
        ];
        let mut out = String::new();
        for (name, value) in rows {
            out.push_str(&format!("{name:<30}{value}\n"));
        }
        for (name, status) in self.state().mcp.status() {
            out.push_str(&format!("{:<30}{status}\n", format!("mcp:{name}")));
        }
        for (name, path) in self.state().paths.info_rows() {
            out.push_str(&format!("{name:<30}{}\n", path.display()));
        }
        out
    }

    fn println(&self, text: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{text}");
        let _ = out.flush();
    }

    fn note(&self, text: &str) {
        self.println(&self.theme().paint(Style::Dim, text));
    }

    fn error(&self, text: &str) {
        let theme = self.theme();
        let text = crate::secrets::redact(text);
        self.println(&format!("{} {text}", theme.paint(Style::Error, "error:")));
    }
}

fn completion_data(state: &AppState) -> CompletionData {
    CompletionData {
        models: state
            .providers
            .models(ModelKind::Chat)
            .unwrap_or_default()
            .into_iter()
            .map(|m| (m.id(), m.describe()))
            .collect(),
        roles_dir: state.paths.roles_dir.clone(),
        sessions: Some(Arc::clone(&state.sessions)),
    }
}

/// A process for an editor command line such as `code --wait` (split like a shell would).
pub fn editor_process(editor: &str) -> std::process::Command {
    let mut words = commands::split_words(editor).into_iter();
    let mut cmd = std::process::Command::new(words.next().unwrap_or_else(|| "nano".into()));
    cmd.args(words);
    cmd
}

/// `editor:` from config, else `$VISUAL`, `$EDITOR`, else `nano`.
fn editor_command(state: &AppState) -> String {
    state
        .config
        .editor
        .clone()
        .or_else(|| state.env.get("VISUAL").map(str::to_string))
        .or_else(|| state.env.get("EDITOR").map(str::to_string))
        .unwrap_or_else(|| "nano".into())
}

/// Asks what to call the temporary session being saved; `None` if the user gives up.
fn ask_session_name() -> Option<String> {
    let validator = |text: &str| {
        let text = text.trim();
        Ok(if text.is_empty() || text == crate::session::TEMP_SESSION {
            inquire::validator::Validation::Invalid("choose a name other than `temp`".into())
        } else if let Err(e) = crate::session::id::SessionAlias::new(text) {
            inquire::validator::Validation::Invalid(e.to_string().into())
        } else {
            inquire::validator::Validation::Valid
        })
    };
    inquire::Text::new("Session name:")
        .with_validator(validator)
        .prompt()
        .ok()
        .map(|name| name.trim().to_string())
}

/// `1234 tokens (0.96% of the 128000-token context, exact)`.
fn token_summary(ctx: &RequestContext) -> String {
    let tokens = crate::engine::session_tokens(ctx);
    let how = match crate::tokens::Counter::for_model(ctx.model.real_name()) {
        crate::tokens::Counter::O200k => "exact",
        crate::tokens::Counter::Estimate => "estimate",
    };
    match ctx.model.config.max_input_tokens.filter(|m| *m > 0) {
        Some(max) => format!(
            "{tokens} tokens ({:.2}% of the {max}-token context, {how})",
            tokens as f64 * 100.0 / max as f64
        ),
        None => format!("{tokens} tokens ({how})"),
    }
}

/// The tool calls since the last user message, each with its full result.
fn tool_results_text(ctx: &RequestContext) -> Option<String> {
    use crate::client::Role;
    let start = ctx.history.iter().rposition(|m| m.role == Role::User)?;
    let turn = &ctx.history[start..];
    let mut out = String::new();
    for message in turn.iter().filter(|m| m.role == Role::Tool) {
        let call = turn
            .iter()
            .flat_map(|m| m.tool_calls.iter())
            .find(|c| Some(&c.id) == message.tool_call_id.as_ref());
        let title = call.map_or_else(
            || "tool".to_string(),
            |c| format!("{} {}", c.name, c.arguments),
        );
        out.push_str(&format!("── {title}\n{}\n", message.text_content()));
    }
    (!out.is_empty()).then_some(out)
}
