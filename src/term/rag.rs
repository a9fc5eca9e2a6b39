//! Terminal helpers for building knowledge bases, shared by the one-shot CLI and the
//! REPL: the questions asked for a new knowledge base, progress, and the report lines.

use std::io::Write;
use std::sync::Arc;

use crate::config::clients::ModelKind;
use crate::conversation::retrieval;
use crate::rag::build::{BuildContext, DEFAULT_CHUNK_SIZE};
use crate::rag::{self, BuildOptions, BuildReport, RagError};
use crate::render::rag_progress::BuildProgress;
use crate::render::theme::Theme;
use crate::state::AppState;

/// Progress on stderr, with a bar on a terminal.
pub fn progress(state: &AppState) -> BuildProgress {
    BuildProgress::new(state.terminal.stderr_tty, Theme::stderr(&state.terminal))
}

/// The lines printed after a successful build.
pub fn report_lines(report: &BuildReport) -> String {
    format!(
        "✓ Saved RAG to '{}'.\n{}\n",
        report.path.display(),
        report.summary()
    )
}

/// Choice in the model list that builds a keyword-only knowledge base.
const NO_MODEL: &str = "none (keyword search only, BM25)";

/// Asks for the embedding model, chunk size, overlap and documents, then builds `name`.
pub async fn init_wizard(
    state: &Arc<AppState>,
    name: &str,
    ctx: &BuildContext<'_>,
) -> Result<BuildReport, RagError> {
    let options = wizard_options(state, name)?;
    rag::build::build(ctx, name, options).await
}

/// The wizard's questions (they block on the terminal: a front end that must stay
/// responsive to signals runs this on a thread of its own).
pub fn wizard_options(state: &AppState, name: &str) -> Result<BuildOptions, RagError> {
    let aborted = |_| RagError::Cancelled;
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "⚙ Initializing RAG `{name}`…");
    drop(err);
    let embedding_model = match &state.config.rag_embedding_model {
        Some(id) => {
            let _ = writeln!(std::io::stderr().lock(), "Embedding model: {id}");
            Some(id.clone())
        }
        None => {
            let mut choices: Vec<String> = state
                .providers
                .models(ModelKind::Embedding)
                .unwrap_or_default()
                .iter()
                .map(crate::client::Model::id)
                .collect();
            choices.push(NO_MODEL.to_string());
            let picked = inquire::Select::new("Embedding model:", choices)
                .prompt()
                .map_err(aborted)?;
            (picked != NO_MODEL).then_some(picked)
        }
    };
    let model_default = embedding_model
        .as_deref()
        .and_then(|id| state.providers.resolve(id, ModelKind::Embedding).ok())
        .and_then(|m| m.config.default_chunk_size)
        .and_then(|n| usize::try_from(n).ok());
    let chunk_size = match state.config.rag_chunk_size {
        Some(n) => n,
        None => ask_number(
            "Chunk size (tokens):",
            model_default.unwrap_or(DEFAULT_CHUNK_SIZE),
        )
        .map_err(aborted)?,
    };
    let chunk_overlap = match state.config.rag_chunk_overlap {
        Some(n) => n,
        None => ask_number("Chunk overlap (tokens):", chunk_size / 20).map_err(aborted)?,
    };
    // Read with the line editor: Ctrl-U, Ctrl-W and Ctrl-A edit instead of typing letters.
    let documents = super::text_input::ask(
        "Add documents:",
        "e.g. file;dir/;dir/**/*.{md,mdx};loader:resource;url;website/**",
        |_| Ok(()),
    )
    .map_err(aborted)?;
    Ok(BuildOptions {
        documents: retrieval::split_documents([documents.as_str()]),
        embedding_model,
        chunk_size: Some(chunk_size),
        chunk_overlap: Some(chunk_overlap),
        top_k: state.config.rag_top_k,
        reranker_model: state.config.rag_reranker_model.clone(),
    })
}

/// A whole number, `default` when the answer is empty, read with the line editor.
fn ask_number(label: &str, default: usize) -> Result<usize, inquire::InquireError> {
    let answer = super::text_input::ask(label, &format!("({default})"), |text| {
        if text.is_empty() || text.parse::<usize>().is_ok() {
            Ok(())
        } else {
            Err("a whole number, please".into())
        }
    })?;
    Ok(answer.parse().unwrap_or(default))
}
