//! The interactive REPL: a reedline loop over one long-lived `Conversation`.
//!
//! Each line is either a dot-command (parsed by the table in [`dotcmd`] into an
//! [`dotcmd::Action`]) or a prompt sent through `Engine::run` — the same engine the
//! one-shot CLI uses. The conversation is kept across turns until `.empty session`.
//! Ctrl-C while an answer streams cancels that turn only; Ctrl-C at the prompt explains
//! how to leave; Ctrl-D and `.exit` leave (Esc at the "Save session?" question goes back
//! to the prompt instead). SIGTERM and SIGHUP end the REPL at any point without losing
//! work: a running turn stops as with Ctrl-C, the session is saved (unless
//! `save_session: false`), the terminal is restored, and the exit status names the
//! signal.
//!
//! Everything that waits for the user (the line editor, the session questions) runs on a
//! thread of its own, so a signal is noticed even while nobody types.

mod actions;
pub mod completer;
mod create;
mod history;
mod init;
mod interrupt;
mod leave;
pub mod line_editor;
mod mcp;
mod message_edit;
mod paste;
pub mod prompt;
pub mod rag;
mod rewind;
mod session_edit;
mod sessions;
mod status_line;
mod turn_input;
pub(crate) use turn_input::{hold_startup_keys, release_startup_keys};
mod vault;
mod workspace;

use std::io::Write;
use std::sync::{Arc, Mutex, RwLock};

use reedline::{Reedline, Signal};

use crate::config::clients::ModelKind;
use crate::config::{self, Wrap};
use crate::conversation::parse_bool;
use crate::conversation::{Conversation, ConversationSpec};
use crate::dotcmd::{self, Action};
use crate::error::CoreError;
use crate::render::theme::{Style, Theme};
use crate::render::{Display, TerminalEmitter, TerminalOptions};
use crate::signals::{StopSignal, StopWatch};
use crate::state::AppState;
use completer::CompletionData;
use leave::Interrupted;
use loki_protocol::command::Command;
use loki_protocol::op::{RunOptions, UserInput};
use loki_wire::sanitize;

/// What to do after a line.
enum Next {
    /// Read the next line.
    Stay,
    /// Leave the REPL with this exit status.
    Quit(u8),
}

/// The REPL's state between lines.
struct Repl {
    conv: Conversation,
    /// The shared services; replaced with the conversation's when the configuration is
    /// reloaded (`.edit config`).
    state: Arc<AppState>,
    display: Display,
    no_color: bool,
    completion: Arc<RwLock<CompletionData>>,
    /// SIGTERM or SIGHUP, once one arrived; it cancels the conversation's token.
    stop: Arc<StopWatch>,
    /// The conversation's token, made here (see [`crate::conversation::ConversationSpec::cancel`]).
    cancel: tokio_util::sync::CancellationToken,
    /// Where lines typed during a turn wait for its next step (the conversation's queue).
    queue: Arc<crate::conversation::PromptQueue>,
    /// What Ctrl-C stops.
    interrupt: Arc<interrupt::Interrupt>,
    /// MCP servers leased in the background for the next turn.
    prepared: Arc<Mutex<Option<crate::mcp::McpLease>>>,
    /// The live view of sub-agents, shared by every turn's emitter.
    live: Arc<crate::render::live::LiveView>,
    /// Lines typed during the last turn that run before the next prompt.
    pending: std::collections::VecDeque<String>,
    /// A line typed during the last turn without Enter, put back in the prompt.
    partial: String,
    /// Lines typed while loki was busy (a turn, a slow command), for the history: the
    /// line editor never read them, so it did not record them.
    typed_for_history: Vec<String>,
    /// Images pasted (Ctrl-V, `.paste`) for the next prompt, as `data:` URLs.
    pasted: Vec<String>,
    /// The `status_line` command's last line, shown above the prompt.
    status_line: status_line::StatusLineCache,
}

