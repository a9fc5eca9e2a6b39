//! [`Cluster`]: several `loki --serve` instances on one PostgreSQL database (the
//! `session_store`) acting as one service. A streamed run lives on the instance that
//! started it; what other instances need of it goes through the database:
//!
//! - its events are copied to `loki_run_events` (numbered as its stream numbers them),
//!   so a client that reconnects to any instance with `Last-Event-ID` gets the rest;
//! - a tool call or question it waits on is a row of `loki_run_waits` (written with the
//!   event that announces it, so nobody sees one without the other); an answer sent to
//!   another instance fills the row in and `NOTIFY`s the run's instance;
//! - a cancel sets `loki_runs.cancel` and `NOTIFY`s the same way;
//! - each instance says it is alive in `loki_instances` every tick; the runs of one
//!   silent for `instance_timeout_seconds` are marked failed, with their partial answer,
//!   and their streams ended with an `error` then `done`.
//!
//! Responses API exchanges are kept in `loki_responses` for `previous_response_id` sent
//! to any instance.
//!
//! One channel (`loki_runs`) carries every notification: `e:<run>` (new events) and
//! `s:<run>` (an answer or a cancel for the run's instance).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use tokio::sync::broadcast;
use tokio::sync::mpsc::UnboundedReceiver;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Row};

use super::run_log::{Entry, partial_answer};

const SCHEMA: &str = "
SELECT pg_advisory_xact_lock(7318349394477056);
CREATE TABLE IF NOT EXISTS loki_instances (
    id text PRIMARY KEY,
    seen_at bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS loki_runs (
    id text PRIMARY KEY,
    owner text NOT NULL,
    session text,
    instance text NOT NULL,
    status text NOT NULL,
    error text,
    partial text,
    cancel boolean NOT NULL DEFAULT false,
    watched_at bigint NOT NULL DEFAULT 0,
    started_at bigint NOT NULL,
    ended_at bigint
);
CREATE TABLE IF NOT EXISTS loki_run_events (
    run_id text NOT NULL,
    seq bigint NOT NULL,
    name text NOT NULL,
    data text NOT NULL,
    PRIMARY KEY (run_id, seq)
);
CREATE TABLE IF NOT EXISTS loki_responses (
    id text PRIMARY KEY,
    owner text NOT NULL,
    messages text NOT NULL,
    created_at bigint NOT NULL
);
CREATE TABLE IF NOT EXISTS loki_run_waits (
    run_id text NOT NULL,
    kind text NOT NULL,
    item text NOT NULL,
    owner text NOT NULL,
    session text,
    answer text,
    PRIMARY KEY (run_id, kind, item)
);
";

/// The channel every instance listens on.
const CHANNEL: &str = "loki_runs";

/// How long ended runs and their events stay in the database.
const KEEP_ENDED: Duration = Duration::from_secs(3600);

/// The coordination database could not be used.
#[derive(Debug, Clone, thiserror::Error)]
#[error("coordination database: {0}")]
pub struct ClusterError(String);

fn db(e: &tokio_postgres::Error) -> ClusterError {
    let message = e
        .as_db_error()
        .map_or_else(|| e.to_string(), |d| d.message().to_string());
    ClusterError(loki_wire::secrets::redact(&message).into_owned())
}

fn from_store(e: &crate::session::store::SessionError) -> ClusterError {
    ClusterError(e.to_string())
}

/// Milliseconds since the epoch.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Something another instance said about a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Notice {
    /// The run has new events.
    Events(String),
    /// An answer or a cancel waits for the run's instance.
    Signal(String),
}

impl Notice {
    fn parse(payload: &str) -> Option<Self> {
        match payload.split_once(':')? {
            ("e", run) => Some(Self::Events(run.to_string())),
            ("s", run) => Some(Self::Signal(run.to_string())),
            _ => None,
        }
    }
}

/// A run as the database knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunRow {
    /// The request id that started it.
    pub id: String,
    /// The subject that started it.
    pub owner: String,
    /// The session it runs in (its id).
    pub session: Option<String>,
    /// `running`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// Why it failed.
    pub error: Option<String>,
    /// What the model had answered when it failed.
    pub partial: Option<String>,
}

/// What is waiting for a run's instance to act on.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Signals {
    /// Answers: kind (`approval`, `question`), call or question id, the answer's JSON.
    pub answers: Vec<(String, String, String)>,
    /// Someone asked for the run to stop.
    pub cancel: bool,
}

