//! `.diff [turn|session]`: what loki's tools changed in files, as one unified diff per
//! file, from the contents the checkpoints kept before and after each turn. Over several
//! turns a file is shown from before its first change to after its last.

use std::path::PathBuf;

use super::{Store, TurnRecord};

/// One file's span over the turns shown: content before the first, after the last.
struct Span {
    path: PathBuf,
    before: Option<String>,
    after: Option<String>,
    unkept: bool,
}

/// The unified diff of what `turns` changed, files in the order first changed; a file
/// that ended as it began is left out. Not sanitised: the caller shows it.
pub fn render(store: &Store, turns: &[TurnRecord]) -> String {
    let mut spans: Vec<Span> = Vec::new();
    for change in turns.iter().flat_map(|t| &t.files) {
        match spans.iter_mut().find(|s| s.path == change.path) {
            Some(span) => {
                span.after.clone_from(&change.after);
                span.unkept |= change.unkept;
            }
            None => spans.push(Span {
                path: change.path.clone(),
                before: change.before.clone(),
                after: change.after.clone(),
                unkept: change.unkept,
            }),
        }
    }
    let mut out = String::new();
    for span in spans.iter().filter(|s| s.before != s.after) {
        out.push_str(&file_diff(store, span));
    }
    out
}

/// One file's diff with `---`/`+++` headers (`/dev/null` for a side where it did not
/// exist), or a line saying why its content cannot be shown.
fn file_diff(store: &Store, span: &Span) -> String {
    let path = span.path.display();
    if span.unkept {
        return format!("{path}: changed (too large to keep, not shown)\n");
    }
    let text = |hash: &Option<String>| -> Result<String, String> {
        let Some(hash) = hash else {
            return Ok(String::new());
        };
        // What a turn left is kept only when a later turn changed the file again; the
        // last content is the file itself, unless someone changed it since.
        let bytes = store
            .get(hash)
            .or_else(|e| match store.current(&span.path, false) {
                Ok(Some(now)) if now == *hash => {
                    crate::atomic_file::read_regular(&span.path, super::MAX_FILE)
                }
                _ => Err(e),
            });
        bytes
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
            .map_err(|_| format!("{path}: changed (changed again since; not shown)\n"))
    };
    let (old, new) = match (text(&span.before), text(&span.after)) {
        (Ok(old), Ok(new)) => (old, new),
        (Err(note), _) | (_, Err(note)) => return note,
    };
    let from = match span.before {
        Some(_) => format!("a{path}"),
        None => "/dev/null".to_string(),
    };
    let to = match span.after {
        Some(_) => format!("b{path}"),
        None => "/dev/null".to_string(),
    };
    let patch = diffy::DiffOptions::new()
        .set_original_filename(from)
        .set_modified_filename(to)
        .create_patch(&old, &new);
    patch.to_string()
}
