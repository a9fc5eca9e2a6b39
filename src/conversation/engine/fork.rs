//! `.fork [name]` and `--fork-session`: the conversation goes on in a new session that
//! starts as a copy of the open one; the original keeps what it had stored.

use loki_protocol::command::{Applied, Line};
use loki_protocol::emitter::Emitter;

use crate::conversation::context::RequestContext;
use crate::error::CoreError;
use crate::session::tracker::Tracker;
use crate::state::AppState;

/// Moves the conversation to a fork of its session and saves the fork at once, so it
/// exists (and can be resumed) even if nothing more is said in it.
pub(super) async fn fork_session(
    state: &AppState,
    ctx: &mut RequestContext,
    name: Option<&str>,
    emitter: &dyn Emitter,
) -> Result<Applied, CoreError> {
    let Some(source) = ctx.session.as_ref() else {
        return Err(CoreError::NoSession);
    };
    let from = source.name();
    let fresh = crate::session::fork::fork(&*ctx.sessions(state), source, name).await?;
    let to = fresh.name();
    ctx.session = Some(fresh);
    // The fork has its own history of versions; the original's lock stays with whoever
    // holds it.
    ctx.session_sync = Tracker::default();
    let mut applied = Applied::note(format!(
        "forked session `{from}` into `{to}` ({} messages); `{from}` is unchanged",
        ctx.history.len()
    ));
    let saved = super::command::save_session(state, ctx, None, emitter).await?;
    applied.lines.extend(
        saved
            .lines
            .into_iter()
            .filter(|l| matches!(l, Line::Warning(_))),
    );
    applied.saved = saved.saved;
    Ok(applied)
}

/// Where the conversation's `user_message`-th prompt (1-based) is in its history.
pub(crate) fn user_message_index(
    history: &[loki_wire::message::Message],
    user_message: usize,
) -> Option<usize> {
    history
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == loki_wire::message::Role::User)
        .nth(user_message.checked_sub(1)?)
        .map(|(i, _)| i)
}

/// Cuts the conversation to before its `user_message`-th prompt, and saves an open
/// session so; the files the later turns changed stay as they are (`.rewind` puts
/// those back).
pub(super) async fn cut_conversation(
    state: &AppState,
    ctx: &mut RequestContext,
    user_message: usize,
    emitter: &dyn Emitter,
) -> Result<Applied, CoreError> {
    let prompts = ctx
        .history
        .iter()
        .filter(|m| m.role == loki_wire::message::Role::User)
        .count();
    let Some(index) = user_message_index(&ctx.history, user_message) else {
        return Err(CoreError::InvalidRequest(format!(
            "there is no message {user_message}: the conversation has {prompts} prompt(s)"
        )));
    };
    ctx.history.truncate(index);
    let mut applied = Applied::note(format!(
        "the conversation is back to before message {user_message} ({} messages)",
        ctx.history.len()
    ));
    if ctx.session.is_some() && !ctx.otr.get() {
        applied.extend(super::command::save_open_session(state, ctx, emitter).await?);
    }
    Ok(applied)
}

#[cfg(test)]
mod tests {
    use super::user_message_index;
    use loki_wire::message::{Message, Role};

    #[test]
    fn prompts_are_counted_from_one_among_user_messages() {
        let history = [
            Message::text(Role::User, "a"),
            Message::text(Role::Assistant, "b"),
            Message::text(Role::User, "c"),
            Message::text(Role::Assistant, "d"),
        ];
        assert_eq!(user_message_index(&history, 1), Some(0));
        assert_eq!(user_message_index(&history, 2), Some(2));
        assert_eq!(user_message_index(&history, 3), None);
        assert_eq!(user_message_index(&history, 0), None);
    }
}
