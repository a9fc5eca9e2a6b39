//! What the system prompt carries beside the role: the workspace's identity files, the
//! memory relevant to the message, the project's instruction files and the index of the
//! skills the conversation may load — and `.context`, which shows where the model's
//! input window goes.

use crate::conversation::Sink;
use crate::conversation::context::RequestContext;
use crate::session::compress::count_tokens;
use crate::state::AppState;
use crate::tool::Tool;
use loki_protocol::event::{Event, Notice};
use loki_wire::message::{Message, Role};

/// The parts added to the system prompt, each `None` when absent.
#[derive(Debug, Default)]
pub struct ContextParts {
    /// IDENTITY.md, SOUL.md, USER.md.
    pub workspace: Option<String>,
    /// Relevant MEMORY.md chunks and recent daily notes, in `[MEMORY]` tags.
    pub memory: Option<String>,
    /// AGENTS.md / CLAUDE.md.
    pub project: Option<String>,
    /// The skills index.
    pub skills: Option<String>,
    /// `--append-system-prompt`, last (the run's own conversation only).
    pub appended: Option<String>,
    /// Warnings for the user: workspace files too large to read.
    pub notices: Vec<String>,
}

impl ContextParts {
    /// The parts for a conversation offering `tools`, with memory recalled for `query`.
    pub fn gather(state: &AppState, ctx: &RequestContext, tools: &[Tool], query: &str) -> Self {
        let memory_on = state.config.memory;
        Self {
            workspace: memory_on.then(|| state.memory.workspace_prompt()).flatten(),
            memory: memory_on
                .then(|| {
                    state.memory.context(
                        query,
                        state.config.memory_top_k,
                        state.config.memory_recent_days,
                        std::time::SystemTime::now(),
                    )
                })
                .flatten(),
            notices: if memory_on {
                state.memory.oversized(
                    state.config.memory_recent_days,
                    std::time::SystemTime::now(),
                )
            } else {
                Vec::new()
            },
            project: crate::skill::project_instructions(&ctx.cwd),
            skills: tools.iter().find_map(|t| match t {
                Tool::Skills(skills) => skills.index(),
                _ => None,
            }),
            appended: state
                .config
                .append_system_prompt
                .clone()
                .filter(|text| ctx.depth == 0 && !text.trim().is_empty()),
        }
    }

    /// Appends the parts to the system message of `messages` (adding one when there is
    /// none).
    pub fn add_to(self, messages: &mut Vec<Message>) {
        // The notices are the caller's to emit; they are not part of the prompt.
        let parts: Vec<String> = [
            self.workspace,
            self.memory,
            self.project,
            self.skills,
            self.appended,
        ]
        .into_iter()
        .flatten()
        .collect();
        if parts.is_empty() {
            return;
        }
        let extra = parts.join("\n\n");
        match messages.first_mut() {
            Some(first) if first.role == Role::System => {
                let text = format!("{}\n\n{extra}", first.text_content());
                *first = Message::text(Role::System, text);
            }
            _ => messages.insert(0, Message::text(Role::System, extra)),
        }
    }
}

/// Emits `message` as a warning, once per process: what gathering the context finds
/// wrong (an oversized MEMORY.md, skills left out) is found again every turn, and saying
/// it every turn would bury the answers.
pub(crate) fn warn_once(sink: &Sink<'_>, message: &str) {
    static SAID: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if said.iter().any(|m| m == message) {
        return;
    }
    said.push(message.to_string());
    drop(said);
    sink.emit(Event::Notice(Notice::warning(message)));
}

/// The text of the last user message (what memory is recalled for).
pub fn last_user_text(messages: &[Message]) -> String {
    messages
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .map(Message::text_content)
        .unwrap_or_default()
}

/// Where the input window goes, in tokens (`.context`).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ContextReport {
    /// The model.
    pub model: String,
    /// Its input window, when known.
    pub window: Option<usize>,
    /// The role's instructions and examples, and a session summary.
    pub system: usize,
    /// Workspace identity files.
    pub workspace: usize,
    /// Memory recalled for the last message.
    pub memory: usize,
    /// Project instructions and the skills index.
    pub project: usize,
    /// Tool declarations, and how many.
    pub tools: usize,
    /// Declared tools.
    pub tool_count: usize,
    /// The conversation's messages (files and tool results included).
    pub history: usize,
    /// Messages in it.
    pub messages: usize,
    /// Of the history: attached files.
    pub files: usize,
    /// Of the history: tool results.
    pub tool_results: usize,
    /// When the session is compacted, in history tokens (0: never).
    pub compaction_at: usize,
}