/// Runs the REPL until `.exit` or Ctrl-D; returns the exit status.
/// `cancel` and `queue` are the ones the conversation was opened with.
pub async fn run(
    state: Arc<AppState>,
    mut conversation: Conversation,
    cancel: tokio_util::sync::CancellationToken,
    queue: Arc<crate::conversation::PromptQueue>,
) -> anyhow::Result<u8> {
    let no_color = state.terminal.no_color;
    let live =
        crate::render::live::LiveView::new(state.terminal.stderr_tty && !no_color, !no_color);
    conversation.observe_sub_agents(Arc::new(crate::render::live::Observer(Arc::clone(&live))));
    let display = Display::from_config(&state.config);
    let completion = Arc::new(RwLock::new(completion_data(&state)));
    let editor_cmd = crate::term::editor::command(&state);
    let line_editor = line_editor::build(line_editor::EditorOptions {
        keybindings: &state.config.keybindings,
        // Off the record, nothing typed is kept.
        history_file: (!conversation.status().otr).then_some(state.paths.history_file.as_path()),
        color: display.highlight && !no_color,
        editor: editor_cmd,
        completion: Arc::clone(&completion),
    });
    // Ctrl-C stops what runs now; SIGTERM and SIGHUP end the REPL.
    let stop = Arc::new(StopWatch::start(cancel.clone(), false)?);
    let interrupt = Arc::new(interrupt::Interrupt::new(conversation.remote()));
    let watcher = {
        let interrupt = Arc::clone(&interrupt);
        tokio::spawn(async move {
            while tokio::signal::ctrl_c().await.is_ok() {
                interrupt.now();
            }
        })
    };
    let mut repl = Repl {
        conv: conversation,
        state,
        display,
        no_color,
        completion,
        stop,
        cancel,
        queue,
        interrupt,
        prepared: Arc::new(Mutex::new(None)),
        live,
        pending: std::collections::VecDeque::new(),
        partial: String::new(),
        typed_for_history: Vec::new(),
        pasted: Vec::new(),
        status_line: status_line::StatusLineCache::default(),
    };
    repl.sync_completion();
    repl.banner();
    // MCP servers start while the user types; the first turn waits only for what is left.
    repl.prepare_mcp();
    let result = repl.run_loop(line_editor).await;
    watcher.abort();
    // Leaving asked about the session already; closing shuts sub-agents and MCP servers
    // down and writes what the policy still says to write.
    let theme = repl.theme();
    let closed = repl.conv.close(&loki_protocol::emitter::Discard).await;
    if let Err(e) = &closed.saved {
        crate::term::report_error(&theme, &e.to_string());
    }
    result
}

impl Repl {
    fn state(&self) -> &Arc<AppState> {
        &self.state
    }

    /// Leases the MCP servers of the conversation's current scope in the background
    /// (starting them while the user types); the previous background lease is let go,
    /// so servers no longer in scope stop once no conversation holds them.
    fn prepare_mcp(&mut self) {
        self.conv.warm_mcp(Arc::clone(&self.prepared));
    }

    fn theme(&self) -> Theme {
        Theme::detect(true, self.no_color, true, self.display.light)
    }

    fn banner(&self) {
        let theme = self.theme();
        self.print_styled(&format!(
            "loki {} · {} · {} for commands, Ctrl-D to quit",
            env!("CARGO_PKG_VERSION"),
            theme.paint(Style::Bold, &sanitize::display(&self.conv.status().model)),
            theme.paint(Style::Bold, ".help"),
        ));
        // A system that cannot confine is said at start; which layers this kernel gives
        // is found with the first command, and a missing one said then (`.sandbox` and
        // `.info` show them).
        if self.conv.status().sandbox == "danger-full-access"
            && let Some(note) = crate::conversation::confinement::default_note(self.state())
        {
            crate::term::session_note(&theme, &sanitize::display(&note));
        }
    }

