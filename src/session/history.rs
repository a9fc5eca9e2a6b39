//! History by default: every conversation that is not off the record is kept as an
//! autonamed session (`_/<timestamp>-<first words>`), and the store is kept within
//! `history_max_sessions` and `history_max_mb` by deleting the oldest autonamed sessions
//! first. Named sessions are never deleted here: a name is the user saying "keep this".

use super::id::slugify;
use super::store::{SessionError, SessionMeta, SessionStore};
use loki_wire::message::{Message, Role};

/// How much history a store may hold (`history_max_sessions`, `history_max_mb`; 0 turns
/// that bound off).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most sessions kept (named ones count, but are not deleted).
    pub max_sessions: usize,
    /// Most bytes the sessions may take on disk.
    pub max_bytes: u64,
}

/// The title of a history session: the first words of its first prompt. No model is
/// asked (that would cost a request per run); the slug keeps the name readable.
pub fn title_from(messages: &[Message]) -> Option<String> {
    let first = messages.iter().find(|m| m.role == Role::User)?;
    let text = first.text_content();
    let words: Vec<&str> = text.split_whitespace().take(8).collect();
    let title = words.join(" ");
    (!slugify(&title).is_empty()).then_some(title)
}

/// Deletes the oldest autonamed sessions until the store is within `limits`; returns how
/// many were deleted. Only listing and a size per session are read, so a run that saves
/// pays a directory scan, not a parse of every session.
pub async fn prune(store: &dyn SessionStore, limits: Limits) -> Result<usize, SessionError> {
    if limits.max_sessions == 0 && limits.max_bytes == 0 {
        return Ok(0);
    }
    let metas = store.list().await?;
    let mut count = metas.len();
    let mut sized = Vec::with_capacity(metas.len());
    let mut total = 0u64;
    for meta in metas {
        let bytes = if limits.max_bytes > 0 {
            store.stored_bytes(&meta).await
        } else {
            0
        };
        total += bytes;
        sized.push((meta, bytes));
    }
    let over = |count: usize, total: u64| {
        (limits.max_sessions > 0 && count > limits.max_sessions)
            || (limits.max_bytes > 0 && total > limits.max_bytes)
    };
    if !over(count, total) {
        return Ok(0);
    }
    let mut victims: Vec<(SessionMeta, u64)> = sized
        .into_iter()
        .filter(|(meta, _)| meta.is_autoname && meta.id.is_some())
        .collect();
    victims.sort_by_key(|(meta, _)| meta.last_modified);
    let mut deleted = 0;
    for (meta, bytes) in victims {
        if !over(count, total) {
            break;
        }
        let Some(id) = meta.id else { continue };
        store.delete(id).await?;
        count -= 1;
        total = total.saturating_sub(bytes);
        deleted += 1;
    }
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::file_store::FileSessionStore;
    use crate::session::id::SessionAlias;
    use loki_wire::session_file::Session;

    async fn saved(store: &FileSessionStore, name: &str) {
        let session = Session {
            messages: vec![Message::text(Role::User, "hello there")],
            ..Session::default()
        };
        let handle = SessionStore::create(store, Some(SessionAlias::new(name).unwrap()), session)
            .await
            .unwrap();
        SessionStore::save(store, &handle).await.unwrap();
        // Distinct modification times, oldest first.
        std::thread::sleep(std::time::Duration::from_millis(15));
    }

    #[tokio::test]
    async fn the_oldest_autonamed_sessions_go_first_and_named_ones_stay() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileSessionStore::new(dir.path().to_path_buf());
        saved(&store, "keep").await;
        saved(&store, "_/20260101T000000-a").await;
        saved(&store, "_/20260101T000001-b").await;
        saved(&store, "_/20260101T000002-c").await;
        let limits = Limits {
            max_sessions: 2,
            max_bytes: 0,
        };
        assert_eq!(prune(&store, limits).await.unwrap(), 2);
        let names: Vec<String> = store.list().iter().map(SessionMeta::name).collect();
        assert_eq!(names, ["_/20260101T000002-c", "keep"]);
        // Named sessions are never deleted, even when they alone exceed the bound.
        let tight = Limits {
            max_sessions: 0,
            max_bytes: 1,
        };
        prune(&store, tight).await.unwrap();
        let names: Vec<String> = store.list().iter().map(SessionMeta::name).collect();
        assert_eq!(names, ["keep"]);
    }

    #[test]
    fn a_title_is_the_first_words_of_the_first_prompt() {
        let messages = [
            Message::text(Role::System, "be brief"),
            Message::text(
                Role::User,
                "  how do I\nreverse a list in Rust quickly please now",
            ),
        ];
        assert_eq!(
            title_from(&messages).as_deref(),
            Some("how do I reverse a list in Rust")
        );
        assert_eq!(title_from(&[Message::text(Role::User, "¿?")]), None);
    }
}
