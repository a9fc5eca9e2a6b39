//! Keeping one conversation's copy of a session in step with the file, when other
//! writers (another loki process, another conversation) append to it meanwhile.
//!
//! A conversation remembers its [`Baseline`]: the file as it last read or wrote it. Under
//! the session lock ([`super::lock`]) it re-reads the file; if somebody else wrote since,
//! [`merge`] puts the messages this conversation added after its baseline behind what is
//! stored now, so nobody's exchange is lost. A conversation that rewrote its past
//! (emptied, regenerated, compressed) cannot be merged that way: that is a
//! [`Merge::Diverged`], and the caller saves it as a separate session instead of
//! overwriting the other writer's work.

use loki_protocol::command::Version;
use loki_wire::message::Message;
use loki_wire::session_file::Session;
use loki_wire::session_file::UsageTally;

/// What a conversation last read from, or wrote to, its session file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Baseline {
    /// The stored version then; `None` if it was not stored yet.
    pub key: Option<Version>,
    /// The messages in it.
    pub messages: Vec<Message>,
    /// The usage in it.
    pub usage: UsageTally,
}

impl Baseline {
    /// The baseline of a session read (or written) as version `key`.
    pub fn of(key: Option<Version>, session: &Session) -> Self {
        Self {
            key,
            messages: session.messages.clone(),
            usage: session.usage,
        }
    }
}

/// What [`merge`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// The conversation was brought up to date; `theirs` messages came from elsewhere.
    Merged {
        /// Messages other writers added that the conversation did not have.
        theirs: usize,
    },
    /// The conversation changed its past since the baseline; nothing was changed.
    Diverged,
}

/// Rebases the conversation (`history`, `usage`) from `base` onto `stored`, the session
/// as it is on disk now: the result is the stored messages followed by the messages the
/// conversation added after its baseline. Usage is rebased the same way.
pub fn merge(
    base: &Baseline,
    stored: &Session,
    history: &mut Vec<Message>,
    usage: &mut UsageTally,
) -> Merge {
    if !history.starts_with(&base.messages) {
        return Merge::Diverged;
    }
    let ours = history.split_off(base.messages.len());
    let theirs = stored.messages.len().saturating_sub(base.messages.len());
    history.clone_from(&stored.messages);
    history.extend(ours);
    let spent = usage.since(&base.usage);
    *usage = stored.usage;
    usage.absorb(&spent);
    Merge::Merged { theirs }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loki_wire::message::Role;

    fn text(role: Role, s: &str) -> Message {
        Message::text(role, s)
    }

    fn session(messages: Vec<Message>, turns: u64) -> Session {
        Session {
            messages,
            usage: UsageTally {
                turns,
                ..UsageTally::default()
            },
            ..Session::default()
        }
    }

    #[test]
    fn our_new_messages_follow_what_others_stored() {
        let q0 = text(Role::User, "q0");
        let a0 = text(Role::Assistant, "a0");
        let base = Baseline::of(
            Some(Version::new("k0")),
            &session(vec![q0.clone(), a0.clone()], 1),
        );
        let stored = session(
            vec![
                q0.clone(),
                a0.clone(),
                text(Role::User, "theirs"),
                text(Role::Assistant, "their answer"),
            ],
            2,
        );
        let mut history = vec![
            q0,
            a0,
            text(Role::User, "ours"),
            text(Role::Assistant, "our answer"),
        ];
        let mut usage = UsageTally {
            turns: 2,
            ..UsageTally::default()
        };
        assert_eq!(
            merge(&base, &stored, &mut history, &mut usage),
            Merge::Merged { theirs: 2 }
        );
        let texts: Vec<String> = history.iter().map(Message::text_content).collect();
        assert_eq!(
            texts,
            ["q0", "a0", "theirs", "their answer", "ours", "our answer"]
        );
        assert_eq!(usage.turns, 3);
    }

    #[test]
    fn a_rewritten_past_is_not_merged() {
        let base = Baseline::of(None, &session(vec![text(Role::User, "q0")], 0));
        let stored = session(vec![text(Role::User, "q0"), text(Role::User, "x")], 0);
        let mut history = vec![text(Role::User, "cleared and asked again")];
        let before = history.clone();
        let mut usage = UsageTally::default();
        assert_eq!(
            merge(&base, &stored, &mut history, &mut usage),
            Merge::Diverged
        );
        assert_eq!(history, before);
    }
}
