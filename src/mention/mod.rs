//! `@` mentions in a prompt, as Claude Code has them: `@notes.txt` attaches the file as
//! `-f notes.txt` would (the same loaders, limits and binary-file handling, because it
//! becomes one more `-f` argument), `@src/` attaches a listing of the directory,
//! `@mcp:SERVER:URI` a resource of a configured MCP server, and `@"my notes.txt"` or
//! `@'my notes.txt'` a name with spaces. The mention stays in the text, so the model
//! reads the prompt as the user wrote it and finds what it names attached below.
//!
//! An `@` that names nothing (`me@example.com`, `@someone`) is plain text, never an
//! error. A mention that names what the file tools could not read ([`fence`]) is not
//! attached, and the user is told in one line.
//!
//! Drivers whose prompt comes from the user call [`attach`] before sending it: the
//! one-shot CLI, the REPL, ACP and `--input-format stream-json`. Prompts that come from
//! elsewhere — a server's HTTP clients, a model's sub-agent task — are never expanded:
//! their `@` would reach files on behalf of someone other than the user at the keyboard.

mod complete;
mod fence;
mod listing;
mod scan;

use std::path::Path;

use crate::conversation::Conversation;
use crate::sandbox::SandboxMode;
use crate::state::AppState;
use loki_protocol::emitter::Emitter;
use loki_protocol::event::{Envelope, Event, Notice};
use loki_protocol::op::UserInput;

pub use complete::completions;
pub use scan::{Mention, mentions};

/// What one mention names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Target {
    /// A file, as the `-f` argument that loads it.
    File(String),
    /// A directory: how it was written and the listing of it.
    Listing { shown: String, listing: String },
    /// An MCP resource, as its `mcp:SERVER:URI` argument.
    Resource(String),
    /// Something the fences keep out: the note for the user.
    Refused(String),
}

/// Attaches what the `@` mentions of `input.text` name to `input`, and emits a warning
/// notice (returned too, for a driver whose emitter shows none) for each one refused.
pub fn attach(
    state: &AppState,
    conversation: &Conversation,
    input: &mut UserInput,
    emitter: &dyn Emitter,
) -> Vec<String> {
    if !input.text.contains('@') {
        return Vec::new();
    }
    let found = mentions(&input.text);
    if found.is_empty() {
        return Vec::new();
    }
    let status = conversation.status();
    let mode = SandboxMode::parse(status.sandbox).unwrap_or(SandboxMode::WorkspaceWrite);
    let targets = resolve(state, &status.cwd, mode, &found);
    let notes = apply(input, targets);
    for note in &notes {
        let event = Event::Notice(Notice::warning(note.clone()));
        emitter.emit(Envelope::new(conversation.id().clone(), event));
    }
    notes
}

/// What each mention names, in order, leaving out those that name nothing.
fn resolve(state: &AppState, cwd: &Path, mode: SandboxMode, found: &[Mention]) -> Vec<Target> {
    let fence = fence::Fence::new(state, cwd, mode);
    let servers = state.mcp.configured();
    found
        .iter()
        .filter_map(|mention| target(state, cwd, &fence, &servers, mention))
        .collect()
}

/// The first thing a mention's candidates name.
fn target(
    state: &AppState,
    cwd: &Path,
    fence: &fence::Fence,
    servers: &[String],
    mention: &Mention,
) -> Option<Target> {
    for candidate in &mention.candidates {
        if let Some(rest) = candidate.strip_prefix("mcp:") {
            let known = rest.split_once(':').is_some_and(|(server, uri)| {
                !uri.is_empty() && servers.iter().any(|s| s == server)
            });
            if known {
                return Some(Target::Resource(candidate.clone()));
            }
            continue;
        }
        let resolved = crate::tool::paths::resolve(cwd, candidate);
        let Ok(meta) = std::fs::metadata(&resolved.path) else {
            continue;
        };
        if let Some(why) = fence.refusal(state, candidate, &resolved.path) {
            return Some(Target::Refused(format!("@{candidate} not attached: {why}")));
        }
        if meta.is_dir() {
            return Some(Target::Listing {
                shown: candidate.clone(),
                listing: listing::listing(&resolved.path, candidate),
            });
        }
        return Some(Target::File(file_arg(cwd, candidate)));
    }
    None
}

/// The `-f` argument that loads the file `candidate` names: as written (so the model
/// sees the name the user used), unless the loader would read it as something else — a
/// `` `command` ``, a URL, `%%`, a `LOADER:` prefix — then by its path.
fn file_arg(cwd: &Path, candidate: &str) -> String {
    let plain = !candidate.starts_with('`') && !candidate.contains(':') && candidate != "%%";
    if plain {
        candidate.to_string()
    } else {
        cwd.join(candidate).display().to_string()
    }
}

/// Adds the targets to `input` (each once): files and resources as attachments,
/// listings after the text. Returns the notes of those refused.
fn apply(input: &mut UserInput, targets: Vec<Target>) -> Vec<String> {
    let mut notes = Vec::new();
    let mut listed: Vec<String> = Vec::new();
    for target in targets {
        match target {
            Target::File(arg) | Target::Resource(arg) => {
                if !input.files.contains(&arg) {
                    input.files.push(arg);
                }
            }
            Target::Listing { shown, listing } => {
                if !listed.contains(&shown) {
                    input.text.push_str(&format!(
                        "\n\n============ DIR: {shown} ============\n{listing}"
                    ));
                    listed.push(shown);
                }
            }
            Target::Refused(note) => {
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_become_attachments_once() {
        let mut input = UserInput {
            text: "explain @a.txt and @a.txt in @src/".into(),
            files: vec!["b.txt".into()],
            ..UserInput::default()
        };
        let notes = apply(
            &mut input,
            vec![
                Target::File("a.txt".into()),
                Target::File("a.txt".into()),
                Target::File("b.txt".into()),
                Target::Listing {
                    shown: "src/".into(),
                    listing: "src/x.rs".into(),
                },
                Target::Resource("mcp:docs:file:///a".into()),
                Target::Refused("@.env not attached: no".into()),
            ],
        );
        assert_eq!(input.files, ["b.txt", "a.txt", "mcp:docs:file:///a"]);
        assert_eq!(
            input.text,
            "explain @a.txt and @a.txt in @src/\n\n============ DIR: src/ ============\nsrc/x.rs"
        );
        assert_eq!(notes, ["@.env not attached: no"]);
    }

    #[test]
    fn file_arguments_the_loader_would_misread_go_by_path() {
        let cwd = Path::new("/w");
        assert_eq!(file_arg(cwd, "notes.txt"), "notes.txt");
        assert_eq!(file_arg(cwd, "`ls`"), "/w/`ls`");
        assert_eq!(file_arg(cwd, "a:b.txt"), "/w/a:b.txt");
        assert_eq!(file_arg(cwd, "%%"), "/w/%%");
    }
}
