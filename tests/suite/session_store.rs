//! The session store is an interface: a store of the library user's own (here in
//! memory, as a database store would be) injected into `AppState` carries every session
//! a conversation opens, locks and saves, and nothing is written to the YAML directory.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use loki::conversation::{Conversation, ConversationSpec};
use loki::session::handle::SessionHandle;
use loki::session::id::{SessionAlias, SessionId};
use loki::session::store::{SessionError, SessionLease, SessionMeta, SessionStore, Stored};
use loki_protocol::command::Command;
use loki_protocol::command::Version;
use loki_protocol::emitter::CollectingEmitter;
use loki_protocol::op::Op;
use loki_protocol::op::UserInput;
use loki_wire::session_file::Session;
use tokio_util::sync::CancellationToken;

use crate::common::TestEnv;
use crate::common::fake_llm::openai;

/// A stored session: alias, content, version number.
type Row = (Option<SessionAlias>, Session, u64);

#[derive(Default)]
struct Memory {
    rows: Mutex<HashMap<SessionId, Row>>,
    /// One handle per session opened, so every open shares it.
    live: Mutex<HashMap<SessionId, SessionHandle>>,
    locks: Mutex<HashMap<SessionId, Arc<tokio::sync::Mutex<()>>>>,
    saves: Mutex<usize>,
}

impl Memory {
    fn lock_of(&self, id: SessionId) -> Arc<tokio::sync::Mutex<()>> {
        Arc::clone(self.locks.lock().unwrap().entry(id).or_default())
    }
}

#[async_trait::async_trait]
impl SessionStore for Memory {
    async fn resolve(
        &self,
        key: &str,
    ) -> Result<Option<(SessionId, Option<SessionAlias>)>, SessionError> {
        let rows = self.rows.lock().unwrap();
        Ok(rows
            .iter()
            .find(|(id, (alias, _, _))| {
                id.to_string() == key || alias.as_ref().is_some_and(|a| a.as_str() == key)
            })
            .map(|(id, (alias, _, _))| (*id, alias.clone())))
    }

    async fn open(
        &self,
        id: SessionId,
        alias: Option<SessionAlias>,
    ) -> Result<SessionHandle, SessionError> {
        if let Some(handle) = self.live.lock().unwrap().get(&id) {
            return Ok(handle.named(alias));
        }
        let rows = self.rows.lock().unwrap();
        let (_, session, version) = rows.get(&id).ok_or_else(|| SessionError::NotFound {
            name: id.to_string(),
        })?;
        let handle = SessionHandle::loaded(
            id,
            alias,
            session.clone(),
            Some(Version::new(version.to_string())),
        );
        self.live.lock().unwrap().insert(id, handle.clone());
        Ok(handle)
    }

    async fn create(
        &self,
        alias: Option<SessionAlias>,
        initial: Session,
    ) -> Result<SessionHandle, SessionError> {
        let id = SessionId::new();
        let handle = SessionHandle::loaded(id, alias, initial, None);
        self.live.lock().unwrap().insert(id, handle.clone());
        Ok(handle)
    }

    async fn save(&self, handle: &SessionHandle) -> Result<Stored, SessionError> {
        let session = handle.lock().get().clone();
        let mut rows = self.rows.lock().unwrap();
        let next = rows.get(&handle.id()).map_or(1, |(_, _, v)| v + 1);
        rows.insert(handle.id(), (handle.alias().cloned(), session, next));
        *self.saves.lock().unwrap() += 1;
        let version = Version::new(next.to_string());
        handle.mark_clean();
        handle.set_version(Some(version.clone()));
        Ok(Stored {
            version,
            location: format!("memory:{}", handle.id()),
        })
    }

    async fn rename(
        &self,
        handle: &mut SessionHandle,
        alias: SessionAlias,
    ) -> Result<(), SessionError> {
        if let Some(row) = self.rows.lock().unwrap().get_mut(&handle.id()) {
            row.0 = Some(alias.clone());
        }
        handle.set_alias(alias);
        Ok(())
    }

    async fn delete(&self, id: SessionId) -> Result<(), SessionError> {
        self.rows.lock().unwrap().remove(&id);
        Ok(())
    }

    async fn list(&self) -> Result<Vec<SessionMeta>, SessionError> {
        Ok(self
            .rows
            .lock()
            .unwrap()
            .iter()
            .map(|(id, (alias, _, _))| SessionMeta {
                id: Some(*id),
                alias: alias.clone(),
                last_modified: std::time::SystemTime::now(),
                is_autoname: false,
            })
            .collect())
    }

    async fn is_stored(&self, id: SessionId) -> bool {
        self.rows.lock().unwrap().contains_key(&id)
    }

    async fn reload(
        &self,
        id: SessionId,
        known: Option<&Version>,
    ) -> Result<Option<(Version, Session)>, SessionError> {
        let rows = self.rows.lock().unwrap();
        Ok(rows.get(&id).and_then(|(_, session, version)| {
            let version = Version::new(version.to_string());
            (known != Some(&version)).then(|| (version, session.clone()))
        }))
    }

    async fn try_lock(&self, handle: &SessionHandle) -> Result<Option<SessionLease>, SessionError> {
        Ok(self
            .lock_of(handle.id())
            .try_lock_owned()
            .ok()
            .map(SessionLease::holding))
    }

