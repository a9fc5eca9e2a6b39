//! `Command::Rewind`: undoes the last turns of a conversation — the files loki's tools
//! changed in them get their earlier content back, and the conversation is cut to
//! before the first of them (saved, when a session is open). A file someone changed
//! after the turn is not overwritten unless `force` (the REPL asks first).

use std::sync::Arc;

use crate::checkpoint::PendingRewind;
use crate::checkpoint::rewind::{RewindError, restore};
use crate::conversation::context::RequestContext;
use crate::error::CoreError;
use crate::state::AppState;
use loki_protocol::command::Restore;
use loki_protocol::command::{Applied, Line};
use loki_protocol::emitter::Emitter;

/// The turns `.rewind` can undo, oldest first (every turn of the conversation, with the
/// files each changed).
pub fn turns(ctx: &RequestContext) -> Vec<crate::checkpoint::TurnRecord> {
    ctx.checkpoints
        .as_ref()
        .map(|r| r.records(&super::checkpoint_key(ctx)))
        .unwrap_or_default()
}

/// Undoes the last `count` turns: `what` says whether files, the conversation or both.
///
/// A session's rewind is written down before anything changes and crossed out when it
/// is done; one that was interrupted (loki killed, a disk error) is finished by the
/// next rewind, which says so and does only that.
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
    let durable = key.starts_with(crate::checkpoint::SESSION_KEY);
    if durable && let Some(pending) = store.pending_rewind(&key) {
        let turn = pending.undone.first().map_or(0, |t| t.turn);
        let mut applied = Applied::default();
        applied.lines.push(Line::Note(format!(
            "an interrupted rewind (back to before turn {turn}) is finished first; \
             rewind again to undo more"
        )));
        applied.extend(finish(state, ctx, &recorder, &key, &pending, emitter).await?);
        return Ok(applied);
    }
    if count == 0 {
        return Err(RewindError::ZeroTurns.into());
    }
    let mut records = recorder.records(&key);
    if records.is_empty() {
        return Err(RewindError::Nothing.into());
    }
    let undone = records.split_off(records.len() - count.min(records.len()));
    let first = &undone[0];
    // The conversation is checked first, so a rewind that cannot cut it changes nothing.
    if what.conversation() {
        let starts_there = ctx.history.get(first.messages_before).is_some_and(|m| {
            m.role == loki_wire::message::Role::User
                && m.text_content().contains(first.prompt.trim())
        });
        if !starts_there {
            return Err(RewindError::ConversationChanged { turn: first.turn }.into());
        }
    }
    if what.files() {
        crate::checkpoint::rewind::preflight(store, &undone, force)?;
    }
    let pending = PendingRewind {
        undone,
        remaining: records,
        files: what.files(),
        conversation: what.conversation(),
    };
    if durable {
        store
            .begin_rewind(&key, &pending)
            .map_err(|e| CoreError::Io {
                action: "write",
                path: key.clone(),
                message: e.to_string(),
            })?;
    }
    finish(state, ctx, &recorder, &key, &pending, emitter).await
}

/// Carries out a rewind written down (or one that needs no writing down): the files, the
/// conversation, the journal — each step safe to repeat — then crosses it out.
async fn finish(
    state: &Arc<AppState>,
    ctx: &mut RequestContext,
    recorder: &crate::checkpoint::Recorder,
    key: &str,
    pending: &PendingRewind,
    emitter: &dyn Emitter,
) -> Result<Applied, CoreError> {
    let io = |action: &'static str, e: &dyn std::fmt::Display| CoreError::Io {
        action,
        path: key.to_string(),
        message: e.to_string(),
    };
    let mut applied = Applied::default();
    let Some(first) = pending.undone.first() else {
        return Ok(applied);
    };
    if pending.files {
        // Checked before it was written down; a resumed rewind finds its own half-done
        // work, which must not stop it.
        let lines = restore(recorder.store(), &pending.undone, true)?;
        if lines.is_empty() {
            applied.lines.push(Line::Note("no files to restore".into()));
        }
        applied.lines.extend(lines.into_iter().map(Line::Note));
    }
    if pending.conversation {
        if ctx.history.len() > first.messages_before {
            ctx.history.truncate(first.messages_before);
            if ctx.session.is_some() && !ctx.otr.get() {
                applied.extend(super::command::save_open_session(state, ctx, emitter).await?);
            }
        }
        applied.lines.push(Line::Note(format!(
            "the conversation is back to before turn {} ({} messages)",
            first.turn,
            ctx.history.len()
        )));
    }
    recorder
        .write_records(key, &pending.remaining)
        .map_err(|e| io("write", &e))?;
    recorder
        .store()
        .end_rewind(key)
        .map_err(|e| io("remove", &e))?;
    Ok(applied)
}