/// An answer sent to this instance for a run elsewhere.
#[derive(Debug, PartialEq, Eq)]
pub enum Delivered {
    /// The run's instance was told.
    Sent,
    /// No run of the caller's waits on it.
    NotWaiting,
    /// Several of the caller's runs wait on that id: these.
    Ambiguous(Vec<String>),
}

/// Which run an answer is for.
#[derive(Debug, Clone, Copy)]
pub enum Target<'a> {
    /// Any of the caller's.
    Any,
    /// The run of this id.
    Run(&'a str),
    /// A run in this session (its id).
    Session(&'a str),
}

/// This instance's link to the others.
pub struct Cluster {
    /// This process's id in `loki_instances`.
    instance: String,
    url: String,
    client: tokio::sync::Mutex<Option<Arc<Client>>>,
    /// The connection that `LISTEN`s (replaced when it drops).
    listener: tokio::sync::Mutex<Option<Client>>,
    notices: broadcast::Sender<Notice>,
    /// An instance silent this long is taken for dead.
    dead_after: Duration,
    /// The listening connection is up, since this instant (sweeps wait for a whole
    /// `dead_after` after a reconnection, so instances that could not say they were
    /// alive while the database was away are not taken for dead).
    listening_since: std::sync::Mutex<Option<Instant>>,
}

impl Cluster {
    /// Joins the service on the database at `url`: makes the tables, says this
    /// instance is alive and keeps saying so, listens for the others, and ends the runs
    /// of instances that died.
    pub async fn join(url: &str, dead_after: Duration) -> Result<Arc<Self>, ClusterError> {
        let client = crate::session::pg_store::connect(url)
            .await
            .map_err(|e| from_store(&e))?;
        client
            .batch_execute(&format!("BEGIN; {SCHEMA} COMMIT;"))
            .await
            .map_err(|e| db(&e))?;
        let (notices, _) = broadcast::channel(1024);
        let cluster = Arc::new(Self {
            instance: format!("i-{}", uuid::Uuid::new_v4().simple()),
            url: url.to_string(),
            client: tokio::sync::Mutex::new(Some(Arc::new(client))),
            listener: tokio::sync::Mutex::new(None),
            notices,
            dead_after,
            listening_since: std::sync::Mutex::new(None),
        });
        cluster.beat().await?;
        tokio::spawn(keep_up(Arc::downgrade(&cluster)));
        Ok(cluster)
    }

    /// This instance's id.
    pub fn instance(&self) -> &str {
        &self.instance
    }

    /// Notices from the other instances.
    pub fn notices(&self) -> broadcast::Receiver<Notice> {
        self.notices.subscribe()
    }

    async fn client(&self) -> Result<Arc<Client>, ClusterError> {
        let mut link = self.client.lock().await;
        if let Some(client) = link.as_ref().filter(|c| !c.is_closed()) {
            return Ok(Arc::clone(client));
        }
        *link = None;
        let client = Arc::new(
            crate::session::pg_store::connect(&self.url)
                .await
                .map_err(|e| from_store(&e))?,
        );
        *link = Some(Arc::clone(&client));
        Ok(client)
    }

    /// Runs one statement on the shared connection; how many rows it changed.
    async fn execute(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<u64, ClusterError> {
        let client = self.client().await?;
        client.execute(sql, params).await.map_err(|e| db(&e))
    }

    /// The row a query finds on the shared connection, if it finds one.
    async fn query_opt(
        &self,
        sql: &str,
        params: &[&(dyn ToSql + Sync)],
    ) -> Result<Option<Row>, ClusterError> {
        let client = self.client().await?;
        client.query_opt(sql, params).await.map_err(|e| db(&e))
    }

    async fn notify(&self, client: &Client, notice: &str) -> Result<(), ClusterError> {
        client
            .execute("SELECT pg_notify($1, $2)", &[&CHANNEL, &notice])
            .await
            .map_err(|e| db(&e))?;
        Ok(())
    }

    /// Says this instance is alive.
    async fn beat(&self) -> Result<(), ClusterError> {
        self.execute(
            "INSERT INTO loki_instances (id, seen_at) VALUES ($1, $2)
             ON CONFLICT (id) DO UPDATE SET seen_at = EXCLUDED.seen_at",
            &[&self.instance, &now_ms()],
        )
        .await?;
        Ok(())
    }

    /// Records a run this instance starts.
    pub async fn begin(
        &self,
        id: &str,
        owner: &str,
        session: Option<&str>,
    ) -> Result<(), ClusterError> {
        self.execute(
            "INSERT INTO loki_runs (id, owner, session, instance, status, started_at)
             VALUES ($1, $2, $3, $4, 'running', $5)",
            &[&id, &owner, &session, &self.instance, &now_ms()],
        )
        .await?;
        Ok(())
    }

    /// Copies a run's events to the database as they come on `entries` (several at a
    /// time when they come faster than they are written), with the waits their
    /// announcements open and close; ends after `done`.
    pub fn mirror(
        self: &Arc<Self>,
        run: &str,
        owner: &str,
        session: Option<&str>,
        entries: UnboundedReceiver<Entry>,
        copied: impl Fn(u64) + Send + 'static,
    ) -> tokio::task::JoinHandle<()> {
        let cluster = Arc::clone(self);
        let (run, owner, session) = (
            run.to_string(),
            owner.to_string(),
            session.map(str::to_string),
        );
        tokio::spawn(async move {
            let mut entries = entries;
            let mut batch = Vec::new();
            while let Some(first) = entries.recv().await {
                batch.push(first);
                while batch.len() < 256 {
                    match entries.try_recv() {
                        Ok(entry) => batch.push(entry),
                        Err(_) => break,
                    }
                }
                let ended = batch.iter().any(Entry::ends);
                let written = tokio::time::timeout(
                    Duration::from_secs(5),
                    cluster.write(&run, &owner, session.as_deref(), &batch),
                )
                .await;
                match written {
                    Ok(Ok(())) => {}
                    Ok(Err(e)) => {
                        tracing::warn!(run = %run, "events not copied for other instances: {e}");
                    }
                    Err(_) => {
                        tracing::warn!(run = %run, "events not copied for other instances: the database took over 5 s")
                    }
                }
                // Held-back events are shown even when the copy failed: the run's own
                // readers never wait on the database for long.
                copied(batch.last().map_or(0, |e| e.seq));
                batch.clear();
                if ended {
                    return;
                }
            }
        })
    }

    async fn write(
        &self,
        run: &str,
        owner: &str,
        session: Option<&str>,
        batch: &[Entry],
    ) -> Result<(), ClusterError> {
        let client = self.client().await?;
        let seqs: Vec<i64> = batch
            .iter()
            .map(|e| i64::try_from(e.seq).unwrap_or(i64::MAX))
            .collect();
        let names: Vec<&str> = batch.iter().map(|e| e.name.as_str()).collect();
        let data: Vec<&str> = batch.iter().map(|e| e.data.as_str()).collect();
        client
            .execute(
                "INSERT INTO loki_run_events (run_id, seq, name, data)
                 SELECT $1, * FROM unnest($2::bigint[], $3::text[], $4::text[])
                 ON CONFLICT DO NOTHING",
                &[&run, &seqs, &names, &data],
            )
            .await
            .map_err(|e| db(&e))?;
        for entry in batch {
            if let Some((kind, item, opens)) = wait_of(entry) {
                if opens {
                    client
                        .execute(
                            "INSERT INTO loki_run_waits (run_id, kind, item, owner, session)
                             VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
                            &[&run, &kind, &item, &owner, &session],
                        )
                        .await
                        .map_err(|e| db(&e))?;
                } else {
                    client
                        .execute(
                            "DELETE FROM loki_run_waits WHERE run_id = $1 AND kind = $2 AND item = $3",
                            &[&run, &kind, &item],
                        )
                        .await
                        .map_err(|e| db(&e))?;
                }
            }
        }
        self.notify(&client, &format!("e:{run}")).await
    }

    /// Records how a run of this instance ended (unless it was already taken for dead).
    pub async fn finish(
        &self,
        id: &str,
        status: &str,
        error: Option<&str>,
        partial: &str,
    ) -> Result<(), ClusterError> {
        self.execute(
            "UPDATE loki_runs SET status = $2, error = $3, partial = $4, ended_at = $5
             WHERE id = $1 AND status = 'running'",
            &[&id, &status, &error, &partial, &now_ms()],
        )
        .await?;
        self.execute("DELETE FROM loki_run_waits WHERE run_id = $1", &[&id])
            .await?;
        Ok(())
    }

    /// Keeps a Responses API exchange (the chat messages up to its answer, as JSON) for
    /// a `previous_response_id` sent to any instance, for as long as ended runs are kept.
    pub async fn keep_response(
        &self,
        id: &str,
        owner: &str,
        messages: &str,
    ) -> Result<(), ClusterError> {
        self.execute(
            "INSERT INTO loki_responses (id, owner, messages, created_at)
             VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            &[&id, &owner, &messages, &now_ms()],
        )
        .await?;
        Ok(())
    }

    /// The messages of response `id` as kept by [`Self::keep_response`], if `owner`
    /// made it.
    pub async fn response(&self, id: &str, owner: &str) -> Result<Option<String>, ClusterError> {
        let row = self
            .query_opt(
                "SELECT messages FROM loki_responses WHERE id = $1 AND owner = $2",
                &[&id, &owner],
            )
            .await?;
        Ok(row.map(|row| row.get(0)))
    }

    /// The run `id`, when the database knows it.
    pub async fn run(&self, id: &str) -> Result<Option<RunRow>, ClusterError> {
        let row = self
            .query_opt(
                "SELECT id, owner, session, status, error, partial FROM loki_runs WHERE id = $1",
                &[&id],
            )
            .await?;
        Ok(row.map(|row| RunRow {
            id: row.get(0),
            owner: row.get(1),
            session: row.get(2),
            status: row.get(3),
            error: row.get(4),
            partial: row.get(5),
        }))
    }

    /// Up to `limit` events of run `id` after number `seq`.
    pub async fn events_after(
        &self,
        id: &str,
        seq: u64,
        limit: i64,
    ) -> Result<Vec<Entry>, ClusterError> {
        let client = self.client().await?;
        let after = i64::try_from(seq).unwrap_or(i64::MAX);
        let rows = client
            .query(
                "SELECT seq, name, data FROM loki_run_events
                 WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                &[&id, &after, &limit],
            )
            .await
            .map_err(|e| db(&e))?;
        Ok(rows
            .iter()
            .map(|row| Entry {
                seq: u64::try_from(row.get::<_, i64>(0)).unwrap_or(0),
                name: row.get(1),
                data: row.get(2),
            })
            .collect())
    }

    /// Says a reader on this instance follows run `id`.
    pub async fn watching(&self, id: &str) -> Result<(), ClusterError> {
        self.execute(
            "UPDATE loki_runs SET watched_at = $2 WHERE id = $1",
            &[&id, &now_ms()],
        )
        .await?;
        Ok(())
    }

    /// Whether a reader on another instance followed run `id` within `within`.
    pub async fn watched(&self, id: &str, within: Duration) -> bool {
        let since = now_ms() - i64::try_from(within.as_millis()).unwrap_or(i64::MAX);
        matches!(
            self.query_opt(
                "SELECT 1 FROM loki_runs WHERE id = $1 AND watched_at >= $2",
                &[&id, &since],
            )
            .await,
            Ok(Some(_))
        )
    }

    /// Gives the answer `answer` (JSON) to the `kind` wait `item` of one of `owner`'s
    /// runs `at`, for its instance to act on.
    pub async fn answer(
        &self,
        owner: &str,
        kind: &str,
        item: &str,
        at: Target<'_>,
        answer: &str,
    ) -> Result<Delivered, ClusterError> {
        let client = self.client().await?;
        let (run, session) = match at {
            Target::Any => (None, None),
            Target::Run(run) => (Some(run), None),
            Target::Session(session) => (None, Some(session)),
        };
        let rows = client
            .query(
                "SELECT run_id FROM loki_run_waits
                 WHERE kind = $1 AND item = $2 AND owner = $3 AND answer IS NULL
                   AND ($4::text IS NULL OR run_id = $4)
                   AND ($5::text IS NULL OR session = $5)",
                &[&kind, &item, &owner, &run, &session],
            )
            .await
            .map_err(|e| db(&e))?;
        let mut runs: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
        match runs.len() {
            0 => return Ok(Delivered::NotWaiting),
            1 => {}
            _ => {
                runs.sort();
                return Ok(Delivered::Ambiguous(runs));
            }
        }
        let run = &runs[0];
        let changed = client
            .execute(
                "UPDATE loki_run_waits SET answer = $4
                 WHERE run_id = $1 AND kind = $2 AND item = $3 AND answer IS NULL",
                &[run, &kind, &item, &answer],
            )
            .await
            .map_err(|e| db(&e))?;
        if changed == 0 {
            return Ok(Delivered::NotWaiting);
        }
        self.notify(&client, &format!("s:{run}")).await?;
        Ok(Delivered::Sent)
    }

    /// Asks the instance running `id` to stop it: false when it is not running.
    pub async fn cancel(&self, id: &str) -> Result<bool, ClusterError> {
        let client = self.client().await?;
        let changed = client
            .execute(
                "UPDATE loki_runs SET cancel = true WHERE id = $1 AND status = 'running'",
                &[&id],
            )
            .await
            .map_err(|e| db(&e))?;
        if changed > 0 {
            self.notify(&client, &format!("s:{id}")).await?;
        }
        Ok(changed > 0)
    }

    /// Takes what waits for this instance about run `id`.
    pub async fn signals(&self, id: &str) -> Result<Signals, ClusterError> {
        let client = self.client().await?;
        let answers = client
            .query(
                "DELETE FROM loki_run_waits WHERE run_id = $1 AND answer IS NOT NULL
                 RETURNING kind, item, answer",
                &[&id],
            )
            .await
            .map_err(|e| db(&e))?
            .iter()
            .map(|row| (row.get(0), row.get(1), row.get(2)))
            .collect();
        let cancel = client
            .query_opt("SELECT 1 FROM loki_runs WHERE id = $1 AND cancel", &[&id])
            .await
            .map_err(|e| db(&e))?
            .is_some();
        Ok(Signals { answers, cancel })
    }

    /// Of `runs` (this instance's), those with something waiting for it.
    pub async fn signalled(&self, runs: &[String]) -> Result<Vec<String>, ClusterError> {
        if runs.is_empty() {
            return Ok(Vec::new());
        }
        let client = self.client().await?;
        let rows = client
            .query(
                "SELECT id FROM loki_runs WHERE id = ANY($1) AND cancel
                 UNION SELECT run_id FROM loki_run_waits WHERE run_id = ANY($1) AND answer IS NOT NULL",
                &[&runs],
            )
            .await
            .map_err(|e| db(&e))?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// Ends the runs of instances silent for `dead_after`: failed, with the answer they
    /// had streamed, their streams closed with an `error` and `done`. Also forgets ended
    /// runs older than [`KEEP_ENDED`]. Returns the runs it ended.
    async fn sweep(&self) -> Result<Vec<String>, ClusterError> {
        let client = self.client().await?;
        let now = now_ms();
        let dead_before = now - i64::try_from(self.dead_after.as_millis()).unwrap_or(i64::MAX);
        let error = "the server instance running it stopped before it finished; \
                     what it had answered is kept as partial";
        let ended = client
            .query(
                "UPDATE loki_runs SET status = 'failed', error = $3, ended_at = $2
                 WHERE status = 'running' AND instance <> $4 AND instance NOT IN (
                     SELECT id FROM loki_instances WHERE seen_at >= $1)
                 RETURNING id",
                &[&dead_before, &now, &error, &self.instance],
            )
            .await
            .map_err(|e| db(&e))?;
        let mut swept = Vec::new();
        for row in ended {
            let run: String = row.get(0);
            let events = self.events_after(&run, 0, i64::MAX).await?;
            let partial = partial_answer(events.iter());
            let next = events.last().map_or(1, |e| e.seq + 1);
            client
                .execute(
                    "UPDATE loki_runs SET partial = $2 WHERE id = $1",
                    &[&run, &partial],
                )
                .await
                .map_err(|e| db(&e))?;
            let data = serde_json::json!({"error": {"code": "instance_lost", "message": error}})
                .to_string();
            let closing = [
                Entry {
                    seq: next,
                    name: "error".into(),
                    data,
                },
                Entry {
                    seq: next + 1,
                    name: "done".into(),
                    data: "{}".into(),
                },
            ];
            self.write(&run, "", None, &closing).await?;
            client
                .execute("DELETE FROM loki_run_waits WHERE run_id = $1", &[&run])
                .await
                .map_err(|e| db(&e))?;
            tracing::warn!(run = %run, "run ended: its instance stopped answering");
            swept.push(run);
        }
        let forget_before = now - i64::try_from(KEEP_ENDED.as_millis()).unwrap_or(i64::MAX);
        client
            .batch_execute(&format!(
                "DELETE FROM loki_run_events WHERE run_id IN (
                     SELECT id FROM loki_runs WHERE ended_at < {forget_before});
                 DELETE FROM loki_runs WHERE ended_at < {forget_before};
                 DELETE FROM loki_instances WHERE seen_at < {forget_before};
                 DELETE FROM loki_responses WHERE created_at < {forget_before};"
            ))
            .await
            .map_err(|e| db(&e))?;
        Ok(swept)
    }

    /// The listening connection made (again).
    async fn listen(&self) -> Result<UnboundedReceiver<String>, ClusterError> {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let client = crate::session::pg_store::connect_listening(&self.url, tx)
            .await
            .map_err(|e| from_store(&e))?;
        client
            .batch_execute(&format!("LISTEN {CHANNEL}"))
            .await
            .map_err(|e| db(&e))?;
        // The connection lives as long as its client.
        *self.listener.lock().await = Some(client);
        Ok(rx)
    }
}

/// The wait an event opens or closes: `(kind, item, opens)`.
fn wait_of(entry: &Entry) -> Option<(&'static str, String, bool)> {
    let (kind, field, opens) = match entry.name.as_str() {
        "tool_call_approval_requested" => ("approval", "call_id", true),
        "tool_call_approval_decided" => ("approval", "call_id", false),
        "question_asked" => ("question", "question_id", true),
        "question_answered" => ("question", "question_id", false),
        _ => return None,
    };
    let value: serde_json::Value = serde_json::from_str(&entry.data).ok()?;
    Some((kind, value[field].as_str()?.to_string(), opens))
}

/// How often an instance says it is alive and looks for dead ones.
fn tick(dead_after: Duration) -> Duration {
    (dead_after / 4).clamp(Duration::from_millis(200), Duration::from_secs(2))
}

/// Keeps this instance known as alive, listens for notices (listening again when the
/// connection drops) and sweeps dead instances' runs; ends with the cluster.
async fn keep_up(cluster: std::sync::Weak<Cluster>) {
    let mut listening: Option<UnboundedReceiver<String>> = None;
    loop {
        let Some(this) = cluster.upgrade() else {
            return;
        };
        let every = tick(this.dead_after);
        if listening.is_none() {
            match this.listen().await {
                Ok(rx) => {
                    listening = Some(rx);
                    if let Ok(mut since) = this.listening_since.lock() {
                        *since = Some(Instant::now());
                    }
                }
                Err(e) => tracing::warn!("cannot listen for other instances: {e}"),
            }
        }
        let alive = this.beat().await.is_ok();
        let settled = this
            .listening_since
            .lock()
            .ok()
            .and_then(|s| *s)
            .is_some_and(|since| since.elapsed() >= this.dead_after);
        if alive && settled {
            match this.sweep().await {
                Ok(swept) => {
                    for run in swept {
                        let _ = this.notices.send(Notice::Events(run));
                    }
                }
                Err(e) => tracing::warn!("cannot look for stopped instances: {e}"),
            }
        }
        let notices = this.notices.clone();
        drop(this);
        let deadline = tokio::time::sleep(every);
        tokio::pin!(deadline);
        loop {
            let Some(rx) = listening.as_mut() else {
                deadline.as_mut().await;
                break;
            };
            tokio::select! {
                () = &mut deadline => break,
                payload = rx.recv() => match payload {
                    Some(payload) => {
                        if let Some(notice) = Notice::parse(&payload) {
                            let _ = notices.send(notice);
                        }
                    }
                    None => {
                        listening = None;
                        if let Some(this) = cluster.upgrade()
                            && let Ok(mut since) = this.listening_since.lock()
                        {
                            *since = None;
                        }
                    }
                },
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_and_waits_are_read_from_their_text() {
        assert_eq!(
            Notice::parse("e:req_1"),
            Some(Notice::Events("req_1".into()))
        );
        assert_eq!(
            Notice::parse("s:req_1"),
            Some(Notice::Signal("req_1".into()))
        );
        assert_eq!(Notice::parse("x"), None);
        let asked = Entry {
            seq: 3,
            name: "tool_call_approval_requested".into(),
            data: r#"{"call_id":"call_0","name":"fs_write"}"#.into(),
        };
        assert_eq!(wait_of(&asked), Some(("approval", "call_0".into(), true)));
        let answered = Entry {
            seq: 4,
            name: "question_answered".into(),
            data: r#"{"question_id":"esc_1"}"#.into(),
        };
        assert_eq!(
            wait_of(&answered),
            Some(("question", "esc_1".into(), false))
        );
        assert_eq!(tick(Duration::from_secs(10)), Duration::from_secs(2));
        assert_eq!(tick(Duration::from_secs(1)), Duration::from_millis(250));
    }
}
