//! A fast writer for session files. `serde_yaml`'s emitter costs about 20 ms per MB;
//! sessions are mostly message text, so the messages are written by hand: multi-line
//! text as YAML literal blocks (readable and editable), everything else as JSON scalars
//! and flow collections, which are valid YAML. The small remainder of the file goes
//! through `serde_yaml`. A round-trip test checks the output parses back identically.

use std::fmt::Write as _;

use crate::message::{Content, Message, Role};
use crate::session_file::Session;

/// Renders a session file.
pub fn to_yaml(session: &Session) -> Result<String, serde_yaml::Error> {
    let head = Session {
        messages: Vec::new(),
        compressed_messages: Vec::new(),
        ..session.clone()
    };
    let head = serde_yaml::to_string(&head)?;
    // Drop the `messages: []` serde writes for the emptied list; keep everything else
    // (including preserved unknown keys, which serde writes after it).
    let mut out = String::with_capacity(head.len());
    for line in head.lines().filter(|l| *l != "messages: []") {
        out.push_str(line);
        out.push('\n');
    }
    let size: usize = session
        .messages
        .iter()
        .map(|m| m.text_content().len() + 32)
        .sum();
    out.reserve(size);
    write_list(&mut out, "messages", &session.messages);
    if !session.compressed_messages.is_empty() {
        write_list(
            &mut out,
            "compressed_messages",
            &session.compressed_messages,
        );
    }
    Ok(out)
}

fn write_list(out: &mut String, key: &str, messages: &[Message]) {
    if messages.is_empty() {
        let _ = writeln!(out, "{key}: []");
        return;
    }
    let _ = writeln!(out, "{key}:");
    for m in messages {
        let role = match m.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        };
        let _ = writeln!(out, "- role: {role}");
        out.push_str("  content: ");
        match &m.content {
            Content::Text(text) => write_scalar(out, text),
            Content::Parts(parts) => {
                out.push_str(&serde_json::to_string(parts).unwrap_or_else(|_| "[]".into()));
                out.push('\n');
            }
        }
        if !m.tool_calls.is_empty() {
            out.push_str("  tool_calls: ");
            out.push_str(&serde_json::to_string(&m.tool_calls).unwrap_or_else(|_| "[]".into()));
            out.push('\n');
        }
        if let Some(id) = &m.tool_call_id {
            out.push_str("  tool_call_id: ");
            out.push_str(&json_string(id));
            out.push('\n');
        }
        if m.interrupted {
            out.push_str("  interrupted: true\n");
        }
    }
}

/// Writes a string value for a key indented by two spaces, ending with a newline.
fn write_scalar(out: &mut String, text: &str) {
    if !literal_block_ok(text) {
        out.push_str(&json_string(text));
        out.push('\n');
        return;
    }
    let trailing = text.len() - text.trim_end_matches('\n').len();
    let chomp = match trailing {
        0 => "-",
        1 => "",
        _ => "+",
    };
    // Explicit indentation (content at 4 = key indent 2 + 2) so leading spaces survive.
    let _ = writeln!(out, "|2{chomp}");
    let body = text.strip_suffix('\n').unwrap_or(text);
    for line in body.split('\n') {
        if !line.is_empty() {
            out.push_str("    ");
            out.push_str(line);
        }
        out.push('\n');
    }
}

/// Multi-line text without characters a literal block cannot hold verbatim.
fn literal_block_ok(text: &str) -> bool {
    text.contains('\n')
        && !text.starts_with('\n')
        && text.chars().all(|c| {
            c == '\n'
                || c == '\t'
                || (!c.is_control()
                    && c != '\u{feff}'
                    && c != '\u{85}'
                    && c != '\u{2028}'
                    && c != '\u{2029}')
        })
        && !text
            .split('\n')
            .any(|l| l.ends_with(' ') || l.ends_with('\t'))
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{ContentPart, ImageUrl, ToolCall};

    fn round_trip(session: &Session) {
        let text = to_yaml(session).unwrap();
        let back: Session = serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(&back, session, "\n{text}");
    }

    #[test]
    fn tricky_strings_survive() {
        let samples = [
            "",
            "plain",
            "two\nlines",
            "ends with newline\n",
            "two trailing\n\n",
            "  leading spaces\nsecond",
            "\nstarts with newline",
            "tab\tinside\nx",
            "trailing space \nx",
            "--- not a document\n...\n# not a comment",
            "key: value\n- list: no",
            "quote \" and ' and \\ backslash",
            "unicode é 漢字 😀\nline",
            "\r\nwindows",
            "ctrl \u{1} char",
            "   ",
            "\n",
            "a\n\n\nb",
            "- [x] item\n  nested",
        ];
        let messages: Vec<Message> = samples
            .iter()
            .enumerate()
            .map(|(i, s)| {
                Message::text(
                    if i % 2 == 0 {
                        Role::User
                    } else {
                        Role::Assistant
                    },
                    *s,
                )
            })
            .collect();
        round_trip(&Session {
            model: Some("a:b".into()),
            temperature: Some(0.5),
            messages: messages.clone(),
            compressed_messages: messages,
            ..Session::default()
        });
    }

    #[test]
    fn parts_tool_calls_and_flags_survive() {
        let mut assistant = Message::text(Role::Assistant, "calling");
        assistant.tool_calls.push(ToolCall {
            id: "c1".into(),
            name: "fs_ls".into(),
            arguments: "{\"path\": \".\"}".into(),
            signature: None,
        });
        assistant.interrupted = true;
        let tool = Message {
            role: Role::Tool,
            content: Content::Text("out".into()),
            tool_calls: vec![],
            tool_call_id: Some("c1".into()),
            interrupted: false,
            reasoning: None,
        };
        let image = Message {
            role: Role::User,
            content: Content::Parts(vec![
                ContentPart::Text {
                    text: "look".into(),
                },
                ContentPart::ImageUrl {
                    image_url: ImageUrl {
                        url: "data:image/png;base64,AA==".into(),
                    },
                },
            ]),
            tool_calls: vec![],
            tool_call_id: None,
            interrupted: false,
            reasoning: None,
        };
        let mut extra = std::collections::BTreeMap::new();
        extra.insert(
            "agent_variables".to_string(),
            serde_yaml::from_str("{x: 1}").unwrap(),
        );
        round_trip(&Session {
            messages: vec![image, assistant, tool],
            extra,
            ..Session::default()
        });
        round_trip(&Session::default());
    }

    #[test]
    fn multi_line_text_is_a_readable_block() {
        let s = Session {
            messages: vec![Message::text(Role::User, "first line\nsecond line\n")],
            ..Session::default()
        };
        let text = to_yaml(&s).unwrap();
        assert!(
            text.contains("  content: |2\n    first line\n    second line\n"),
            "{text}"
        );
    }
}
