//! One save policy: when a conversation's session is written. Every front end asks here
//! instead of deciding itself.
//!
//! The setting is the session's own `save_session`, else the conversation's (`.set
//! save_session`, `save_session:` in config.yaml). Only a changed ("dirty") session is
//! ever saved implicitly.
//! - Leaving it interactively (`.exit session`, Ctrl-D): `true` saves (the temporary
//!   session under an autoname), `false` discards, unset asks — except for a session
//!   from the history (`_/…`), which is saved.
//! - A conversation without a session is kept as history when it closes
//!   ([`keeps_history`]).
//! - Leaving it unattended (SIGTERM, SIGHUP, a lost terminal): saved unless `false`.
//! - At the end of a one-shot, `-e` or headless run: a named session is saved unless
//!   `false`; the temporary session only with `true` (or `--save-session`).
//! - `true` also names the temporary session after each turn (autonaming).

use crate::conversation::context::RequestContext;

/// What to do with a session being left interactively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnLeave {
    /// Write it.
    Save,
    /// Drop the changes.
    Discard,
    /// Ask the user.
    Ask,
    /// Nothing changed; nothing to do.
    #[default]
    Unchanged,
}

/// The `save_session` in force for the open session (`None`: ask).
pub(super) fn setting(ctx: &RequestContext) -> Option<bool> {
    let session = ctx.session.as_ref()?;
    session.lock().get().save_session.or(ctx.save_session)
}

fn dirty(ctx: &RequestContext) -> bool {
    ctx.session
        .as_ref()
        .is_some_and(crate::session::handle::SessionHandle::is_dirty)
}

fn temporary(ctx: &RequestContext) -> bool {
    ctx.session
        .as_ref()
        .is_some_and(|s| s.name() == crate::session::TEMP_SESSION)
}

fn autonamed(ctx: &RequestContext) -> bool {
    ctx.session
        .as_ref()
        .and_then(crate::session::handle::SessionHandle::alias)
        .is_some_and(crate::session::id::SessionAlias::is_autoname)
}

/// Leaving the session interactively.
pub(super) fn on_leave(ctx: &RequestContext) -> OnLeave {
    if !dirty(ctx) {
        return OnLeave::Unchanged;
    }
    match setting(ctx) {
        Some(true) => OnLeave::Save,
        Some(false) => OnLeave::Discard,
        // A conversation from the history (`_/…`) goes on being history: kept unasked.
        None if autonamed(ctx) => OnLeave::Save,
        None => OnLeave::Ask,
    }
}

/// Leaving it with nobody to ask (a stop signal, a lost terminal).
pub(super) fn save_unattended(ctx: &RequestContext) -> bool {
    dirty(ctx) && setting(ctx) != Some(false)
}

/// At the end of a one-shot, `-e` or headless run; `forced` is `--save-session`.
pub(super) fn save_after_run(ctx: &RequestContext, forced: bool) -> bool {
    // A dry run keeps nothing: not even what its commands did (`--empty-session`).
    if ctx.session.is_none() || ctx.otr.get() || ctx.dry_run {
        return false;
    }
    let setting = setting(ctx);
    forced || (dirty(ctx) && setting != Some(false) && (!temporary(ctx) || setting == Some(true)))
}

/// Whether a conversation without a session is kept as history when it closes: it said
/// something, it is the user's own (not a sub-agent's), not off the record, not a dry
/// run, and neither `save_session: false` nor `history: false` is set.
pub(super) fn keeps_history(ctx: &RequestContext) -> bool {
    ctx.session.is_none()
        && ctx.depth == 0
        && !ctx.otr.get()
        && !ctx.dry_run
        && ctx.save_session != Some(false)
        && ctx
            .history
            .iter()
            .any(|m| m.role == loki_wire::message::Role::Assistant)
}

/// Whether the session is saved when it is closed (`save_session: true`), so the
/// temporary one is given a title after each turn.
pub(super) fn names_each_turn(ctx: &RequestContext) -> bool {
    setting(ctx) == Some(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::id::SessionAlias;
    use crate::test_support::Fixture;
    use loki_wire::session_file::Session;

    /// A session's situation and what the policy decides for it.
    struct Case {
        temporary: bool,
        dirty: bool,
        session: Option<bool>,
        conversation: Option<bool>,
        forced: bool,
        on_leave: OnLeave,
        unattended: bool,
        after_run: bool,
        each_turn: bool,
    }

    const fn case(
        (temporary, dirty): (bool, bool),
        (session, conversation, forced): (Option<bool>, Option<bool>, bool),
        on_leave: OnLeave,
        (unattended, after_run, each_turn): (bool, bool, bool),
    ) -> Case {
        Case {
            temporary,
            dirty,
            session,
            conversation,
            forced,
            on_leave,
            unattended,
            after_run,
            each_turn,
        }
    }

    #[test]
    fn when_a_session_is_written() {
        use OnLeave::{Ask, Discard, Save, Unchanged};
        let named = (false, true);
        let cases = [
            case(
                (false, false),
                (None, None, false),
                Unchanged,
                (false, false, false),
            ),
            case(named, (None, None, false), Ask, (true, true, false)),
            case(named, (Some(true), None, false), Save, (true, true, true)),
            case(
                named,
                (Some(false), None, false),
                Discard,
                (false, false, false),
            ),
            case(
                named,
                (None, Some(false), false),
                Discard,
                (false, false, false),
            ),
            // The session's own setting wins over the conversation's.
            case(
                named,
                (Some(true), Some(false), false),
                Save,
                (true, true, true),
            ),
            case(
                named,
                (Some(false), Some(true), false),
                Discard,
                (false, false, false),
            ),
            // The temporary session is kept after a run only when asked to.
            case((true, true), (None, None, false), Ask, (true, false, false)),
            case(
                (true, true),
                (None, Some(true), false),
                Save,
                (true, true, true),
            ),
            case((true, true), (None, None, true), Ask, (true, true, false)),
            // `--save-session` saves even an unchanged session.
            case(
                (false, false),
                (Some(false), None, true),
                Unchanged,
                (false, true, false),
            ),
        ];
        let fixture = Fixture::new();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        for (n, c) in cases.iter().enumerate() {
            let mut ctx = fixture.context();
            let name = if c.temporary { "temp" } else { "work" };
            let initial = Session {
                save_session: c.session,
                ..Session::default()
            };
            let handle = runtime
                .block_on(
                    fixture
                        .state
                        .sessions
                        .create(Some(SessionAlias::new(name).unwrap()), initial),
                )
                .unwrap();
            if c.dirty {
                handle.mark_dirty();
            }
            ctx.session = Some(handle);
            ctx.save_session = c.conversation;
            assert_eq!(on_leave(&ctx), c.on_leave, "case {n}");
            assert_eq!(save_unattended(&ctx), c.unattended, "case {n}");
            assert_eq!(save_after_run(&ctx, c.forced), c.after_run, "case {n}");
            assert_eq!(names_each_turn(&ctx), c.each_turn, "case {n}");
        }
        let without = fixture.context();
        assert_eq!(on_leave(&without), OnLeave::Unchanged);
        assert!(!save_after_run(&without, true));
    }
}
