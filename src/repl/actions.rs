//! What each line the REPL reads does: a prompt runs a turn; a dot-command (an
//! [`Action`], parsed by the table in [`crate::dotcmd`]) changes the conversation,
//! shows something about it, or hands a file to the editor.

use super::leave::Leave;
use super::{Next, Repl};
use crate::conversation::Report;
use crate::dotcmd::{self, Action};
use loki_protocol::command::Command;

impl Repl {
    /// Does what `action` asks; [`Next::Quit`] when the REPL ends with it.
    pub(super) async fn perform(&mut self, action: Action) -> Next {
        match action {
            Action::Exit => return self.quit().await,
            Action::Ask(input) => self.ask(input).await,
            Action::Apply(Command::UseRole(name)) if self.offer_new_role(&name).await => {
                self.prepare_mcp();
            }
            // An agent works through its tools (its own, the todo list, questions to
            // the user): without function calling it is refused rather than started
            // crippled. One-shot `-a` only warns, as it has no prompt to come back to.
            Action::Apply(Command::UseAgent { name, .. })
                if !self.conv.status().function_calling =>
            {
                self.error(&format!(
                    "agent `{name}` needs function calling, which is off (.set function_calling_support true)"
                ));
            }
            Action::Apply(cmd) => {
                self.apply(cmd).await;
                // A role, session or setting change may need other servers.
                self.prepare_mcp();
            }
            Action::Display { key, value } => self.set_display(&key, &value),
            Action::Help => self.print_table(&dotcmd::help_text()),
            Action::Info => self.print_table(&self.info()),
            Action::InfoMcp => self.println(&crate::conversation::info::mcp(self.state())),
            Action::InfoPermissions => {
                self.println(&self.conv.report(Report::Permissions).unwrap_or_default())
            }
            Action::Rewind => self.rewind().await,
            Action::Diff { session } => {
                let diff = self.conv.diff(session);
                let scope = if session {
                    "this session"
                } else {
                    "the last turn"
                };
                if diff.is_empty() {
                    self.note(&format!("loki's tools changed no files in {scope}"));
                } else {
                    // `println` sanitises: file contents are untrusted.
                    self.println(diff.trim_end());
                }
            }
            Action::Sessions(text) => self.list_sessions(text.as_deref()).await,
            Action::Resume(key) => {
                self.resume(key.as_deref()).await;
                self.prepare_mcp();
            }
            Action::Mcp(op) => self.mcp(op).await,
            Action::InfoAgent => {
                self.println_or(self.conv.report(Report::Agent), "no agent is active")
            }
            Action::Starter(n) => self.starter(n).await,
            Action::SubAgents(which) => self.sub_agents(which.as_deref()),
            Action::Memory(op) => self.memory(op),
            Action::Context => self.context_window(),
            Action::OffTheRecord => self.go_off_the_record().await,
            Action::InfoRole => self.println_or(
                self.conv.role().map(crate::role::Role::export),
                "no role is active",
            ),
            Action::AskWithRole { role, input } => {
                self.ask_with_role(&role, input).await;
                // The role's turn may have run other servers; bring back the usual ones.
                self.prepare_mcp();
            }
            Action::OpenSession(name) => {
                self.open_session(&name).await;
                // The session may name other MCP servers: they start now, in the
                // background, and the previous scope's are let go.
                self.prepare_mcp();
            }
            Action::ExitSession => return self.exit_session().await,
            Action::SaveSession(name) => {
                self.save_session(name.as_deref()).await;
            }
            Action::CompressSession => {
                self.apply(Command::CompressSession).await;
            }
            Action::Authenticate => self.authenticate().await,
            Action::InfoSession => {
                self.println_or(self.conv.report(Report::Session), "no session is open")
            }
            Action::Copy => self.copy_answer(),
            Action::PasteImage => self.paste_image().await,
            Action::ToolResults => match self.conv.report(Report::ToolResults) {
                Some(text) => self.println(&text),
                None => self.note("the last turn called no tools"),
            },
            Action::Jobs => match self.conv.report(Report::Jobs) {
                Some(text) => self.println(&text),
                None => self.note("no background jobs (execute_command with background: true)"),
            },
            Action::Init => self.init_agents_md().await,
            Action::EditConfig => self.edit_config().await,
            Action::EditAgentConfig => self.edit_agent_config(),
            Action::EditRole => self.edit_role().await,
            Action::EditSession => self.edit_session().await,
            Action::EditMessage(n) => self.edit_message(n).await,
            Action::SaveRole(name) => {
                self.apply(Command::SaveRole(name)).await;
            }
            Action::DeleteRole(name) => {
                self.apply(Command::DeleteRole(name)).await;
            }
            Action::DeleteSession(name) => {
                self.apply(Command::DeleteSession(name)).await;
            }
            Action::UseRag { name, documents } => self.use_rag(&name, documents).await,
            Action::RebuildRag => self.rebuild_rag().await,
            Action::RagSources => self.rag_sources(),
            Action::InfoRag => self.info_rag(),
            Action::ExitRag => self.exit_rag().await,
            Action::DeleteRag(name) => self.delete_rag(&name),
            Action::DeleteMacro(name) => self.delete_macro(&name),
            Action::EditRagDocs => self.edit_rag_docs().await,
            Action::Vault(op) => self.vault(&op).await,
            Action::Macro { name, .. } if self.offer_new_macro(&name).await => {}
            Action::Macro { name, args } => self.run_macro(&name, &args).await,
            Action::Usage(message) => self.error(&message),
        }
        Next::Stay
    }

    /// Prints `text` (see [`Self::println`]), or says what is `missing` instead.
    fn println_or(&self, text: Option<String>, missing: &str) {
        match text {
            Some(text) => self.println(&text),
            None => self.error(missing),
        }
    }

    /// `.exit session`: closes the open session (offering to save it). A stop signal
    /// that arrives meanwhile ends the REPL.
    async fn exit_session(&mut self) -> Next {
        if self.conv.status().session.is_none() {
            self.error("no session is open");
        } else if let Leave::Stopped(signal) = self.close_session().await {
            return Next::Quit(self.terminate(signal).await);
        } else {
            self.prepare_mcp();
        }
        Next::Stay
    }

    /// `.copy`: the last answer to the clipboard.
    fn copy_answer(&self) {
        match self.conv.last_answer() {
            None => self.error("there is no answer to copy yet"),
            Some(text) => match crate::term::clipboard::copy(&text) {
                Ok(tool) => self.note(&format!("copied the last answer ({tool})")),
                Err(e) => self.error(&e.to_string()),
            },
        }
    }

    /// `.edit agent-config`: the active agent's `config.yaml` in the editor; the changes
    /// apply the next time the agent starts.
    fn edit_agent_config(&self) {
        match self.conv.agent() {
            Some(agent) => {
                let name = agent.name.clone();
                let path = agent.dir.join("config.yaml");
                if self.run_editor(&path) {
                    self.note(&format!(
                        "edited {}; the changes apply the next time the agent is used (.exit agent, then .agent {name})",
                        path.display()
                    ));
                }
            }
            None => self.error("no agent is active"),
        }
    }

    /// `.delete macro <name>`.
    fn delete_macro(&self, name: &str) {
        match crate::macros::delete(&self.state().paths.macros_dir, name) {
            Ok(path) => self.note(&format!("deleted {}", path.display())),
            Err(e) => self.error(&e.to_string()),
        }
    }
}