    async fn run_loop(&mut self, editor: Reedline) -> anyhow::Result<u8> {
        let mut editor = Some(editor);
        let mut history_dropped = self.conv.status().otr;
        loop {
            if let Some(signal) = self.stopped() {
                return Ok(self.terminate(signal).await);
            }
            let Some(mut reader) = editor.take() else {
                anyhow::bail!("terminal error: the line editor was lost");
            };
            // Off the record (`.otr`), history stays in memory from the next line on.
            if self.conv.status().otr && !history_dropped {
                history_dropped = true;
                reader = line_editor::forget_history(reader);
            }
            // Keys typed while loki was busy (starting, a slow dot-command) become lines,
            // each run on its own, instead of one buffer reedline would read as a paste.
            let (typed, quiet) = turn_input::drain(self.state().terminal.stdin_tty);
            let typed_lines: Vec<String> = typed
                .lines
                .into_iter()
                .filter(|l| !l.trim().is_empty())
                .collect();
            self.typed_for_history.extend(typed_lines.iter().cloned());
            self.pending.extend(typed_lines);
            self.remember_typed(&mut reader);
            self.partial.push_str(&typed.partial);
            // Lines typed during the last turn that it did not take run first.
            if let Some(line) = self.pending.pop_front() {
                drop(quiet);
                editor = Some(reader);
                self.note(&format!("queued: {line}"));
                if let Next::Quit(code) = self.handle_line(&line).await {
                    return Ok(code);
                }
                continue;
            }
            if !self.partial.is_empty() {
                let partial = std::mem::take(&mut self.partial);
                reader.run_edit_commands(&[reedline::EditCommand::InsertString(partial)]);
            }
            // Between turns the terminal is the prompt's: a sub-agent's question still
            // open is put off (asked again during the next turn), and approvals wait.
            crate::term::ask::put_off_others();
            let stop = Arc::clone(&self.stop);
            let terminal = tokio::select! {
                terminal = crate::term::ask::one_at_a_time() => terminal,
                signal = stop.wait() => return Ok(self.terminate(signal).await),
            };
            self.show_status_line().await;
            let prompt = self.prompt();
            let read = self
                .ask_user(move || {
                    let line = reader.read_line(&prompt);
                    // Each submitted line reaches history.txt at once: a closed terminal
                    // or a signal that leaves this thread behind loses nothing.
                    if matches!(line, Ok(Signal::Success(_))) {
                        let _ = reader.sync_history();
                    }
                    (reader, line)
                })
                .await;
            drop(terminal);
            let line = match read {
                Ok((reader, line)) => {
                    editor = Some(reader);
                    line
                }
                Err(Interrupted::Signal(signal)) => return Ok(self.terminate(signal).await),
                Err(Interrupted::Lost) => {
                    self.save_on_exit().await;
                    anyhow::bail!("terminal error: the line editor stopped");
                }
            };
            // The line is read: what is typed now waits for the next prompt's drain. (On
            // the ways out above, `quiet` is dropped on return, after `terminate` has
            // restored the terminal: the abandoned editor hands back the quiet mode, and
            // dropping `quiet` then puts back the user's own.)
            drop(quiet);
            let signal = match line {
                Ok(signal) => signal,
                Err(e) => {
                    // The terminal is gone: keep the conversation, as on a hangup.
                    self.save_on_exit().await;
                    anyhow::bail!("terminal error: {e}");
                }
            };
            let next = match signal {
                Signal::Success(line) => self.handle_line(&line).await,
                Signal::CtrlC => {
                    self.note("(to quit, press Ctrl-D or type .exit)");
                    Next::Stay
                }
                Signal::CtrlD => self.quit().await,
                Signal::HostCommand(command) if command == line_editor::NEXT_MODE => {
                    self.handle_line(".mode next").await
                }
                Signal::HostCommand(command) if command == line_editor::PASTE => {
                    self.paste_image().await;
                    Next::Stay
                }
                _ => Next::Stay,
            };
            if let Next::Quit(code) = next {
                return Ok(code);
            }
        }
    }

    /// The stop signal received, if any.
    fn stopped(&self) -> Option<StopSignal> {
        self.stop.signal()
    }

