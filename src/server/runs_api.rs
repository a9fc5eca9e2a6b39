//! The run routes: a streamed run's status (`GET /v1/runs/{run_id}`), its events again
//! (`GET /v1/runs/{run_id}/events`, from after `Last-Event-ID`), stopping it
//! (`POST /v1/runs/{run_id}/cancel`) and answering its questions
//! (`POST /v1/runs/{run_id}/questions/{question_id}`). Each works on any instance: a run
//! this one does not hold is looked up in the cluster's database.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Extension;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde::Deserialize;
use serde_json::{Value, json};

use super::cluster::{Cluster, Delivered, Notice, RunRow, Target};
use super::reply::{ApiError, json_body, sse};
use super::run_log::{Gone, forward, last_seen};
use super::streamed::Tracked;
use super::{RequestInfo, Server};
use crate::tool::escalate::{AnswerError, answer_from_text};
use loki_protocol::event::Question;

/// Where a run is: here, or (as the database has it) on another instance.
enum Found {
    Here(Arc<Tracked>),
    Elsewhere(Arc<Cluster>, RunRow),
}

/// Run `id` of the caller's (an admin key reaches everyone's); another subject's run is
/// as good as missing.
async fn find(server: &Server, info: &RequestInfo, id: &str) -> Result<Found, ApiError> {
    let mine = |owner: &str| owner == info.caller.subject || info.caller.sees_all_sessions();
    if let Some(tracked) = server.tracked(id) {
        if mine(&tracked.owner) {
            return Ok(Found::Here(tracked));
        }
    } else if let Some(cluster) = &server.cluster {
        let row = cluster
            .run(id)
            .await
            .map_err(|e| ApiError::unavailable(e.to_string()))?;
        if let Some(row) = row.filter(|r| mine(&r.owner)) {
            return Ok(Found::Elsewhere(Arc::clone(cluster), row));
        }
    }
    Err(ApiError::new(
        StatusCode::NOT_FOUND,
        "run_not_found",
        format!(
            "no run `{id}` of yours is known here (streamed runs are kept a while after they end)"
        ),
    ))
}

/// `GET /v1/runs/{run_id}`: `running`, `completed`, `failed` or `cancelled`, with the
/// error and what the model had answered when it did not complete.
pub(super) async fn status(
    State(server): State<Arc<Server>>,
    Extension(info): Extension<RequestInfo>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let body = match find(&server, &info, &id).await? {
        Found::Here(tracked) => {
            let ended = tracked.ended();
            json!({
                "id": tracked.id,
                "status": ended.as_ref().map_or("running", |e| e.status),
                "session": tracked.session,
                "error": ended.and_then(|e| e.error),
                "partial": tracked.log.partial(),
            })
        }
        Found::Elsewhere(_, row) => json!({
            "id": row.id,
            "status": row.status,
            "session": row.session,
            "error": row.error,
            "partial": row.partial,
        }),
    };
    Ok(json_body(StatusCode::OK, &body))
}

/// `GET /v1/runs/{run_id}/events`: the run's events after `Last-Event-ID` (or
/// `?after=N`), then each as it comes, until `done`.
pub(super) async fn events(
    State(server): State<Arc<Server>>,
    Extension(info): Extension<RequestInfo>,
    Path(id): Path<String>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Result<Response, ApiError> {
    let after = last_seen(&headers, query.as_deref());
    match find(&server, &info, &id).await? {
        Found::Here(tracked) => tracked.log.stream(after).map_err(|Gone| {
            ApiError::new(
                StatusCode::GONE,
                "events_gone",
                format!("the events after {after} of run `{id}` are no longer kept"),
            )
        }),
        Found::Elsewhere(cluster, _) => Ok(follow(cluster, id, after)),
    }
}

/// The events of a run on another instance, read from the database: what is there
/// after `after`, then more as that instance says it wrote them (or every second).
fn follow(cluster: Arc<Cluster>, run: String, after: u64) -> Response {
    const PAGE: i64 = 512;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut notices = cluster.notices();
        let mut cursor = after;
        let mut said: Option<Instant> = None;
        loop {
            if said.is_none_or(|at| at.elapsed() >= Duration::from_secs(1)) {
                // The run's instance keeps it going while someone follows it here.
                let _ = cluster.watching(&run).await;
                said = Some(Instant::now());
            }
            match cluster.events_after(&run, cursor, PAGE).await {
                Ok(batch) => {
                    let full = i64::try_from(batch.len()).unwrap_or(0) >= PAGE;
                    if !forward(batch, &tx, &mut cursor) {
                        return;
                    }
                    if full {
                        continue;
                    }
                }
                Err(e) => tracing::warn!(run = %run, "cannot read the run's events: {e}"),
            }
            let news = async {
                loop {
                    match notices.recv().await {
                        Ok(Notice::Events(r)) if r == run => return,
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => return,
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => {
                            std::future::pending::<()>().await;
                        }
                        Ok(_) => {}
                    }
                }
            };
            tokio::select! {
                () = news => {}
                () = tokio::time::sleep(Duration::from_secs(1)) => {}
                () = tx.closed() => return,
            }
        }
    });
    sse(rx)
}

