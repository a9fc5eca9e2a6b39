//! A session written out for people or programs (`loki --export-session NAME --format
//! md|json`): Markdown with one section per message (tool calls and results as fenced
//! blocks), or the session as JSON.

use std::fmt::Write;

use loki_wire::message::Role;
use loki_wire::session_file::Session;

/// The session as JSON (what is stored, pretty-printed).
pub fn json(session: &Session) -> Result<String, serde_json::Error> {
    serde_json::to_string_pretty(session)
}

/// The session as Markdown.
pub fn markdown(name: &str, session: &Session) -> String {
    let mut out = format!("# Session {name}\n\n");
    if let Some(model) = &session.model {
        let _ = writeln!(out, "Model: `{model}`");
    }
    if let Some(role) = &session.role_name {
        let _ = writeln!(out, "Role: `{role}`");
    }
    if let Some(cwd) = &session.cwd {
        let _ = writeln!(out, "Started in: `{cwd}`");
    }
    if !session.compressed_messages.is_empty() {
        let _ = writeln!(
            out,
            "\n_{} earlier messages were summarised._",
            session.compressed_messages.len()
        );
    }
    for message in &session.messages {
        let title = match message.role {
            Role::System => "System",
            Role::User => "User",
            Role::Assistant => "Assistant",
            Role::Tool => "Tool result",
        };
        let _ = write!(out, "\n## {title}\n\n");
        let text = message.text_content();
        if message.role == Role::Tool {
            let _ = writeln!(out, "{}", fenced(&text));
        } else if !text.trim().is_empty() {
            let _ = writeln!(out, "{}", text.trim_end());
        }
        for call in &message.tool_calls {
            let _ = writeln!(
                out,
                "\nCalls `{}`:\n\n{}",
                call.name,
                fenced(&call.arguments)
            );
        }
    }
    out
}

/// `text` in a fence longer than any run of backticks in it.
fn fenced(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{}\n{fence}", text.trim_end())
}

#[cfg(test)]
mod tests {
    use super::*;
    use loki_wire::message::Message;

    #[test]
    fn markdown_has_a_section_per_message_and_safe_fences() {
        let session = Session {
            model: Some("fake:m".into()),
            messages: vec![
                Message::text(Role::User, "hi"),
                Message::text(Role::Tool, "has ``` inside"),
            ],
            ..Session::default()
        };
        let md = markdown("work", &session);
        assert!(md.starts_with("# Session work\n"), "{md}");
        assert!(md.contains("## User\n\nhi"), "{md}");
        assert!(md.contains("````\nhas ``` inside\n````"), "{md}");
        assert!(json(&session).unwrap().contains("\"messages\""));
    }
}
