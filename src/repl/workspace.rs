//! `.memory`, `.context` and `.otr`: the workspace memory, where the input window goes,
//! and going off the record in a running REPL.

use crate::dotcmd::MemoryOp;
use loki_protocol::command::Command;

impl super::Repl {
    /// `.memory`: an overview, a search, or a workspace file in the editor.
    pub(super) fn memory(&self, op: MemoryOp) {
        let state = self.state();
        let memory = &state.memory;
        match op {
            MemoryOp::Show => {
                if !state.config.memory {
                    self.note("memory is off (memory: false in config.yaml)");
                }
                self.println(&format!("workspace: {}", memory.dir().display()));
                for name in ["IDENTITY.md", "SOUL.md", "USER.md", "MEMORY.md"] {
                    let path = memory.file(name);
                    let line = match std::fs::metadata(&path) {
                        Ok(meta) if meta.is_file() => format!("  {name:<12} {} bytes", meta.len()),
                        _ => format!("  {name:<12} (none)"),
                    };
                    self.println(&line);
                }
                self.println(&format!(
                    "  MEMORY.md holds {} entries; {} are recalled per message (memory_top_k)",
                    memory.chunk_count(),
                    state.config.memory_top_k
                ));
                let notes = memory.recent_notes(
                    std::time::SystemTime::now(),
                    state.config.memory_recent_days,
                );
                if notes.is_empty() {
                    self.println("  no daily notes in the recent days");
                }
                for (date, text) in notes {
                    self.println(&format!(
                        "  notes of {date}: {} lines",
                        text.lines().count()
                    ));
                }
                self.note(".memory search <text> · .memory edit [memory|identity|soul|user|today]");
            }
            MemoryOp::Search(text) => {
                let found = memory.recall(&text, state.config.memory_top_k.max(1));
                if found.is_empty() {
                    return self.note("nothing in MEMORY.md matches");
                }
                for (i, chunk) in found.iter().enumerate() {
                    self.note(&format!("{}. (score {:.2})", i + 1, chunk.score));
                    self.println(chunk.text.trim());
                }
            }
            MemoryOp::Edit(which) => {
                if self.conv.status().otr {
                    return self.error("off the record: the memory is not written");
                }
                let path = match which.as_str() {
                    "identity" => memory.file("IDENTITY.md"),
                    "soul" => memory.file("SOUL.md"),
                    "user" => memory.file("USER.md"),
                    "today" => {
                        memory.daily_file(&crate::memory::date_of(std::time::SystemTime::now()))
                    }
                    _ => memory.memory_file(),
                };
                if let Some(dir) = path.parent()
                    && let Err(e) = std::fs::create_dir_all(dir)
                {
                    return self.error(&format!("cannot create {}: {e}", dir.display()));
                }
                if self.run_editor(&path) {
                    keep_private(&path);
                    self.note(&format!("edited {}", path.display()));
                }
            }
        }
    }

    /// `.context`: where the model's input window goes for the next message.
    pub(super) fn context_window(&self) {
        let report = self.conv.context_report();
        self.println(&report.render());
    }

    /// `.otr`: nothing is written from now on — no history line, no log, no memory, no
    /// messages.md, and only tools that read. Refused while a session is open (it would be
    /// saved or lost).
    pub(super) async fn go_off_the_record(&mut self) {
        if self.apply(Command::OffTheRecord).await && self.conv.status().otr {
            crate::logging::pause();
        }
    }
}

/// Workspace files hold personal notes: 0600 after an edit.
fn keep_private(path: &std::path::Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// The choices after a plan-mode answer.
const GO_EDITS: &str = "Carry it out: file edits run unasked (accept-edits)";
const GO_ASK: &str = "Carry it out, asking before each change (default)";
const STAY: &str = "Stay in plan mode";

impl super::Repl {
    /// After an answer in plan mode: carry the plan out in accept-edits or default mode
    /// (the mode changes and the model is told to go on), or stay in plan mode.
    pub(super) async fn offer_plan(&mut self) {
        let choice = self
            .ask_user(|| {
                inquire::Select::new("The plan:", vec![GO_EDITS, GO_ASK, STAY])
                    .without_help_message()
                    .prompt()
            })
            .await;
        let mode = match choice {
            Ok(Ok(GO_EDITS)) => "accept-edits",
            Ok(Ok(GO_ASK)) => "default",
            _ => return,
        };
        self.apply(Command::Set {
            key: "permission_mode".into(),
            value: mode.into(),
        })
        .await;
        self.ask(loki_protocol::op::UserInput {
            text: "Carry out the plan.".into(),
            ..loki_protocol::op::UserInput::default()
        })
        .await;
    }
}