/// `POST /v1/runs/{run_id}/cancel`: stops the run (its session keeps what arrived).
pub(super) async fn cancel(
    State(server): State<Arc<Server>>,
    Extension(info): Extension<RequestInfo>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let running = match find(&server, &info, &id).await? {
        Found::Here(tracked) => {
            let running = tracked.ended().is_none();
            tracked.cancel.cancel();
            running
        }
        Found::Elsewhere(cluster, _) => cluster
            .cancel(&id)
            .await
            .map_err(|e| ApiError::unavailable(e.to_string()))?,
    };
    if !running {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            "run_ended",
            format!("run `{id}` has already ended"),
        ));
    }
    Ok(json_body(
        StatusCode::ACCEPTED,
        &json!({"id": id, "status": "cancelling"}),
    ))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct Reply {
    answer: Value,
}

/// `POST /v1/runs/{run_id}/questions/{question_id}` with `{"answer": …}`: text, true or
/// false for a yes/no question, an option, or a list of options.
pub(super) async fn answer(
    State(server): State<Arc<Server>>,
    Extension(info): Extension<RequestInfo>,
    Path((id, question)): Path<(String, String)>,
    bytes: Result<Bytes, BytesRejection>,
) -> Result<Response, ApiError> {
    let reply: Reply = super::api::body(bytes)?;
    let text = match &reply.answer {
        Value::String(text) => text.clone(),
        Value::Bool(yes) => if *yes { "yes" } else { "no" }.to_string(),
        Value::Array(items) if items.iter().all(Value::is_string) => items
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(","),
        _ => {
            return Err(ApiError::bad_request(
                "`answer` is text, true/false or a list of options",
            ));
        }
    };
    match find(&server, &info, &id).await? {
        Found::Here(tracked) => server
            .answer_question(&tracked, &question, &text)
            .map_err(|e| refused(&e))?,
        Found::Elsewhere(cluster, _) => {
            // Checked here against the question as it was asked, so a bad answer is
            // this request's error and not lost on the way.
            let asked = asked(&cluster, &id, &question).await?;
            answer_from_text(&asked, &text).map_err(|e| refused(&e))?;
            let answer = serde_json::to_string(&text).unwrap_or_default();
            match cluster
                .answer(
                    &info.caller.subject,
                    "question",
                    &question,
                    Target::Run(&id),
                    &answer,
                )
                .await
                .map_err(|e| ApiError::unavailable(e.to_string()))?
            {
                Delivered::Sent => {}
                Delivered::NotWaiting | Delivered::Ambiguous(_) => {
                    return Err(refused(&AnswerError::NotWaiting(question)));
                }
            }
        }
    }
    Ok(json_body(
        StatusCode::OK,
        &json!({"status": "ok", "question_id": question}),
    ))
}

fn refused(e: &AnswerError) -> ApiError {
    match e {
        AnswerError::NotWaiting(_) | AnswerError::Gone(_) => {
            ApiError::new(StatusCode::NOT_FOUND, "question_not_found", e.to_string())
        }
        AnswerError::NotYesNo(_) | AnswerError::NotAnOption { .. } => {
            ApiError::bad_request(e.to_string())
        }
    }
}

/// Question `question` of run `id` as its `question_asked` event put it.
async fn asked(cluster: &Cluster, id: &str, question: &str) -> Result<Question, ApiError> {
    let events = cluster
        .events_after(id, 0, i64::MAX)
        .await
        .map_err(|e| ApiError::unavailable(e.to_string()))?;
    let event = events
        .iter()
        .filter(|e| e.name == "question_asked")
        .filter_map(|e| serde_json::from_str::<Value>(&e.data).ok())
        .find(|v| v["question_id"] == question)
        .ok_or_else(|| refused(&AnswerError::NotWaiting(question.to_string())))?;
    let prompt = event["prompt"].as_str().unwrap_or_default().to_string();
    let options: Vec<String> = event["options"]
        .as_array()
        .map(|o| {
            o.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Ok(match event["kind"].as_str() {
        Some("confirm") => Question::Confirm { prompt },
        Some("select") => Question::Select { prompt, options },
        Some("multi_select") => Question::MultiSelect { prompt, options },
        _ => Question::Text { prompt },
    })
}