    /// Handles one submitted line.
    async fn handle_line(&mut self, line: &str) -> Next {
        let line = line_editor::strip_block(line);
        if line.trim().is_empty() {
            return Next::Stay;
        }
        let action = if line.trim_start().starts_with('.') {
            dotcmd::parse(&line)
        } else {
            Action::Ask(UserInput {
                text: line,
                ..UserInput::default()
            })
        };
        // Keys typed while a command works are not echoed; the next prompt takes them.
        let new_role = matches!(&action, Action::Apply(Command::UseRole(name))
            if !crate::role::list(&self.state().paths.roles_dir).contains(name));
        let _quiet = (quiet_during(&action) && !new_role).then(turn_input::QuietInput::start);
        self.perform(action).await
    }

    async fn ask(&mut self, mut input: UserInput) {
        // Images pasted since the last prompt go with this one.
        input.images.append(&mut self.pasted);
        let token = self.cancel.clone();
        let opts = TerminalOptions::detect(&self.state().terminal, &self.display, false);
        let emitter = TerminalEmitter::with_live_view(opts, Some(token), Arc::clone(&self.live));
        crate::mention::attach(self.state(), &self.conv, &mut input, &emitter);
        // Lines typed meanwhile (unseen: no echo) are queued and go in at the turn's next
        // step; what is left runs after it.
        let queue = Arc::clone(&self.queue);
        let emitter = emitter.with_queue(Arc::clone(&queue));
        let quiet = turn_input::QuietInput::start();
        let typing =
            turn_input::TypeAhead::start(Arc::clone(&queue), self.state().terminal.stdin_tty);
        let result = self
            .conv
            .prompt(input, RunOptions::default(), None, &emitter)
            .await;
        let typed = typing.finish();
        queue.set_listening(false);
        drop(emitter);
        drop(quiet);
        // Ctrl-C stops everything: what was typed is dropped, as the terminal drops keys
        // not yet read.
        let cancelled = matches!(result, Err(CoreError::Cancelled));
        let planned = result.is_ok() && self.conv.status().permission_mode == "plan";
        self.report_turn(result);
        let left = queue.take();
        if !cancelled {
            self.typed_for_history
                .extend(typed.lines.iter().filter(|l| !l.trim().is_empty()).cloned());
            self.hold_typed(typed, &left);
        }
        if planned && left.is_empty() && self.pending.is_empty() {
            Box::pin(self.offer_plan()).await;
        }
    }

    /// Writes the lines typed while loki was busy to the history (and history.txt at
    /// once), in the order they were typed, as if the line editor had read them.
    fn remember_typed(&mut self, reader: &mut Reedline) {
        if self.typed_for_history.is_empty() {
            return;
        }
        for line in self.typed_for_history.drain(..) {
            let _ = reader
                .history_mut()
                .save(reedline::HistoryItem::from_command_line(line));
        }
        let _ = reader.sync_history();
    }

    /// After a turn: the lines typed during it that it did not send (queued messages
    /// left over, dot-commands) run next, in order; an unfinished line waits in the
    /// prompt's buffer.
    fn hold_typed(&mut self, typed: turn_input::Typed, left: &[String]) {
        // The turn took the messages queued first (it takes them all at once).
        let messages = typed
            .lines
            .iter()
            .filter(|l| turn_input::is_message(l))
            .count();
        let mut taken = messages.saturating_sub(left.len());
        for line in typed.lines {
            if turn_input::is_message(&line) && taken > 0 {
                taken -= 1;
            } else if !line.trim().is_empty() {
                self.pending.push_back(line);
            }
        }
        // A turn run from the queue keeps the line left unfinished before it.
        self.partial.push_str(&typed.partial);
    }

    fn report_turn(&self, result: Result<loki_protocol::op::RunOutcome, CoreError>) {
        match result {
            Ok(_) | Err(CoreError::Cancelled) => {}
            Err(e) => self.error(&e.to_string()),
        }
        self.println("");
    }

