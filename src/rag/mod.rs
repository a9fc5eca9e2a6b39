//! Knowledge bases (RAG): documents are loaded ([`loaders`]), split into chunks that follow
//! the document's structure ([`splitter`]), embedded in batches ([`embedder`]) and stored
//! per knowledge base under `rags/` ([`store`]). A question is answered by a hybrid search
//! ([`search`]): exact or approximate vector search ([`vector`]) and BM25 keyword search
//! ([`bm25`]), fused with reciprocal rank fusion and optionally reranked by a reranker
//! model; the best chunks enter the prompt through `rag_template`.
//!
//! Building is incremental ([`build`]): chunks are keyed by a hash of their content, and a
//! rebuild embeds only chunks it has not seen. Every file is written atomically and the
//! index file of a build is only referenced once it is complete, so an interrupted or
//! failed build leaves the previous knowledge base usable.
//!
//! This module never prints: progress goes through [`progress::Progress`], errors are
//! [`RagError`]s. Which knowledge base a conversation uses is decided by the engine.

pub mod build;
pub mod embedder;
pub mod loaders;
pub mod progress;
pub mod search;
pub mod store;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};

pub use build::{BuildOptions, BuildReport};
pub use search::{Hit, SearchSettings};
pub use store::{KnowledgeBase, RagMeta};

/// What can go wrong with a knowledge base. Messages are one line and say what to do.
#[derive(Debug, thiserror::Error)]
pub enum RagError {
    /// No knowledge base of that name.
    #[error(
        "unknown RAG `{name}`: build it with `loki --rag {name} --rag-docs <files|dirs|urls>` or `.rag {name}` in the REPL (`loki --list-rags` lists them)"
    )]
    Unknown {
        /// The name asked for.
        name: String,
    },
    /// A name that cannot be a file name.
    #[error(
        "invalid RAG name `{name}`: use letters, digits, `-`, `_` and `.` (not starting with `.`)"
    )]
    InvalidName {
        /// The name given.
        name: String,
    },
    /// Nothing to index.
    #[error("no documents to index for RAG `{name}`: {hint}")]
    NoDocuments {
        /// Knowledge base.
        name: String,
        /// What to do.
        hint: String,
    },
    /// A document that could not be loaded.
    #[error("cannot load {source_name}: {message}")]
    Load {
        /// Path, URL or `loader:resource`.
        source_name: String,
        /// Why.
        message: String,
    },
    /// The embedding or reranker model failed.
    #[error("{what} model `{model}` failed: {message}")]
    Model {
        /// `embedding` or `reranker`.
        what: &'static str,
        /// `client:model`.
        model: String,
        /// The provider's error.
        message: String,
    },
    /// A model id that does not resolve.
    #[error(transparent)]
    ModelId(#[from] crate::client::registry::ModelError),
    /// A damaged index or metadata file.
    #[error(
        "RAG `{name}` is damaged ({path}: {message}); rebuild it with `loki --rag {name} --rebuild-rag`"
    )]
    Corrupt {
        /// Knowledge base.
        name: String,
        /// The damaged file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A knowledge base built by Loki or AIChat: its settings and documents are read, its
    /// index (vectors in the YAML) is not; one rebuild turns it into loki's.
    #[error(
        "RAG `{name}` was built by Loki or AIChat, whose index loki does not read: rebuild it once with `loki --rag {name} --rebuild-rag` (its documents and settings are kept)"
    )]
    Legacy {
        /// Knowledge base.
        name: String,
    },
    /// `rags/<name>.yaml` itself cannot be read. A rebuild starts from that file, so the
    /// way out is to repair it or to build the knowledge base anew.
    #[error(
        "RAG `{name}` settings are damaged ({path}: {message}); fix the file, or delete it and build again with `loki --rag {name} --rag-docs PATH`"
    )]
    CorruptSettings {
        /// Knowledge base.
        name: String,
        /// The settings file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A file could not be read or written.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// The OS error.
        message: String,
    },
    /// The build was cancelled; nothing was changed.
    #[error("interrupted (the knowledge base was left as it was)")]
    Cancelled,
}

impl RagError {
    pub(crate) fn io(path: &Path, e: &std::io::Error) -> Self {
        Self::Io {
            path: path.display().to_string(),
            message: e.to_string(),
        }
    }
}

/// Checks a knowledge base name (it becomes a file name under `rags/`).
pub fn validate_name(name: &str) -> Result<(), RagError> {
    let ok = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(RagError::InvalidName {
            name: name.to_string(),
        })
    }
}

/// Names of the saved knowledge bases in `dir`, sorted.
pub fn list(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".yaml")?;
            (!stem.starts_with('.')).then(|| stem.to_string())
        })
        .collect();
    names.sort();
    names
}

/// Deletes knowledge base `name` (its metadata and index files).
pub fn delete(dir: &Path, name: &str) -> Result<(), RagError> {
    validate_name(name)?;
    let meta = store::meta_path(dir, name);
    if !meta.exists() {
        return Err(RagError::Unknown {
            name: name.to_string(),
        });
    }
    std::fs::remove_file(&meta).map_err(|e| RagError::io(&meta, &e))?;
    store::remove_index_files(dir, name, None);
    Ok(())
}

/// Makes `dir` (the unsaved knowledge base's, under the shared temporary directory)
/// ready: created readable by its owner only, or, when it exists, accepted only as a real
/// directory of this user that nobody else can read — a name in `/tmp` can be taken by
/// someone else first.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    match builder.create(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        other => return other,
    }
    let meta = std::fs::symlink_metadata(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let ours = meta.uid() == rustix::process::getuid().as_raw();
        if !meta.is_dir() || !ours || meta.mode() & 0o077 != 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                "it exists and is not a private directory of this user",
            ));
        }
    }
    #[cfg(not(unix))]
    if !meta.is_dir() {
        return Err(std::io::ErrorKind::AlreadyExists.into());
    }
    Ok(())
}

/// Loaded knowledge bases shared by every conversation of the process, by name. A
/// rebuild replaces the entry; holders of the old one keep using it until they drop it.
#[derive(Debug, Default)]
pub struct RagCache {
    loaded: Mutex<HashMap<PathBuf, Weak<KnowledgeBase>>>,
}

impl RagCache {
    /// The knowledge base `name` in `dir`, loaded once and shared.
    pub fn open(&self, dir: &Path, name: &str) -> Result<Arc<KnowledgeBase>, RagError> {
        validate_name(name)?;
        let key = store::meta_path(dir, name);
        if let Ok(map) = self.loaded.lock()
            && let Some(kb) = map.get(&key).and_then(Weak::upgrade)
            && kb.is_current()
        {
            return Ok(kb);
        }
        let kb = Arc::new(KnowledgeBase::open(dir, name)?);
        if let Ok(mut map) = self.loaded.lock() {
            map.insert(key, Arc::downgrade(&kb));
        }
        Ok(kb)
    }

    /// Forgets `name` (after a rebuild or deletion).
    pub fn invalidate(&self, dir: &Path, name: &str) {
        if let Ok(mut map) = self.loaded.lock() {
            map.remove(&store::meta_path(dir, name));
        }
    }
}
