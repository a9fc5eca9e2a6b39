//! Retrieval for a new user message: when the conversation uses a knowledge base, the
//! question is searched in it and the best chunks are put into the message through
//! `rag_template`. Only new input is augmented; `.continue`, `.regenerate` and tool rounds
//! reuse what was sent.

use crate::conversation::context::RequestContext;
use crate::error::CoreError;
use crate::rag::search::{self, SearchSettings};
use crate::state::AppState;
use loki_protocol::event::{Event, Notice};
use loki_wire::message::{Content, ContentPart, Message};

/// The settings a search of `meta` uses: the knowledge base's own, then the
/// conversation's `.set`, then the configuration's.
pub(in crate::conversation) fn settings(
    state: &AppState,
    ctx: &RequestContext,
    meta: &crate::rag::RagMeta,
) -> SearchSettings {
    let top_k = if meta.top_k > 0 {
        meta.top_k
    } else {
        ctx.rag_settings.top_k.unwrap_or(state.config.rag_top_k)
    };
    let reranker_model = meta.reranker_model.clone().or_else(|| {
        ctx.rag_settings
            .reranker_model
            .clone()
            .unwrap_or_else(|| state.config.rag_reranker_model.clone())
    });
    SearchSettings {
        top_k,
        reranker_model,
    }
}

/// Adds the chunks relevant to `query` to `message` when a knowledge base is active.
pub(super) async fn augment(
    state: &AppState,
    ctx: &mut RequestContext,
    query: &str,
    message: Message,
    emitter: &crate::conversation::Sink<'_>,
) -> Result<Message, CoreError> {
    let Some(name) = ctx.active_rag() else {
        return Ok(message);
    };
    ctx.rag_sources.clear();
    let template = state
        .config
        .rag_template
        .clone()
        .unwrap_or_else(|| search::DEFAULT_TEMPLATE.to_string());
    search::check_template(&template).map_err(|e| CoreError::InvalidRequest(e.to_string()))?;
    let kb = state.rags.open(state.paths.rag_dir(&name), &name)?;
    let settings = settings(state, ctx, &kb.meta);
    let text = message.text_content();
    let query = if query.trim().is_empty() {
        text.as_str()
    } else {
        query
    };
    let found = tokio::select! {
        biased;
        _ = ctx.cancel.cancelled() => return Err(CoreError::Cancelled),
        found = search::search(&kb, &state.providers, query, &settings) => found?,
    };
    for warning in found.warnings {
        emitter.emit(Event::Notice(Notice::warning(format!(
            "RAG `{name}`: {warning}"
        ))));
    }
    ctx.rag_sources = found.hits.iter().map(|h| h.source.clone()).collect();
    let augmented = search::render_prompt(&template, &text, &found.hits);
    let mut message = message;
    message.content = match message.content {
        Content::Parts(mut parts) => {
            parts.retain(|p| !matches!(p, ContentPart::Text { .. }));
            parts.insert(0, ContentPart::Text { text: augmented });
            Content::Parts(parts)
        }
        _ => Content::Text(augmented.into()),
    };
    Ok(message)
}

/// What building a knowledge base needs from the shared state.
pub fn build_context<'a>(
    state: &'a AppState,
    name: &str,
    cwd: &'a std::path::Path,
    progress: &'a dyn crate::rag::progress::Progress,
    cancel: tokio_util::sync::CancellationToken,
) -> crate::rag::build::BuildContext<'a> {
    crate::rag::build::BuildContext {
        registry: &state.providers,
        dir: state.paths.rag_dir(name),
        cwd,
        loaders: crate::rag::loaders::LoaderConfig {
            loaders: state.config.document_loaders.clone(),
            user_agent: state.config.user_agent(),
        },
        default_embedding_model: state.config.rag_embedding_model.clone(),
        retries: state
            .env
            .get("LOKI_EMBEDDINGS_RETRY_LIMIT")
            .and_then(|v| v.trim().parse().ok()),
        progress,
        cancel,
    }
}

/// Settings of a new knowledge base from the configuration (`rag_chunk_size`,
/// `rag_chunk_overlap`, `rag_top_k`, `rag_reranker_model`).
pub fn default_build_options(state: &AppState, documents: Vec<String>) -> crate::rag::BuildOptions {
    crate::rag::BuildOptions {
        documents,
        embedding_model: state.config.rag_embedding_model.clone(),
        chunk_size: state.config.rag_chunk_size,
        chunk_overlap: state.config.rag_chunk_overlap,
        top_k: state.config.rag_top_k,
        reranker_model: state.config.rag_reranker_model.clone(),
    }
}

/// Splits document lists given as `a;b` into single sources.
pub fn split_documents<'a>(lists: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    lists
        .into_iter()
        .flat_map(|l| l.split(';'))
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_string)
        .collect()
}
