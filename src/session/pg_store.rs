//! [`PgSessionStore`]: sessions in PostgreSQL (`session_store: postgres://…`), so several
//! `loki --serve` behind a load balancer share them. One row per session: its id, its
//! alias (unique), the session as YAML (the same document the file store writes) and a
//! version counter that every save increments. The write lock is a session-level advisory
//! lock held on a connection of its own for as long as the lease lives, so turns on one
//! session follow each other across instances; a crashed holder's lock goes with its
//! connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use tokio_postgres::{Client, NoTls};
use tokio_util::sync::CancellationToken;

use super::handle::SessionHandle;
use super::id::{SessionAlias, SessionId};
use super::store::{SessionError, SessionLease, SessionMeta, SessionStore, Stored};
use loki_protocol::command::Version;
use loki_wire::session_file::Session;

/// How often a waiting `lock` asks again.
const LOCK_POLL: Duration = Duration::from_millis(25);

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS loki_sessions (
    id text PRIMARY KEY,
    alias text UNIQUE,
    body text NOT NULL,
    version bigint NOT NULL,
    updated_at bigint NOT NULL
)";

/// Sessions in a PostgreSQL database.
pub struct PgSessionStore {
    url: String,
    /// The shared connection; replaced when the database went away (restart, network).
    client: tokio::sync::Mutex<Link>,
    /// Handles open in this process, so they share one copy.
    open: Mutex<HashMap<SessionId, SessionHandle>>,
}

fn db(e: &tokio_postgres::Error) -> SessionError {
    // The server's own message when there is one (it names the problem).
    let message = e
        .as_db_error()
        .map_or_else(|| e.to_string(), |d| d.message().to_string());
    SessionError::Database(loki_wire::secrets::redact(&message).into_owned())
}

/// A connection to `url` (TLS as its `sslmode` says), driven by a task of its own.
pub(crate) async fn connect(url: &str) -> Result<Client, SessionError> {
    open(url, None).await
}

/// A connection to `url` whose notifications (`LISTEN`) go to `notices` as their
/// payloads; `notices` closes when the connection ends.
pub(crate) async fn connect_listening(
    url: &str,
    notices: tokio::sync::mpsc::UnboundedSender<String>,
) -> Result<Client, SessionError> {
    open(url, Some(notices)).await
}

async fn open(
    url: &str,
    notices: Option<tokio::sync::mpsc::UnboundedSender<String>>,
) -> Result<Client, SessionError> {
    let target = super::pg_tls::target(url)?;
    match target.tls {
        Some(tls) => drive(tokio_postgres::connect(&target.url, tls).await, notices),
        None => drive(tokio_postgres::connect(&target.url, NoTls).await, notices),
    }
}

/// Spawns the task that drives a new connection: passing its notifications to
/// `notices`, or only watching it end.
fn drive<S, T>(
    connected: Result<(Client, tokio_postgres::Connection<S, T>), tokio_postgres::Error>,
    notices: Option<tokio::sync::mpsc::UnboundedSender<String>>,
) -> Result<Client, SessionError>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (client, connection) = connected.map_err(|e| db(&e))?;
    match notices {
        Some(notices) => tokio::spawn(forward(connection, notices)),
        None => tokio::spawn(watch(connection)),
    };
    Ok(client)
}

/// Drives a connection, passing its notifications on, until it ends.
async fn forward<S, T>(
    mut connection: tokio_postgres::Connection<S, T>,
    notices: tokio::sync::mpsc::UnboundedSender<String>,
) where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    use futures_util::StreamExt;
    let mut messages = futures_util::stream::poll_fn(move |cx| connection.poll_message(cx));
    while let Some(message) = messages.next().await {
        match message {
            Ok(tokio_postgres::AsyncMessage::Notification(n)) => {
                if notices.send(n.payload().to_string()).is_err() {
                    return;
                }
            }
            Ok(_) => {}
            Err(e) => {
                tracing::warn!("coordination database connection: {e}");
                return;
            }
        }
    }
}

/// Drives a connection until it ends, logging why.
async fn watch<S, T>(connection: tokio_postgres::Connection<S, T>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    if let Err(e) = connection.await {
        tracing::warn!("session database connection: {e}");
    }
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

fn parse(id: SessionId, body: &str) -> Result<Session, SessionError> {
    serde_yaml::from_str(body).map_err(|e| {
        SessionError::Database(format!("session {id} is not a valid session document: {e}"))
    })
}

/// The advisory-lock key of a session.
fn lock_key(id: SessionId) -> i64 {
    let digest = ring::digest::digest(&ring::digest::SHA256, id.to_string().as_bytes());
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest.as_ref()[..8]);
    i64::from_le_bytes(bytes)
}

/// The shared connection and when the last attempt to make one failed.
struct Link {
    client: Option<Arc<Client>>,
    failed: Option<(std::time::Instant, Duration)>,
}

