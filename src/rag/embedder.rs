//! Embedding chunks: batches of the model's `max_batch_size` (or the knowledge base's
//! `batch_size`), [`IN_FLIGHT`] requests at a time, each retried with the client's backoff
//! when the error is transient. Vectors come back normalised, in input order.

use std::sync::Arc;

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use super::RagError;
use super::progress::{Progress, Step};
use crate::client::embed::{DEFAULT_BATCH, Purpose};
use crate::client::{Model, Provider, ProviderError};

/// Embeddings requests sent at once.
pub const IN_FLIGHT: usize = 4;

/// An embedding model ready to use.
#[derive(Clone)]
pub struct Embedder {
    /// Its provider.
    pub provider: Arc<dyn Provider>,
    /// The model.
    pub model: Model,
    /// Texts per request.
    pub batch: usize,
    /// Retries of a transient failure (`LOKI_EMBEDDINGS_RETRY_LIMIT`, else the client's).
    pub retries: Option<u32>,
}

impl std::fmt::Debug for Embedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Embedder")
            .field("model", &self.model.id())
            .field("batch", &self.batch)
            .finish_non_exhaustive()
    }
}

impl Embedder {
    /// An embedder for `model`; `batch_size` overrides the model's `max_batch_size`.
    pub fn new(provider: Arc<dyn Provider>, model: Model, batch_size: Option<usize>) -> Self {
        let batch = batch_size
            .or_else(|| {
                model
                    .config
                    .max_batch_size
                    .and_then(|n| usize::try_from(n).ok())
            })
            .filter(|n| *n > 0)
            .unwrap_or(DEFAULT_BATCH);
        Self {
            provider,
            model,
            batch,
            retries: None,
        }
    }

    fn error(&self, e: &ProviderError) -> RagError {
        RagError::Model {
            what: "embedding",
            model: self.model.id(),
            message: e.to_string(),
        }
    }

    /// Embeds `texts` as documents, reporting progress.
    pub async fn embed_documents(
        &self,
        texts: &[String],
        progress: &dyn Progress,
        cancel: &CancellationToken,
    ) -> Result<Vec<Vec<f32>>, (RagError, Option<ProviderError>)> {
        let total = texts.len();
        let mut out = Vec::with_capacity(total);
        progress.report(Step::Embedding { done: 0, total });
        // The batches are made from indices: a closure taking `&[String]` would keep the
        // whole build from being `Send` (it runs inside conversations on any thread).
        let size = self.batch.max(1);
        let mut batches = futures_util::stream::iter((0..total).step_by(size).map(|start| {
            let batch = &texts[start..(start + size).min(total)];
            self.embed_batch(batch, Purpose::Document)
        }))
        .buffered(IN_FLIGHT);
        loop {
            let next = tokio::select! {
                biased;
                _ = cancel.cancelled() => return Err((RagError::Cancelled, None)),
                n = batches.next() => n,
            };
            let Some(result) = next else { break };
            match result {
                Ok(vectors) => {
                    out.extend(vectors);
                    progress.report(Step::Embedding {
                        done: out.len(),
                        total,
                    });
                }
                Err(e) => return Err((self.error(&e), Some(e))),
            }
        }
        Ok(out)
    }

    /// Embeds a question.
    pub async fn embed_query(&self, text: &str) -> Result<Vec<f32>, RagError> {
        let texts = [text.to_string()];
        let mut vectors = self
            .embed_batch(&texts, Purpose::Query)
            .await
            .map_err(|e| self.error(&e))?;
        vectors.pop().ok_or_else(|| RagError::Model {
            what: "embedding",
            model: self.model.id(),
            message: "no vector returned".into(),
        })
    }

    async fn embed_batch(
        &self,
        texts: &[String],
        purpose: Purpose,
    ) -> Result<Vec<Vec<f32>>, ProviderError> {
        let mut policy = self.provider.retry_policy();
        if let Some(retries) = self.retries {
            policy.max_retries = retries;
        }
        let mut attempt = 0;
        loop {
            attempt += 1;
            let result = self.provider.embed(&self.model, texts, purpose).await;
            let error = match result {
                Ok(vectors) if vectors.iter().any(Vec::is_empty) => {
                    // Not retried: the same request gives the same answer.
                    return Err(ProviderError::Protocol {
                        client: self.provider.name().to_string(),
                        message: "the model returned an empty embedding (no dimensions)".into(),
                    });
                }
                Ok(vectors) if vectors.len() == texts.len() => {
                    return Ok(vectors
                        .into_iter()
                        .map(|mut v| {
                            loki_rag::vector::normalize(&mut v);
                            v
                        })
                        .collect());
                }
                Ok(vectors) => ProviderError::Protocol {
                    client: self.provider.name().to_string(),
                    message: format!(
                        "asked for {} embeddings, got {}",
                        texts.len(),
                        vectors.len()
                    ),
                },
                Err(e) => e,
            };
            match policy.delay_for(&error, attempt, fastrand::f64()) {
                Some(delay) => tokio::time::sleep(delay).await,
                None => return Err(error),
            }
        }
    }
}
