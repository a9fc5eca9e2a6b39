//! The REPL's knowledge base commands: `.rag`, `.rebuild rag`, `.sources rag`,
//! `.info rag`, `.exit rag`, `.delete rag`, `.edit rag-docs`, and the questions asked
//! when `.rag` (or `--rag` on a terminal) names a knowledge base that does not exist.

use std::sync::Arc;

use super::Repl;
use crate::conversation::retrieval;
use crate::rag::{self, BuildOptions, BuildReport, RagError};
use loki_protocol::command::Command;

impl Repl {
    /// A token Ctrl-C cancels while a build runs.
    fn build_token(&self) -> super::interrupt::Beside {
        self.interrupt.beside(&self.cancel)
    }

    fn show_report(&self, name: &str, result: Result<BuildReport, RagError>) -> bool {
        self.state()
            .rags
            .invalidate(self.state().paths.rag_dir(name), name);
        match result {
            Ok(report) => {
                self.note(crate::term::rag::report_lines(&report).trim_end());
                true
            }
            Err(e) => {
                self.error(&e.to_string());
                false
            }
        }
    }

    /// `.rag <name> [doc...]`.
    pub(super) async fn use_rag(&mut self, name: &str, documents: Vec<String>) {
        // `.rag` alone: a new unsaved knowledge base, gone when the REPL ends.
        let name = if name.is_empty() {
            let temp = crate::config::paths::TEMP_RAG;
            if self.conv.status().rag.as_deref() == Some(temp) {
                self.apply(Command::ExitRag).await;
            }
            let dir = self.state().paths.rag_dir(temp).to_path_buf();
            let _ = rag::delete(&dir, temp);
            self.state().rags.invalidate(&dir, temp);
            if let Err(e) = rag::private_dir(&dir) {
                return self.error(&format!("cannot create {}: {e}", dir.display()));
            }
            temp
        } else {
            name
        };
        if let Err(e) = rag::validate_name(name) {
            return self.error(&e.to_string());
        }
        let state = Arc::clone(self.state());
        let cwd = self.conv.status().cwd;
        let progress = crate::term::rag::progress(&state);
        let build = self.build_token();
        let ctx = retrieval::build_context(&state, name, &cwd, &progress, build.token.clone());
        let exists = rag::store::meta_path(state.paths.rag_dir(name), name).exists();
        let result = if !documents.is_empty() {
            let options = retrieval::default_build_options(&state, documents);
            Some(rag::build::build(&ctx, name, options).await)
        } else if !exists {
            // The questions wait on a thread of their own: SIGTERM or SIGHUP ends the wait
            // (and the REPL, at the top of its loop) instead of going unheard.
            let asking = Arc::clone(&state);
            let owned = name.to_string();
            match self
                .ask_user(move || crate::term::rag::wizard_options(&asking, &owned))
                .await
            {
                Ok(Ok(options)) => Some(rag::build::build(&ctx, name, options).await),
                Ok(Err(e)) => Some(Err(e)),
                Err(_) => return,
            }
        } else {
            None
        };
        if let Some(result) = result
            && !self.show_report(name, result)
        {
            return;
        }
        self.apply(Command::UseRag(name.to_string())).await;
    }

    /// `.rebuild rag`.
    pub(super) async fn rebuild_rag(&mut self) {
        let Some(name) = self.conv.status().rag else {
            return self.error("no knowledge base is active (.rag <name>)");
        };
        let state = Arc::clone(self.state());
        let cwd = self.conv.status().cwd;
        let progress = crate::term::rag::progress(&state);
        let build = self.build_token();
        let ctx = retrieval::build_context(&state, &name, &cwd, &progress, build.token.clone());
        let result = rag::build::rebuild(&ctx, &name).await;
        self.show_report(&name, result);
    }

    /// `.edit rag-docs`: the document list, one per line, in the editor.
    pub(super) async fn edit_rag_docs(&mut self) {
        let Some(name) = self.conv.status().rag else {
            return self.error("no knowledge base is active (.rag <name>)");
        };
        let state = Arc::clone(self.state());
        let meta = match rag::store::read_meta(state.paths.rag_dir(&name), &name) {
            Ok(meta) => meta,
            Err(e) => return self.error(&e.to_string()),
        };
        let before = meta.document_paths.join("\n") + "\n";
        let path = std::env::temp_dir().join(format!("loki-rag-docs-{name}.txt"));
        if let Err(e) = crate::atomic_file::write_atomic(&path, before.as_bytes(), true) {
            return self.error(&format!("cannot write {}: {e}", path.display()));
        }
        if !self.run_editor(&path) {
            return;
        }
        let after = std::fs::read_to_string(&path).unwrap_or_default();
        let _ = std::fs::remove_file(&path);
        let documents = retrieval::split_documents(after.lines());
        if documents == meta.document_paths || documents.is_empty() {
            return self.note("No changes");
        }
        let cwd = self.conv.status().cwd;
        let progress = crate::term::rag::progress(&state);
        let build = self.build_token();
        let ctx = retrieval::build_context(&state, &name, &cwd, &progress, build.token.clone());
        let options = BuildOptions {
            documents,
            embedding_model: meta.embedding_model.clone(),
            chunk_size: Some(meta.chunk_size),
            chunk_overlap: Some(meta.chunk_overlap),
            top_k: meta.top_k,
            reranker_model: meta.reranker_model.clone(),
        };
        let result = rag::build::build(&ctx, &name, options).await;
        self.show_report(&name, result);
    }

    /// `.sources rag`.
    pub(super) fn rag_sources(&self) {
        if self.conv.status().rag.is_none() {
            return self.error("no knowledge base is active (.rag <name>)");
        }
        if self.conv.status().rag_sources.is_empty() {
            return self.note("No sources");
        }
        self.println(&self.conv.status().rag_sources.join("\n"));
    }

    /// `.info rag`.
    pub(super) fn info_rag(&self) {
        let Some(name) = self.conv.status().rag else {
            return self.error("no knowledge base is active (.rag <name>)");
        };
        let state = self.state();
        match rag::store::read_meta(state.paths.rag_dir(&name), &name) {
            Ok(meta) => {
                let settings = self.conv.rag_settings(&meta);
                let yaml = serde_yaml::to_string(&meta).unwrap_or_default();
                self.println(&format!(
                    "name: {name}\npath: {}\nsearch: {}\nreranker_in_use: {}\n{yaml}",
                    rag::store::meta_path(state.paths.rag_dir(&name), &name).display(),
                    if meta.dimensions == 0 {
                        "keyword (BM25)"
                    } else {
                        "hybrid (vectors + BM25, reciprocal rank fusion)"
                    },
                    settings.reranker_model.as_deref().unwrap_or("none"),
                ));
            }
            Err(e) => self.error(&e.to_string()),
        }
    }

    /// `.exit rag`.
    pub(super) async fn exit_rag(&mut self) {
        self.apply(Command::ExitRag).await;
    }

    /// `.delete rag <name>`.
    pub(super) fn delete_rag(&mut self, name: &str) {
        if self.conv.status().rag.as_deref() == Some(name) {
            return self.error("that knowledge base is in use; .exit rag first");
        }
        let dir = self.state().paths.rag_dir(name).to_path_buf();
        match rag::delete(&dir, name) {
            Ok(()) => {
                self.state().rags.invalidate(&dir, name);
                self.note(&format!("deleted RAG {name}"));
            }
            Err(e) => self.error(&e.to_string()),
        }
    }
}