/// The longest wait between two attempts to reach a database that is down.
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// A connection holding a session's advisory lock; closing it releases the lock.
struct Held(#[allow(dead_code)] Client);

impl PgSessionStore {
    /// Connects to `url` and makes sure the table exists.
    pub async fn connect(url: &str) -> Result<Self, SessionError> {
        let client = connect(url).await?;
        client.batch_execute(SCHEMA).await.map_err(|e| db(&e))?;
        Ok(Self {
            url: url.to_string(),
            client: tokio::sync::Mutex::new(Link {
                client: Some(Arc::new(client)),
                failed: None,
            }),
            open: Mutex::new(HashMap::new()),
        })
    }

    /// The shared connection, made again when the old one closed. While the database
    /// stays unreachable, attempts are spaced out (doubling up to [`MAX_BACKOFF`]) and the
    /// calls in between fail at once.
    async fn client(&self) -> Result<Arc<Client>, SessionError> {
        let mut link = self.client.lock().await;
        if let Some(client) = link.client.as_ref().filter(|c| !c.is_closed()) {
            return Ok(Arc::clone(client));
        }
        link.client = None;
        if let Some((at, wait)) = link.failed
            && at.elapsed() < wait
        {
            return Err(SessionError::Database(format!(
                "the session database is unreachable; retrying in {} ms",
                (wait - at.elapsed()).as_millis()
            )));
        }
        match connect(&self.url).await {
            Ok(client) => {
                tracing::info!("session database connection made again");
                let client = Arc::new(client);
                link.client = Some(Arc::clone(&client));
                link.failed = None;
                Ok(client)
            }
            Err(e) => {
                let wait = link.failed.map_or(Duration::from_millis(100), |(_, w)| {
                    (w * 2).min(MAX_BACKOFF)
                });
                link.failed = Some((std::time::Instant::now(), wait));
                Err(e)
            }
        }
    }

    fn cached(&self, id: SessionId) -> Option<SessionHandle> {
        self.open.lock().ok().and_then(|o| o.get(&id).cloned())
    }

    fn remember(&self, handle: &SessionHandle) {
        if let Ok(mut open) = self.open.lock() {
            open.insert(handle.id(), handle.clone());
        }
    }

    /// Runs a query that gives at most one row, on the shared connection.
    async fn query_opt(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<Option<tokio_postgres::Row>, SessionError> {
        self.client()
            .await?
            .query_opt(sql, params)
            .await
            .map_err(|e| db(&e))
    }

    /// Runs a statement on the shared connection: how many rows it changed.
    async fn execute(
        &self,
        sql: &str,
        params: &[&(dyn tokio_postgres::types::ToSql + Sync)],
    ) -> Result<u64, SessionError> {
        self.client()
            .await?
            .execute(sql, params)
            .await
            .map_err(|e| db(&e))
    }

    /// Takes the lock of `id` on `client` if nobody holds it.
    async fn try_lock_on(client: &Client, id: SessionId) -> Result<bool, SessionError> {
        let row = client
            .query_one("SELECT pg_try_advisory_lock($1)", &[&lock_key(id)])
            .await
            .map_err(|e| db(&e))?;
        Ok(row.get(0))
    }
}

#[async_trait::async_trait]
impl SessionStore for PgSessionStore {
    async fn resolve(
        &self,
        key: &str,
    ) -> Result<Option<(SessionId, Option<SessionAlias>)>, SessionError> {
        let row = match SessionId::parse(key) {
            Some(id) => {
                self.query_opt(
                    "SELECT id, alias FROM loki_sessions WHERE id = $1",
                    &[&id.to_string()],
                )
                .await?
            }
            None => {
                self.query_opt(
                    "SELECT id, alias FROM loki_sessions WHERE alias = $1",
                    &[&key],
                )
                .await?
            }
        };
        Ok(row.and_then(|row| {
            let id = SessionId::parse(row.get::<_, &str>(0))?;
            let alias = row
                .get::<_, Option<&str>>(1)
                .and_then(|a| SessionAlias::new(a).ok());
            Some((id, alias))
        }))
    }

    async fn open(
        &self,
        id: SessionId,
        alias: Option<SessionAlias>,
    ) -> Result<SessionHandle, SessionError> {
        if let Some(handle) = self.cached(id) {
            return Ok(handle.named(alias));
        }
        let row = self
            .query_opt(
                "SELECT body, version FROM loki_sessions WHERE id = $1",
                &[&id.to_string()],
            )
            .await?
            .ok_or_else(|| SessionError::NotFound {
                name: id.to_string(),
            })?;
        let session = parse(id, row.get(0))?;
        let version = Version::new(row.get::<_, i64>(1).to_string());
        let handle = SessionHandle::loaded(id, alias, session, Some(version));
        self.remember(&handle);
        Ok(handle)
    }

    async fn create(
        &self,
        alias: Option<SessionAlias>,
        initial: Session,
    ) -> Result<SessionHandle, SessionError> {
        if let Some(name) = &alias
            && self.resolve(name.as_str()).await?.is_some()
        {
            return Err(SessionError::AliasInUse {
                name: name.to_string(),
            });
        }
        let handle = SessionHandle::loaded(SessionId::new(), alias, initial, None);
        self.remember(&handle);
        Ok(handle)
    }

    async fn save(&self, handle: &SessionHandle) -> Result<Stored, SessionError> {
        let body = serde_yaml::to_string(handle.lock().get())
            .map_err(|e| SessionError::Database(e.to_string()))?;
        let alias = handle.alias().map(ToString::to_string);
        let row = self
            .client()
            .await?
            .query_one(
                "INSERT INTO loki_sessions (id, alias, body, version, updated_at)
                 VALUES ($1, $2, $3, 1, $4)
                 ON CONFLICT (id) DO UPDATE
                 SET alias = EXCLUDED.alias, body = EXCLUDED.body,
                     version = loki_sessions.version + 1, updated_at = EXCLUDED.updated_at
                 RETURNING version",
                &[&handle.id().to_string(), &alias, &body, &now()],
            )
            .await
            .map_err(|e| match e.code() {
                Some(code) if *code == tokio_postgres::error::SqlState::UNIQUE_VIOLATION => {
                    SessionError::AliasInUse {
                        name: alias.clone().unwrap_or_default(),
                    }
                }
                _ => db(&e),
            })?;
        let version = Version::new(row.get::<_, i64>(0).to_string());
        handle.set_version(Some(version.clone()));
        handle.mark_clean();
        Ok(Stored {
            version,
            location: format!("postgres: loki_sessions {}", handle.id()),
        })
    }

    async fn rename(
        &self,
        handle: &mut SessionHandle,
        alias: SessionAlias,
    ) -> Result<(), SessionError> {
        if let Some((other, _)) = self.resolve(alias.as_str()).await?
            && other != handle.id()
        {
            return Err(SessionError::AliasInUse {
                name: alias.to_string(),
            });
        }
        self.execute(
            "UPDATE loki_sessions SET alias = $2 WHERE id = $1",
            &[&handle.id().to_string(), &alias.to_string()],
        )
        .await?;
        handle.set_alias(alias);
        Ok(())
    }

    async fn delete(&self, id: SessionId) -> Result<(), SessionError> {
        let deleted = self
            .execute(
                "DELETE FROM loki_sessions WHERE id = $1",
                &[&id.to_string()],
            )
            .await?;
        if let Ok(mut open) = self.open.lock() {
            open.remove(&id);
        }
        if deleted == 0 {
            return Err(SessionError::NotFound {
                name: id.to_string(),
            });
        }
        Ok(())
    }

    async fn list(&self) -> Result<Vec<SessionMeta>, SessionError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT id, alias, updated_at FROM loki_sessions ORDER BY coalesce(alias, id)",
                &[],
            )
            .await
            .map_err(|e| db(&e))?;
        Ok(rows
            .iter()
            .map(|row| {
                let alias = row
                    .get::<_, Option<&str>>(1)
                    .and_then(|a| SessionAlias::new(a).ok());
                let seconds = u64::try_from(row.get::<_, i64>(2)).unwrap_or(0);
                SessionMeta {
                    id: SessionId::parse(row.get::<_, &str>(0)),
                    is_autoname: alias.as_ref().is_some_and(SessionAlias::is_autoname),
                    alias,
                    last_modified: SystemTime::UNIX_EPOCH + Duration::from_secs(seconds),
                }
            })
            .collect())
    }

    async fn healthy(&self) -> bool {
        let Ok(client) = self.client().await else {
            return false;
        };
        let probe = client.simple_query("SELECT 1");
        matches!(
            tokio::time::timeout(Duration::from_secs(2), probe).await,
            Ok(Ok(_))
        )
    }

    async fn is_stored(&self, id: SessionId) -> bool {
        let Ok(client) = self.client().await else {
            return false;
        };
        client
            .query_opt(
                "SELECT 1 FROM loki_sessions WHERE id = $1",
                &[&id.to_string()],
            )
            .await
            .is_ok_and(|row| row.is_some())
    }

    async fn reload(
        &self,
        id: SessionId,
        known: Option<&Version>,
    ) -> Result<Option<(Version, Session)>, SessionError> {
        let Some(row) = self
            .query_opt(
                "SELECT body, version FROM loki_sessions WHERE id = $1",
                &[&id.to_string()],
            )
            .await?
        else {
            return Ok(None);
        };
        let version = Version::new(row.get::<_, i64>(1).to_string());
        if known == Some(&version) {
            return Ok(None);
        }
        Ok(Some((version, parse(id, row.get(0))?)))
    }

    async fn try_lock(&self, handle: &SessionHandle) -> Result<Option<SessionLease>, SessionError> {
        let client = connect(&self.url).await?;
        let taken = Self::try_lock_on(&client, handle.id()).await?;
        Ok(taken.then(|| SessionLease::holding(Held(client))))
    }

    async fn lock(
        &self,
        handle: &SessionHandle,
        cancel: &CancellationToken,
    ) -> Result<SessionLease, SessionError> {
        let client = connect(&self.url).await?;
        loop {
            if Self::try_lock_on(&client, handle.id()).await? {
                return Ok(SessionLease::holding(Held(client)));
            }
            tokio::select! {
                () = cancel.cancelled() => return Err(SessionError::Cancelled),
                () = tokio::time::sleep(LOCK_POLL) => {}
            }
        }
    }
}
