//! `--rag`, `--rag-docs`, `--rebuild-rag`: choosing, building and rebuilding the
//! knowledge base of a one-shot run (or of the REPL it starts).

use std::io::Write;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::args::Args;
use crate::conversation::Conversation;
use crate::conversation::retrieval;
use crate::rag;
use crate::state::AppState;
use loki_protocol::command::Command;
use loki_protocol::op::Op;

/// What to do after the RAG flags were handled.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum RagStep {
    /// Go on with the question (or the REPL).
    Continue,
    /// A build was all that was asked for.
    Done,
}

/// A token for a build: cancelled with the conversation's token (whose signal watcher a one-shot
/// run has: Ctrl-C, SIGTERM, SIGHUP) and by Ctrl-C (the REPL's start has no watcher yet).
fn build_token(parent: &CancellationToken) -> (CancellationToken, tokio::task::JoinHandle<()>) {
    let token = parent.child_token();
    let cancel = token.clone();
    let task = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            cancel.cancel();
        }
    });
    (token, task)
}

/// Applies the RAG flags to `conversation` (building what they ask for first);
/// `has_prompt` says whether a question follows.
pub(crate) async fn prepare(
    state: &Arc<AppState>,
    conversation: &mut Conversation,
    args: &Args,
    has_prompt: bool,
    repl: bool,
    cancel: &CancellationToken,
) -> anyhow::Result<RagStep> {
    let Some(name) = &args.rag else {
        return Ok(RagStep::Continue);
    };
    rag::validate_name(name)?;
    let cwd = conversation.status().cwd;
    let dir = state.paths.rag_dir(name);
    if name == crate::config::paths::TEMP_RAG {
        rag::private_dir(dir).map_err(|e| anyhow::anyhow!("cannot use {}: {e}", dir.display()))?;
    }
    let progress = crate::term::rag::progress(state);
    let (cancel, watcher) = build_token(cancel);
    let build_ctx = retrieval::build_context(state, name, &cwd, &progress, cancel);
    let report = if !args.rag_docs.is_empty() {
        let documents = retrieval::split_documents(args.rag_docs.iter().map(String::as_str));
        let options = retrieval::default_build_options(state, documents);
        Some(rag::build::build(&build_ctx, name, options).await)
    } else if args.rebuild_rag {
        Some(rag::build::rebuild(&build_ctx, name).await)
    } else if !rag::store::meta_path(dir, name).exists() {
        if repl {
            Some(crate::term::rag::init_wizard(state, name, &build_ctx).await)
        } else {
            watcher.abort();
            return Err(rag::RagError::Unknown { name: name.clone() }.into());
        }
    } else {
        None
    };
    watcher.abort();
    let built = report.is_some();
    if let Some(report) = report {
        // A stopped build keeps the previous index; the run ends as a stopped turn does
        // (130, 143 or 129).
        let report = match report {
            Err(rag::RagError::Cancelled) => return Err(crate::error::CoreError::Cancelled.into()),
            other => other?,
        };
        state.rags.invalidate(dir, name);
        std::io::stderr()
            .lock()
            .write_all(crate::term::rag::report_lines(&report).as_bytes())?;
    }
    let quiet = loki_protocol::emitter::CollectingEmitter::new();
    conversation
        .submit(Op::Command(Command::UseRag(name.clone())), &quiet)
        .await?;
    let flag_build = !args.rag_docs.is_empty() || args.rebuild_rag;
    if built && flag_build && !has_prompt {
        return Ok(RagStep::Done);
    }
    Ok(RagStep::Continue)
}