    async fn lock(
        &self,
        handle: &SessionHandle,
        cancel: &CancellationToken,
    ) -> Result<SessionLease, SessionError> {
        let lock = self.lock_of(handle.id());
        tokio::select! {
            guard = lock.lock_owned() => Ok(SessionLease::holding(guard)),
            () = cancel.cancelled() => Err(SessionError::Cancelled),
        }
    }
}

#[test]
fn an_injected_store_carries_every_session_and_the_yaml_directory_stays_empty() {
    let env = TestEnv::new();
    env.server
        .respond_for("/v1/chat", |_| openai::text_stream(&["stored answer"]));
    let memory = Arc::new(Memory::default());
    let state = Arc::new(env.library_state().with_sessions(memory.clone()));
    let sessions_dir = state.paths.sessions_dir.clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let spec = || ConversationSpec {
            commands: vec![Command::OpenSession("work".into())],
            hold_session: true,
            force_save: true,
            cwd: Some(env.work_dir()),
            ..ConversationSpec::default()
        };
        let emitter = CollectingEmitter::new();
        for question in ["first question", "second question"] {
            let mut conversation = Conversation::open(&state, spec()).await.expect("open");
            let input = UserInput {
                text: question.into(),
                ..UserInput::default()
            };
            let run = conversation.submit(Op::prompt(input), &emitter).await;
            assert!(run.is_ok(), "{run:?}");
            let closed = conversation.close(&emitter).await;
            let saved = closed.into_saved().expect("finish").saved.expect("saved");
            assert!(saved.location.starts_with("memory:"), "{}", saved.location);
        }
        let names = loki::conversation::catalog::session_names(&state)
            .await
            .unwrap();
        assert_eq!(names, ["work"]);
        let stored = loki::conversation::catalog::stored_session(&state, "work")
            .await
            .unwrap()
            .expect("stored");
        let texts: Vec<String> = stored
            .messages
            .iter()
            .map(loki_wire::message::Message::text_content)
            .collect();
        assert_eq!(
            texts,
            [
                "first question",
                "stored answer",
                "second question",
                "stored answer"
            ]
        );
    });
    assert_eq!(*memory.saves.lock().unwrap(), 2);
    let written: Vec<_> = std::fs::read_dir(&sessions_dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(
        written.is_empty(),
        "the YAML directory was used: {written:?}"
    );
}

/// `.edit session` goes through the store, so it works whatever holds the sessions: the
/// edited YAML replaces the session in the injected store (no file is written), the
/// conversation goes on with it, and a draft that does not parse changes nothing.
#[test]
fn an_edited_session_replaces_the_stored_one_through_the_store() {
    let env = TestEnv::new();
    env.server
        .respond_for("/v1/chat", |_| openai::text_stream(&["stored answer"]));
    let memory = Arc::new(Memory::default());
    let state = Arc::new(env.library_state().with_sessions(memory));
    let sessions_dir = state.paths.sessions_dir.clone();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let spec = ConversationSpec {
            commands: vec![Command::OpenSession("work".into())],
            cwd: Some(env.work_dir()),
            ..ConversationSpec::default()
        };
        let emitter = CollectingEmitter::new();
        let mut conversation = Conversation::open(&state, spec).await.expect("open");
        let input = UserInput {
            text: "hi there".into(),
            ..UserInput::default()
        };
        conversation
            .submit(Op::prompt(input), &emitter)
            .await
            .expect("run");
        let yaml = conversation
            .session_yaml()
            .expect("a session")
            .expect("as YAML");
        assert!(yaml.contains("hi there"), "{yaml}");

        let broken = Command::ReplaceSession {
            yaml: "messages: [unclosed\n".into(),
            base: yaml.clone(),
        };
        let refused = conversation.submit(Op::Command(broken), &emitter).await;
        assert!(refused.is_err(), "{refused:?}");

        // An edit of a base that is not the session any more is refused.
        let stale = Command::ReplaceSession {
            yaml: yaml.replace("hi there", "stale edit"),
            base: yaml.replace("hi there", "what it was before"),
        };
        let refused = conversation.submit(Op::Command(stale), &emitter).await;
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.to_string().contains("changed while it was being edited")),
            "{refused:?}"
        );
        let edited = Command::ReplaceSession {
            yaml: yaml.replace("hi there", "hello edited"),
            base: yaml.clone(),
        };
        let applied = conversation
            .command(edited, &emitter)
            .await
            .expect("replaced");
        assert!(
            applied
                .notes()
                .any(|n| n.contains("reloaded the session (2 messages)")),
            "{applied:?}"
        );
        let stored = loki::conversation::catalog::stored_session(&state, "work")
            .await
            .unwrap()
            .expect("stored");
        assert_eq!(stored.messages[0].text_content(), "hello edited");
        // The conversation goes on with the edit.
        let next = UserInput {
            text: "and now".into(),
            ..UserInput::default()
        };
        conversation
            .submit(Op::prompt(next), &emitter)
            .await
            .expect("run");
        let sent = env.server.last_request().json();
        assert_eq!(sent["messages"][0]["content"], "hello edited", "{sent}");
    });
    let written: Vec<_> = std::fs::read_dir(&sessions_dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(
        written.is_empty(),
        "the YAML directory was used: {written:?}"
    );
}