    /// `.macro <name> args…`: the macro runs in a conversation of its own (the default
    /// model, no role or session), sharing this one's approver and asker; this
    /// conversation is left as it was.
    async fn run_macro(&mut self, name: &str, args: &[String]) {
        let state = Arc::clone(self.state());
        // Ctrl-C stops the macro: its conversation's token is cancelled, and with it
        // every step.
        let beside = self.interrupt.beside(&self.cancel);
        let notice_theme = Theme::stderr(&state.terminal);
        let spec = ConversationSpec {
            cancel: Some(beside.token.clone()),
            label: Some(format!("macro {name}")),
            notices: Some(Arc::new(move |line: &str| {
                crate::term::session_note(&notice_theme, line);
            })),
            ..ConversationSpec::default()
        };
        let conversation = match self.conv.child(spec).await {
            Ok(conversation) => conversation,
            Err(e) => return self.error(&e.to_string()),
        };
        let terminal = crate::macros::Terminal {
            display: self.display,
            caps: self.state().terminal,
        };
        let quiet = turn_input::QuietInput::start();
        let result = crate::macros::run(
            conversation,
            &state.paths.macros_dir,
            name,
            args,
            &terminal,
            beside.token.clone(),
        )
        .await;
        drop(quiet);
        match result {
            Ok(()) | Err(crate::macros::MacroError::Cancelled(_)) => {}
            Err(e) => self.error(&e.to_string()),
        }
        drop(beside);
        self.println("");
    }

    /// `.role <name> <text>`: one message with the role; the conversation's role, model
    /// and settings are restored afterwards.
    async fn ask_with_role(&mut self, name: &str, mut input: UserInput) {
        let token = self.cancel.clone();
        let opts = TerminalOptions::detect(&self.state().terminal, &self.display, false);
        let emitter = TerminalEmitter::with_live_view(opts, Some(token), Arc::clone(&self.live));
        crate::mention::attach(self.state(), &self.conv, &mut input, &emitter);
        let quiet = turn_input::QuietInput::start();
        let result = self
            .conv
            .prompt(
                input,
                RunOptions::default(),
                Some(name.to_string()),
                &emitter,
            )
            .await;
        drop(emitter);
        drop(quiet);
        if let Err(e @ (CoreError::Role(_) | CoreError::Model(_) | CoreError::InvalidRequest(_))) =
            &result
        {
            // The role could not be used: no turn ran.
            return self.error(&e.to_string());
        }
        self.report_turn(result);
    }

    /// Tells the completer which agent is in use (for `.starter`).
    fn sync_completion(&self) {
        let agent = self.conv.agent().map(|a| a.name.clone());
        if let Ok(mut data) = self.completion.write() {
            data.active_agent = agent;
        }
    }

    /// Runs the editor on `path`; false (after an error line) when it fails.
    fn run_editor(&self, path: &std::path::Path) -> bool {
        let editor = crate::term::editor::command(self.state());
        let status = crate::term::editor::process(&editor).arg(path).status();
        if matches!(status, Ok(s) if s.success()) {
            return true;
        }
        self.error(&format!(
            "could not run the editor `{editor}` (set `editor:` or $EDITOR)"
        ));
        false
    }

    /// Applies a command to the conversation and shows what it did (events such as
    /// compression notices go through a terminal emitter).
    pub(super) async fn apply(&mut self, command: Command) -> bool {
        let opts = TerminalOptions::detect(&self.state().terminal, &self.display, false);
        let emitter = TerminalEmitter::new(opts, None);
        let result = self.conv.command(command, &emitter).await;
        self.sync_completion();
        match result {
            Ok(applied) => {
                self.show_applied(&applied);
                true
            }
            Err(e) => {
                self.error(&e.to_string());
                false
            }
        }
    }

    /// Shows a command's confirmations and warnings.
    fn show_applied(&self, applied: &loki_protocol::command::Applied) {
        for line in &applied.lines {
            match line {
                loki_protocol::command::Line::Note(text) => self.note(text),
                loki_protocol::command::Line::Warning(text) => {
                    self.note(&format!("warning: {text}"))
                }
            }
        }
    }

