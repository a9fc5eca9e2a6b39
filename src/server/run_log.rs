//! [`RunLog`]: a streamed run's events, numbered from 1, kept while the run lasts (and a
//! little after) so a client that lost its connection picks the stream up again with
//! `Last-Event-ID`. The client that started the run reads the same log as any that
//! comes back later, so every reader sees the same numbered events. With PostgreSQL
//! behind the server the log is also mirrored to the database (see `cluster`), where
//! another instance reads it.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::response::Response;
use tokio::sync::mpsc::UnboundedSender;

/// The most a run's log keeps in memory; the oldest events go first (a reader asking
/// for them is told they are gone).
const MAX_BYTES: usize = 8 * 1024 * 1024;

/// One event of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its number in the run (1 is `started`).
    pub seq: u64,
    /// The SSE event name (`assistant_delta`, `done`, …).
    pub name: String,
    /// Its JSON data, secrets redacted.
    pub data: String,
}

impl Entry {
    /// The event as server-sent-events text, with its number as the id.
    pub fn sse(&self) -> String {
        format!(
            "id: {}\nevent: {}\ndata: {}\n\n",
            self.seq, self.name, self.data
        )
    }

    /// Whether it ends the stream.
    pub fn ends(&self) -> bool {
        self.name == "done"
    }
}

/// The events asked for are no longer kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gone;

#[derive(Debug, Default)]
struct Kept {
    entries: VecDeque<Entry>,
    bytes: usize,
    next: u64,
    /// The last number dropped to stay under [`MAX_BYTES`].
    dropped_through: u64,
}

/// The events of one run.
#[derive(Debug)]
pub struct RunLog {
    kept: Mutex<Kept>,
    /// The number of the last event, for readers waiting on the next.
    last: tokio::sync::watch::Sender<u64>,
    /// Readers attached now.
    watchers: AtomicUsize,
    /// Where each event is copied (the database's writer), when the server has one.
    mirror: Option<UnboundedSender<Entry>>,
    /// The first event readers must not see before it is copied: one that opens a wait
    /// (an approval or a question), so an answer sent to another instance finds it.
    held_from: Mutex<Option<u64>>,
}

impl RunLog {
    /// An empty log; each event also goes to `mirror` when given.
    pub fn new(mirror: Option<UnboundedSender<Entry>>) -> Arc<Self> {
        Arc::new(Self {
            kept: Mutex::new(Kept {
                next: 1,
                ..Kept::default()
            }),
            last: tokio::sync::watch::Sender::new(0),
            watchers: AtomicUsize::new(0),
            mirror,
            held_from: Mutex::new(None),
        })
    }

    /// The copy reached event `seq`: what was held back until then is shown.
    pub fn copied_through(&self, seq: u64) {
        let mut held = self
            .held_from
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if held.is_some_and(|from| from <= seq) {
            *held = None;
            drop(held);
            let last = *self.last.borrow();
            self.last.send_replace(last);
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Adds the event `name` with `data` (redacted here) and returns its number.
    pub fn push(&self, name: &str, data: &str) -> u64 {
        let entry = Entry {
            seq: 0,
            name: name.to_string(),
            data: loki_wire::secrets::redact(data).into_owned(),
        };
        let entry = {
            let mut kept = self.kept();
            let entry = Entry {
                seq: kept.next,
                ..entry
            };
            kept.next += 1;
            kept.bytes += entry.data.len() + entry.name.len();
            kept.entries.push_back(entry.clone());
            while kept.bytes > MAX_BYTES && kept.entries.len() > 1 {
                if let Some(old) = kept.entries.pop_front() {
                    kept.bytes -= old.data.len() + old.name.len();
                    kept.dropped_through = old.seq;
                }
            }
            entry
        };
        let seq = entry.seq;
        if let Some(mirror) = &self.mirror {
            if opens_wait(&entry.name) {
                let mut held = self
                    .held_from
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                held.get_or_insert(seq);
            }
            let _ = mirror.send(entry);
        }
        self.last.send_replace(seq);
        seq
    }

    /// The events after number `seq` (up to one held back until it is copied).
    pub fn after(&self, seq: u64) -> Result<Vec<Entry>, Gone> {
        let held = *self
            .held_from
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let kept = self.kept();
        if seq < kept.dropped_through {
            return Err(Gone);
        }
        Ok(kept
            .entries
            .iter()
            .filter(|e| e.seq > seq && held.is_none_or(|from| e.seq < from))
            .cloned()
            .collect())
    }

    /// The text the run's model answered so far (its `assistant_delta` events at the top
    /// of the run), for a run that ended before its answer did.
    pub fn partial(&self) -> String {
        partial_answer(self.kept().entries.iter())
    }

    /// Readers attached now.
    pub fn watchers(&self) -> usize {
        self.watchers.load(Ordering::Relaxed)
    }

    /// The log as a server-sent-events response from after event `seq` until `done`.
    pub fn stream(self: &Arc<Self>, seq: u64) -> Result<Response, Gone> {
        let first = self.after(seq)?;
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
        let log = Arc::clone(self);
        log.watchers.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            let _attached = Attached(Arc::clone(&log));
            pump(&log, first, seq, &tx).await;
        });
        Ok(super::reply::sse(rx))
    }
}

