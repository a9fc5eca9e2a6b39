//! What a server may ask of the client while one of loki's calls runs: a form or a page
//! for the user (elicitation), a completion from the conversation's model (sampling) and
//! the directories it may work in (roots).
//!
//! Servers are shared by every conversation of the process, so a question must reach the
//! conversation whose call caused it. Each call brings its own [`ClientSide`] and
//! registers a route for its request id while it runs; a request that arrives on that
//! call's response stream (streamable HTTP says which), or on a server with only that one
//! call in flight (stdio, SSE), is served by the call's side. Anything else is declined.
//! On the 2026-07-28 revision the same questions come back as an `input_required` result
//! of the call itself and are served in the call's own loop (see `McpServer::call`).

// Sampling and roots are deprecated by SEP-2577 but still what servers use.
#![allow(deprecated)]

use std::collections::HashMap;
use std::sync::Mutex;

use futures_util::future::BoxFuture;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult,
    ElicitationAction, Root,
};
use tokio::sync::{mpsc, oneshot};

/// Why a server's sampling request got no answer: the reason given to the server.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SamplingError {
    /// The call has no conversation behind it.
    #[error("sampling is not available here")]
    Unavailable,
    /// The conversation has no model to answer with.
    #[error("sampling is not available in this conversation")]
    NoSampler,
    /// The request arrived outside any call.
    #[error("no conversation can answer this request")]
    NoConversation,
    /// The user (or `deny_tools`) refused.
    #[error("User rejected sampling request")]
    Rejected,
    /// The conversation was cancelled.
    #[error("cancelled")]
    Cancelled,
    /// The model's answer failed.
    #[error(transparent)]
    Provider(#[from] crate::client::ProviderError),
}

/// Serves a server's questions for the calls of one conversation.
pub trait ClientSide: Send + Sync {
    /// Asks the user to fill in a form or visit a page for `server`.
    fn elicit<'a>(
        &'a self,
        server: &'a str,
        request: ElicitRequestParams,
    ) -> BoxFuture<'a, ElicitResult>;

    /// Has the conversation's model answer `request` for `server`, once the user agrees;
    /// `Err` with the reason given to the server.
    fn sample<'a>(
        &'a self,
        server: &'a str,
        request: CreateMessageRequestParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, SamplingError>>;

    /// The directories the server may work in (`file://` URIs).
    fn roots(&self) -> Vec<Root>;
}

/// Declines everything: no one can answer (a call without a conversation).
#[derive(Debug, Default, Clone, Copy)]
pub struct Declining;

impl ClientSide for Declining {
    fn elicit<'a>(&'a self, _: &'a str, _: ElicitRequestParams) -> BoxFuture<'a, ElicitResult> {
        Box::pin(async { ElicitResult::new(ElicitationAction::Decline) })
    }

    fn sample<'a>(
        &'a self,
        _: &'a str,
        _: CreateMessageRequestParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, SamplingError>> {
        Box::pin(async { Err(SamplingError::Unavailable) })
    }

    fn roots(&self) -> Vec<Root> {
        Vec::new()
    }
}

/// One question from the server, with where its answer goes.
pub(crate) enum Question {
    Elicit(Box<ElicitRequestParams>, oneshot::Sender<ElicitResult>),
    Sample(
        Box<CreateMessageRequestParams>,
        oneshot::Sender<Result<CreateMessageResult, SamplingError>>,
    ),
    Roots(oneshot::Sender<Vec<Root>>),
}

impl Question {
    /// Answers the question with `side` (in the task of the call that owns `side`).
    pub(crate) async fn serve(self, server: &str, side: &dyn ClientSide) {
        match self {
            Self::Elicit(request, reply) => {
                let _ = reply.send(side.elicit(server, *request).await);
            }
            Self::Sample(request, reply) => {
                let _ = reply.send(side.sample(server, *request).await);
            }
            Self::Roots(reply) => {
                let _ = reply.send(side.roots());
            }
        }
    }
}

/// Where the questions of each running call go, by request id.
#[derive(Default)]
pub(crate) struct CallRoutes {
    routes: Mutex<HashMap<String, mpsc::UnboundedSender<Question>>>,
}

impl CallRoutes {
    /// Routes the questions of call `id` to `tx` until the guard is dropped.
    pub(crate) fn register(
        self: &std::sync::Arc<Self>,
        id: &rmcp::model::RequestId,
        tx: mpsc::UnboundedSender<Question>,
    ) -> CallRouteGuard {
        let key = id.to_string();
        if let Ok(mut routes) = self.routes.lock() {
            routes.insert(key.clone(), tx);
        }
        CallRouteGuard {
            routes: std::sync::Arc::clone(self),
            key,
        }
    }

    /// The route of a question: the call whose response stream carried it, else the only
    /// call in flight.
    pub(crate) fn find(
        &self,
        origin: Option<&rmcp::model::RequestId>,
    ) -> Option<mpsc::UnboundedSender<Question>> {
        let routes = self.routes.lock().ok()?;
        match origin {
            Some(id) => routes.get(&id.to_string()).cloned(),
            None if routes.len() == 1 => routes.values().next().cloned(),
            None => None,
        }
    }
}

/// Removes a call's route when the call ends, however it ends.
pub(crate) struct CallRouteGuard {
    routes: std::sync::Arc<CallRoutes>,
    key: String,
}

impl Drop for CallRouteGuard {
    fn drop(&mut self) {
        if let Ok(mut routes) = self.routes.routes.lock() {
            routes.remove(&self.key);
        }
    }
}
