//! One save policy: when a conversation's session is written. Every front end asks here
//! instead of deciding itself.
//!
//! The setting is the session's own `save_session`, else the conversation's (`.set
//! save_session`, `save_session:` in config.yaml). Only a changed ("dirty") session is
//! ever saved implicitly.
//! - Leaving it interactively (`.exit session`, Ctrl-D): `true` saves (the temporary
//!   session under an autoname), `false` discards, unset asks.
//! - Leaving it unattended (SIGTERM, SIGHUP, a lost terminal): saved unless `false`.
//! - At the end of a one-shot, `-e` or headless run: a named session is saved unless
//!   `false`; the temporary session only with `true` (or `--save-session`).
//! - `true` also names the temporary session after each turn (autonaming).

use crate::context::RequestContext;

/// What to do with a session being left interactively.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnLeave {
    /// Write it.
    Save,
    /// Drop the changes.
    Discard,
    /// Ask the user.
    Ask,
    /// Nothing changed; nothing to do.
    Unchanged,
}

/// The `save_session` in force for the open session (`None`: ask).
pub fn setting(ctx: &RequestContext) -> Option<bool> {
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

/// Leaving the session interactively.
pub fn on_leave(ctx: &RequestContext) -> OnLeave {
    if !dirty(ctx) {
        return OnLeave::Unchanged;
    }
    match setting(ctx) {
        Some(true) => OnLeave::Save,
        Some(false) => OnLeave::Discard,
        None => OnLeave::Ask,
    }
}

/// Leaving it with nobody to ask (a stop signal, a lost terminal).
pub fn save_unattended(ctx: &RequestContext) -> bool {
    dirty(ctx) && setting(ctx) != Some(false)
}

/// At the end of a one-shot, `-e` or headless run; `forced` is `--save-session`.
pub fn save_after_run(ctx: &RequestContext, forced: bool) -> bool {
    if ctx.session.is_none() {
        return false;
    }
    let setting = setting(ctx);
    forced || (dirty(ctx) && setting != Some(false) && (!temporary(ctx) || setting == Some(true)))
}

/// Whether the session is saved when it is closed (`save_session: true`), so the
/// temporary one is given a title after each turn.
pub fn names_each_turn(ctx: &RequestContext) -> bool {
    setting(ctx) == Some(true)
}