/// Counts a reader while it is attached.
struct Attached(Arc<RunLog>);

impl Drop for Attached {
    fn drop(&mut self) {
        self.0.watchers.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Sends `batch` to a reader, `cursor` following; whether more may follow (not once the
/// run's last event is sent, nor once the reader has gone).
pub(super) fn forward(batch: Vec<Entry>, tx: &UnboundedSender<String>, cursor: &mut u64) -> bool {
    for entry in batch {
        if tx.send(entry.sse()).is_err() {
            return false;
        }
        *cursor = entry.seq;
        if entry.ends() {
            return false;
        }
    }
    true
}

/// Sends `first`, then each event as it comes, until `done` or the reader goes.
async fn pump(log: &RunLog, first: Vec<Entry>, mut cursor: u64, tx: &UnboundedSender<String>) {
    let mut changes = log.last.subscribe();
    let mut batch = first;
    loop {
        if !forward(batch, tx, &mut cursor) {
            return;
        }
        tokio::select! {
            changed = changes.changed() => if changed.is_err() { return },
            () = tx.closed() => return,
        }
        batch = match log.after(cursor) {
            Ok(batch) => batch,
            Err(Gone) => {
                let _ = tx.send(super::reply::sse_event(
                    Some("error"),
                    r#"{"error":{"code":"events_gone","message":"this reader fell too far behind; the events it missed are no longer kept"}}"#,
                ));
                return;
            }
        };
    }
}

/// Whether an event of this name opens something another instance may answer.
pub fn opens_wait(name: &str) -> bool {
    matches!(name, "tool_call_approval_requested" | "question_asked")
}

/// The text of the `assistant_delta` events of the run's own conversation (not its
/// sub-agents') among `entries`.
pub fn partial_answer<'a>(entries: impl Iterator<Item = &'a Entry>) -> String {
    entries
        .filter(|e| e.name == "assistant_delta")
        .filter_map(|e| serde_json::from_str::<serde_json::Value>(&e.data).ok())
        .filter(|v| v.get("parent").is_none_or(serde_json::Value::is_null))
        .filter_map(|v| v["text"].as_str().map(str::to_string))
        .collect()
}

/// The number a reader says it saw last: `Last-Event-ID`, else `?after=`, else 0.
pub fn last_seen(headers: &axum::http::HeaderMap, query: Option<&str>) -> u64 {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
        .or_else(|| {
            query?
                .split('&')
                .find_map(|pair| pair.strip_prefix("after="))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_numbered_and_read_after_a_number() {
        let log = RunLog::new(None);
        assert_eq!(log.push("started", "{}"), 1);
        assert_eq!(log.push("assistant_delta", r#"{"text":"he"}"#), 2);
        assert_eq!(
            log.push("assistant_delta", r#"{"text":"llo","parent":"c1"}"#),
            3
        );
        assert_eq!(log.push("assistant_delta", r#"{"text":"llo"}"#), 4);
        let after: Vec<u64> = log.after(2).unwrap().iter().map(|e| e.seq).collect();
        assert_eq!(after, [3, 4]);
        assert_eq!(log.partial(), "hello");
        log.push("done", "{}");
        assert!(log.after(4).unwrap()[0].ends());
        assert_eq!(
            log.after(1).unwrap()[0].sse(),
            "id: 2\nevent: assistant_delta\ndata: {\"text\":\"he\"}\n\n"
        );
    }

    #[test]
    fn an_event_opening_a_wait_is_shown_once_it_is_copied() {
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let log = RunLog::new(Some(tx));
        log.push("started", "{}");
        log.push("tool_call_approval_requested", r#"{"call_id":"c"}"#);
        log.push("assistant_delta", "{}");
        assert_eq!(log.after(0).unwrap().len(), 1);
        assert_eq!(rx.try_recv().unwrap().seq, 1);
        log.copied_through(2);
        assert_eq!(log.after(0).unwrap().len(), 3);
    }

    #[test]
    fn a_log_over_its_bound_drops_its_oldest_events() {
        let log = RunLog::new(None);
        let big = "x".repeat(MAX_BYTES / 2);
        for _ in 0..3 {
            log.push("assistant_delta", &big);
        }
        assert_eq!(log.after(0), Err(Gone));
        assert_eq!(log.after(2).unwrap().len(), 1);
    }

    #[test]
    fn the_last_seen_number_comes_from_the_header_or_the_query() {
        let mut headers = axum::http::HeaderMap::new();
        assert_eq!(last_seen(&headers, Some("after=7")), 7);
        headers.insert("last-event-id", "12".parse().unwrap());
        assert_eq!(last_seen(&headers, Some("after=7")), 12);
        assert_eq!(last_seen(&axum::http::HeaderMap::new(), None), 0);
    }
}