impl ContextReport {
    /// Everything sent with the next message.
    pub fn total(&self) -> usize {
        self.system + self.workspace + self.memory + self.project + self.tools + self.history
    }

    /// The report as lines of text.
    pub fn render(&self) -> String {
        let total = self.total();
        let share = |n: usize| match self.window {
            Some(w) if w > 0 => format!("{:>5.1}%", n as f64 * 100.0 / w as f64),
            _ => String::new(),
        };
        let row = |label: &str, n: usize| format!("  {label:<28}{n:>9} {}", share(n));
        let window = self
            .window
            .map_or_else(|| "unknown window".to_string(), |w| format!("{w} tokens"));
        let mut lines = vec![
            format!("{} — {window}", self.model),
            row("system prompt (role)", self.system),
            row("workspace files", self.workspace),
            row("memory", self.memory),
            row("project instructions, skills", self.project),
            row(&format!("tools ({} declared)", self.tool_count), self.tools),
            row(
                &format!("history ({} messages)", self.messages),
                self.history,
            ),
            row("  of which files", self.files),
            row("  of which tool results", self.tool_results),
            row("total", total),
        ];
        if let Some(w) = self.window {
            lines.push(row("free", w.saturating_sub(total)));
        }
        if self.compaction_at > 0 {
            lines.push(format!(
                "  compaction at {} history tokens",
                self.compaction_at
            ));
        }
        lines.join("\n")
    }
}

/// Counts `text` as one message.
fn tokens_of(text: &str, counter: crate::tokens::Counter) -> usize {
    if text.is_empty() {
        return 0;
    }
    count_tokens(&[Message::text(Role::System, text)], counter)
}

/// The report for `ctx` offering `tools`, as the next message would be sent (memory is
/// recalled for the last user message).
pub fn report(
    state: &AppState,
    ctx: &RequestContext,
    tools: &[Tool],
    compaction_at: usize,
) -> ContextReport {
    let counter = crate::tokens::Counter::for_model(ctx.model.real_name());
    let query = last_user_text(&ctx.history);
    let parts = ContextParts::gather(state, ctx, tools, &query);
    let role_prompt = ctx
        .role
        .as_ref()
        .map(|r| r.frame(Message::text(Role::User, String::new())))
        .unwrap_or_default();
    let framing: Vec<Message> = role_prompt
        .into_iter()
        .filter(|m| !(m.role == Role::User && m.text_content().is_empty()))
        .collect();
    let specs = crate::tool::specs(tools);
    let tools_text = serde_json::to_string(&specs).unwrap_or_default();
    let mut files = 0;
    let mut tool_results = 0;
    for message in &ctx.history {
        match message.role {
            Role::Tool => tool_results += count_tokens(std::slice::from_ref(message), counter),
            Role::User => files += tokens_of(&attached_part(&message.text_content()), counter),
            _ => {}
        }
    }
    let optional = |p: &Option<String>| p.as_deref().map_or(0, |t| tokens_of(t, counter));
    ContextReport {
        model: ctx.model.id(),
        window: ctx
            .model
            .config
            .max_input_tokens
            .filter(|w| *w > 0)
            .map(|w| w as usize),
        system: count_tokens(&framing, counter),
        workspace: optional(&parts.workspace),
        memory: optional(&parts.memory),
        project: optional(&parts.project) + optional(&parts.skills) + optional(&parts.appended),
        tools: if specs.is_empty() {
            0
        } else {
            tokens_of(&tools_text, counter)
        },
        tool_count: specs.len(),
        history: count_tokens(&ctx.history, counter),
        messages: ctx.history.len(),
        files,
        tool_results,
        compaction_at,
    }
}

/// The attached documents of a user message: from the first `============ KIND: … ====`
/// header to the end (the prompt comes before them).
fn attached_part(text: &str) -> String {
    match text.find("============ ") {
        Some(start) => text[start..].to_string(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attached_documents_are_told_apart_from_the_prompt() {
        let text = "summarise\n\n============ FILE: a.txt ============\nalpha\n\nbeta\n\n============ FILE: b ============\ngamma";
        let part = attached_part(text);
        assert!(part.contains("alpha") && part.contains("gamma"));
        assert!(!part.contains("summarise"));
        assert_eq!(attached_part("just a question"), "");
    }

    #[test]
    fn the_report_shows_shares_of_a_known_window() {
        let report = ContextReport {
            model: "m".into(),
            window: Some(1000),
            system: 100,
            history: 400,
            ..ContextReport::default()
        };
        let text = report.render();
        assert!(text.contains("total"), "{text}");
        assert!(text.contains("50.0%"), "{text}");
        assert!(text.contains("free"), "{text}");
    }
}