    async fn edit_role(&mut self) {
        let Some(role) = self.conv.role().cloned() else {
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
        self.apply(Command::UseRole(role.name)).await;
    }

    /// `.agents`: the sub-agents started in this conversation, one line each; `.agents N`
    /// (or an id) shows that one's answer in full.
    fn sub_agents(&self, which: Option<&str>) {
        let agents = self.conv.sub_agents();
        if agents.is_empty() {
            return self.note("no sub-agents have run in this conversation");
        }
        let Some(which) = which else {
            for (i, a) in agents.iter().enumerate() {
                let cost = a.cost.map(|c| format!(" ${c:.4}")).unwrap_or_default();
                let task: String = a.task.chars().take(60).collect();
                self.println(&format!(
                    "{}. {} {} ({}) {} tokens{cost} {:.1}s · {task}",
                    i + 1,
                    a.agent,
                    a.status,
                    a.id,
                    a.tokens,
                    a.elapsed.as_secs_f64()
                ));
            }
            return;
        };
        let found = which
            .parse::<usize>()
            .ok()
            .and_then(|n| n.checked_sub(1))
            .and_then(|i| agents.get(i))
            .or_else(|| agents.iter().find(|a| a.id == which));
        match found {
            Some(a) => {
                self.note(&format!("{} ({}), {}: {}", a.agent, a.id, a.status, a.task));
                if let Some(error) = &a.error {
                    self.error(error);
                }
                if a.output.is_empty() {
                    self.note("(no answer yet)");
                } else {
                    self.println(&a.output);
                }
            }
            None => self.error(&format!(
                "no sub-agent `{which}`; .agents lists them ({} so far)",
                agents.len()
            )),
        }
    }

    /// `.starter`: the agent's starters, numbered; `.starter N` sends the N-th.
    async fn starter(&mut self, n: Option<usize>) {
        let Some(agent) = self.conv.agent() else {
            return self.error("no agent is active");
        };
        let starters = agent.config.conversation_starters.clone();
        let name = agent.name.clone();
        match n {
            None if starters.is_empty() => {
                self.println(&format!("agent `{name}` has no conversation starters"))
            }
            None => {
                let list: Vec<String> = starters
                    .iter()
                    .enumerate()
                    .map(|(i, s)| format!("{}. {s}", i + 1))
                    .collect();
                self.println(&list.join("\n"));
            }
            Some(n) => match starters.get(n - 1) {
                Some(text) => {
                    let text = text.clone();
                    self.note(&format!(">> {text}"));
                    self.ask(UserInput {
                        text,
                        ..UserInput::default()
                    })
                    .await;
                }
                None => self.error(&format!(
                    "agent `{name}` has {} starter(s); .starter lists them",
                    starters.len()
                )),
            },
        }
    }

    async fn authenticate(&mut self) {
        let client = self.conv.status().client;
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
        match crate::term::sign_in::run(&config).await {
            Ok(done) => self.println(&done),
            Err(e) => self.error(&e.to_string()),
        }
    }

    /// `.session <name>`: a new session after some conversation offers to carry it.
    async fn open_session(&mut self, name: &str) {
        let ask = self.conv.status().session.is_none()
            && self.conv.status().history_len > 0
            && !self.conv.session_exists(name).await;
        let carry = if ask {
            match self
                .carry_into_session(name, self.conv.status().history_len)
                .await
            {
                Some(carry) => carry,
                None => return self.note(&format!("session `{name}` not opened")),
            }
        } else {
            false
        };
        let command = if carry {
            Command::OpenSessionWithHistory(name.to_string())
        } else {
            Command::OpenSession(name.to_string())
        };
        self.apply(command).await;
    }

    /// Whether to carry the conversation so far into the new session `name` (asked;
    /// no when nobody can answer); `None` to go back without opening it (Esc).
    async fn carry_into_session(&mut self, name: &str, messages: usize) -> Option<bool> {
        use crate::term::yes_no::{self, Reply};
        let question =
            format!("Carry the conversation so far ({messages} messages) into session `{name}`?");
        match self
            .ask_user(move || yes_no::ask(&question, true, "Esc to cancel"))
            .await
        {
            Ok(Ok(Reply::Yes)) => Some(true),
            Ok(Ok(Reply::Back)) => None,
            _ => Some(false),
        }
    }

    fn set_display(&mut self, key: &str, value: &str) {
        let result = match key {
            "highlight" => parse_bool(value)
                .map(|v| {
                    self.display.highlight = v;
                    if let Ok(mut data) = self.completion.write() {
                        data.plain_input = !v;
                    }
                })
                .ok_or("true or false"),
            "wrap_code" => parse_bool(value)
                .map(|v| self.display.wrap_code = v)
                .ok_or("true or false"),
            "theme" | "light_theme" if value == "null" => {
                self.display.light = Display::from_config(&self.state().config).light;
                Ok(())
            }
            "theme" => crate::render::themes::parse_theme(value)
                .map(|light| self.display.light = light)
                .ok_or("dark or light"),
            "light_theme" => parse_bool(value)
                .map(|v| self.display.light = v)
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

    async fn edit_config(&mut self) {
        let path = self.state().paths.config_file.clone();
        let editor = crate::term::editor::command(self.state());
        let status = std::process::Command::new(&editor).arg(&path).status();
        if !matches!(status, Ok(s) if s.success()) {
            self.error(&format!(
                "could not run the editor `{editor}` (set `editor:` or $EDITOR)"
            ));
            return;
        }
        let state = self.state();
        // The vault already opened stays in use (no second password prompt).
        let loaded = match config::load::load(&state.paths, &state.env, &*state.vault) {
            Ok(Some(loaded)) => loaded,
            Ok(None) => return self.error(&format!("{} no longer exists", path.display())),
            Err(e) => return self.error(&format!("{e} (keeping the previous configuration)")),
        };
        for warning in &loaded.warnings {
            self.note(&format!("warning: {warning}"));
        }
        let mut new_config = loaded.config;
        crate::render::themes::adopt_terminal(&mut new_config, &state.paths, &state.env);
        let new_state = Arc::new(state.reconfigured(new_config, path.display().to_string()));
        let reconfigured = self.conv.reconfigure(Arc::clone(&new_state));
        self.state = Arc::clone(&new_state);
        if let Err(e) = reconfigured {
            self.error(&e.to_string());
        }
        self.display = Display::from_config(&new_state.config);
        if let Ok(mut data) = self.completion.write() {
            *data = completion_data(&new_state);
            data.active_agent = self.conv.agent().map(|a| a.name.clone());
        }
        self.note(&format!("reloaded {}", path.display()));
    }

    /// The `status_line` command's line above the prompt, cut to the terminal's width.
    async fn show_status_line(&mut self) {
        let Some(config) = self.state().config.status_line.clone() else {
            return;
        };
        let status = self.conv.status();
        if let Some(line) = self.status_line.line(&config, &status).await
            && !line.is_empty()
        {
            use crate::render::screenful::{cut, terminal_width};
            let line = cut(&line, terminal_width().max(8));
            self.print_styled(&self.theme().paint(Style::Dim, &line));
        }
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
        let status = self.conv.status();
        let mut vars = prompt::Vars::new().with_colors(self.display.highlight && !self.no_color);
        vars.set("model", status.model);
        vars.set("client_name", status.client);
        vars.set("model_name", status.model_name);
        if let Some(max) = status.max_input_tokens {
            vars.set("max_input_tokens", max.to_string());
        }
        if let Some(t) = status.temperature.filter(|t| *t != 0.0) {
            vars.set("temperature", t.to_string());
        }
        if let Some(p) = status.top_p {
            vars.set("top_p", p.to_string());
        }
        vars.set("dry_run", status.dry_run.to_string());
        if status.permission_mode != "default" {
            vars.set("mode", status.permission_mode.to_string());
        }
        if status.sandbox != "workspace-write" {
            vars.set("sandbox", status.sandbox.to_string());
        }
        vars.set("stream", status.stream.to_string());
        if status.save {
            vars.set("save", "true");
        }
        match self.display.wrap {
            Some(Wrap::Auto) => vars.set("wrap", "auto"),
            Some(Wrap::Width(w)) => vars.set("wrap", w.to_string()),
            _ => {}
        }
        // An agent's instructions are its role; the prompt names the agent.
        match (status.agent, status.role) {
            (Some(agent), _) => vars.set("agent", agent),
            (None, Some(role)) => vars.set("role", role),
            (None, None) => {}
        }
        if let Some(rag) = status.rag {
            vars.set("rag", rag);
        }
        if let Some(session) = status.session {
            vars.set("session", session.name);
            vars.set("dirty", session.dirty.to_string());
            if let Some(autoname) = session.autoname {
                vars.set("session_autoname", autoname);
            }
            vars.set("consume_tokens", session.tokens.to_string());
            if let Some(max) = status.max_input_tokens.filter(|m| *m > 0) {
                vars.set(
                    "consume_percent",
                    format!("{:.2}", session.tokens as f64 * 100.0 / max as f64),
                );
            }
        }
        if !status.usage.is_empty() {
            vars.set("cost", status.usage.cost_text());
            vars.set("input_tokens", status.usage.input_tokens.to_string());
            vars.set("output_tokens", status.usage.output_tokens.to_string());
        }
        vars.set("user_messages_len", status.user_messages.to_string());
        vars
    }

    fn info(&self) -> String {
        self.conv
            .report(crate::conversation::Report::Info(self.display.info_rows()))
            .unwrap_or_default()
    }

    /// Prints text that may come from a model, a session, a file or a server: control
    /// characters are shown escaped.
    fn println(&self, text: &str) {
        self.print_styled(&sanitize::display(text));
    }

    /// Prints a table of `name   value` rows (like [`Self::println`]), each row fitted to
    /// the terminal's width: a long value wraps under its column.
    fn print_table(&self, text: &str) {
        let text = sanitize::display(text);
        if self.state().terminal.stdout_tty {
            let width = crate::render::screenful::terminal_width();
            self.print_styled(&crate::render::table::fit(&text, width));
        } else {
            self.print_styled(&text);
        }
    }

    /// Prints a line loki composed itself (its own styling, foreign parts already
    /// sanitised).
    fn print_styled(&self, line: &str) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    fn note(&self, text: &str) {
        self.print_styled(&self.theme().paint(Style::Dim, &sanitize::display(text)));
    }

    fn error(&self, text: &str) {
        let theme = self.theme();
        let text = loki_wire::secrets::redact(text);
        self.print_styled(&format!(
            "{} {}",
            theme.paint(Style::Error, "error:"),
            crate::term::one_line(&text)
        ));
    }
}

fn completion_data(state: &Arc<AppState>) -> CompletionData {
    CompletionData {
        models: state
            .providers
            .models(ModelKind::Chat)
            .unwrap_or_default()
            .into_iter()
            .map(|m| (m.id(), m.describe()))
            .collect(),
        roles_dir: state.paths.roles_dir.clone(),
        sessions: Some(session_names(state)),
        rags_dir: state.paths.rags_dir.clone(),
        macros_dir: state.paths.macros_dir.clone(),
        agents_dir: state.paths.agents_dir.clone(),
        state: Some(Arc::clone(state)),
        active_agent: None,
        plain_input: !state.config.highlight,
        skills_dir: state.paths.config_dir.join("skills"),
    }
}

/// Lists saved sessions from the line editor's thread, which may wait on the runtime
/// (the REPL's runtime has worker threads of its own).
fn session_names(state: &Arc<AppState>) -> completer::SessionNames {
    let state = Arc::clone(state);
    let runtime = tokio::runtime::Handle::current();
    Arc::new(move || {
        runtime
            .block_on(crate::conversation::catalog::session_names(&state))
            .unwrap_or_default()
    })
}

/// Whether keys typed during `action` are held quietly for the next prompt: not for
/// turns (they read type-ahead themselves), nor for what hands the terminal to an editor.
fn quiet_during(action: &Action) -> bool {
    !matches!(
        action,
        Action::Ask(_)
            | Action::AskWithRole { .. }
            | Action::Macro { .. }
            | Action::Exit
            | Action::EditRole
            | Action::EditSession
            | Action::EditMessage(_)
            | Action::EditConfig
            | Action::EditAgentConfig
            | Action::EditRagDocs
            | Action::Memory(crate::dotcmd::MemoryOp::Edit(_))
    )
}
