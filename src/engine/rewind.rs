//! `Command::Rewind`: undoes the last turns of a conversation — the files loki's tools
//! changed in them get their earlier content back, and the conversation is cut to
//! before the first of them (saved, when a session is open). A file someone changed
//! after the turn is not overwritten unless `force` (the REPL asks first).

use std::sync::Arc;

use super::command::{Applied, Line};
use super::{CoreError, Emitter};
use crate::checkpoint::rewind::{Restore, restore};
use crate::context::RequestContext;
use crate::state::AppState;

/// The turns `.rewind` can undo, oldest first (every turn of the conversation, with the
/// files each changed).
pub fn turns(ctx: &RequestContext) -> Vec<crate::checkpoint::TurnRecord> {
    ctx.checkpoints
        .as_ref()
        .map(|r| r.records(&super::checkpoint_key(ctx)))
        .unwrap_or_default()
}

/// Undoes the last `count` turns: `what` says whether files, the conversation or both.
pub(super) async fn rewind(
    state: &Arc<AppState>,
    ctx: &mut RequestContext,
    count: usize,
    what: Restore,
    force: bool,
    emitter: &dyn Emitter,
) -> Result<Applied, CoreError> {
    let Some(recorder) = ctx.checkpoints.clone() else {
        return Err(CoreError::Conflict(
            "checkpoints are off (checkpoint_max_mb: 0 in config.yaml)".into(),
        ));
    };
    let store = recorder.store();
    let key = super::checkpoint_key(ctx);
    let mut records = recorder.records(&key);
    if records.is_empty() || count == 0 {
        return Err(CoreError::Conflict(
            crate::checkpoint::rewind::RewindError::Nothing.to_string(),
        ));
    }
    let undone = records.split_off(records.len() - count.min(records.len()));
    let first = &undone[0];
    // The conversation is checked first, so a rewind that cannot cut it changes nothing.
    if what.conversation() {
        let starts_there = ctx.history.get(first.messages_before).is_some_and(|m| {
            m.role == crate::client::Role::User && m.text_content().contains(first.prompt.trim())
        });
        if !starts_there {
            return Err(CoreError::Conflict(format!(
                "the conversation no longer holds turn {} as it was (it was compressed or \
                 cleared since); rewind the files only",
                first.turn
            )));
        }
    }
    let mut applied = Applied::default();
    if what.files() {
        let lines =
            restore(store, &undone, force).map_err(|e| CoreError::Conflict(e.to_string()))?;
        if lines.is_empty() {
            applied.lines.push(Line::Note("no files to restore".into()));
        }
        applied.lines.extend(lines.into_iter().map(Line::Note));
    }
    if what.conversation() {
        ctx.history.truncate(first.messages_before);
        applied.lines.push(Line::Note(format!(
            "the conversation is back to before turn {} ({} messages)",
            first.turn,
            ctx.history.len()
        )));
        if ctx.session.is_some() && !ctx.otr.get() {
            applied.extend(super::command::save_open_session(state, ctx, emitter).await?);
        }
    }
    recorder
        .write_records(&key, &records)
        .map_err(|e| CoreError::Io {
            action: "write",
            path: key,
            message: e.to_string(),
        })?;
    Ok(applied)
}
