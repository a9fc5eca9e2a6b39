//! Building and rebuilding a knowledge base.
//!
//! Both read every source again, split the documents and hash each chunk (with the
//! embedding model's id, so a model change re-embeds everything). Chunks whose hash the
//! previous index holds keep their vectors; only new ones are embedded. The report says how
//! many chunks were reused, added and removed.
//!
//! A source that fails to load fails the build, as does an embedding error — except that
//! an embedding model that cannot be reached while building a knowledge base that has no
//! vectors yet gives a keyword-only (BM25) index, said so in the report; a later rebuild
//! with the model reachable makes it hybrid. Nothing is written before everything
//! succeeded, so a failed build leaves the previous knowledge base as it was.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::embedder::Embedder;
use super::loaders::{self, LoaderConfig};
use super::progress::{Progress, Step};
use super::store::{self, ChunkInfo, FileEntry, KnowledgeBase, NewIndex, RagMeta};
use super::{RagError, validate_name};
use crate::client::ProviderError;
use crate::client::ProviderRegistry;
use crate::config::clients::ModelKind;
use loki_rag::splitter::{self, Language};

/// Chunk size when neither the settings nor the model give one (tokens).
pub const DEFAULT_CHUNK_SIZE: usize = 1000;

/// Settings of a new knowledge base (or new documents for an existing one).
#[derive(Debug, Clone, Default)]
pub struct BuildOptions {
    /// Documents: paths, directories, globs, URLs, `loader:resource`.
    pub documents: Vec<String>,
    /// Embedding model; none builds a keyword-only index.
    pub embedding_model: Option<String>,
    /// Chunk size in tokens (default: the model's `default_chunk_size`, else 1000).
    pub chunk_size: Option<usize>,
    /// Overlap in tokens (default: 5% of the chunk size).
    pub chunk_overlap: Option<usize>,
    /// Chunks per question.
    pub top_k: usize,
    /// Reranker model.
    pub reranker_model: Option<String>,
}

/// What a build did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuildReport {
    /// `rags/<name>.yaml`.
    pub path: PathBuf,
    /// Documents indexed.
    pub files: usize,
    /// Chunks in the index.
    pub chunks: usize,
    /// Chunks whose content was already indexed (not embedded again).
    pub reused: usize,
    /// New or changed chunks.
    pub added: usize,
    /// Chunks of the previous index that are gone.
    pub removed: usize,
    /// Texts sent to the embedding model.
    pub embedded: usize,
    /// No vectors: searched with BM25 alone.
    pub keyword_only: bool,
    /// Why it is keyword-only, when an embedding model was configured.
    pub fallback_reason: Option<String>,
}

impl BuildReport {
    /// One line for the user.
    pub fn summary(&self) -> String {
        let mode = if self.keyword_only {
            "keyword search only (BM25)"
        } else {
            "hybrid search (vectors + BM25)"
        };
        format!(
            "{} chunk(s) from {} document(s): {} reused, {} added, {} removed; {mode}",
            self.chunks, self.files, self.reused, self.added, self.removed
        )
    }
}

/// What a build needs around it.
pub struct BuildContext<'a> {
    /// Models.
    pub registry: &'a ProviderRegistry,
    /// `rags/`.
    pub dir: &'a Path,
    /// Where relative document paths start.
    pub cwd: &'a Path,
    /// `document_loaders` and the user agent.
    pub loaders: LoaderConfig,
    /// `rag_embedding_model`, used when a knowledge base has none yet.
    pub default_embedding_model: Option<String>,
    /// Retries of embeddings requests.
    pub retries: Option<u32>,
    /// Where progress goes.
    pub progress: &'a dyn Progress,
    /// Stops the build.
    pub cancel: CancellationToken,
}

/// Builds `name` from `options`, replacing its settings and documents (chunks already
/// embedded with the same model are reused).
pub async fn build(
    ctx: &BuildContext<'_>,
    name: &str,
    options: BuildOptions,
) -> Result<BuildReport, RagError> {
    validate_name(name)?;
    let documents: Vec<String> = options
        .documents
        .iter()
        .map(|d| absolute_source(d, ctx.cwd))
        .collect();
    let embedding_model = options
        .embedding_model
        .clone()
        .or_else(|| ctx.default_embedding_model.clone());
    let model = match &embedding_model {
        Some(id) => Some(ctx.registry.resolve(id, ModelKind::Embedding)?),
        None => None,
    };
    let chunk_size = options
        .chunk_size
        .or_else(|| {
            model
                .as_ref()
                .and_then(|m| m.config.default_chunk_size)
                .and_then(|n| usize::try_from(n).ok())
        })
        .unwrap_or(DEFAULT_CHUNK_SIZE);
    let chunk_size = match model
        .as_ref()
        .and_then(|m| m.config.max_tokens_per_chunk)
        .and_then(|n| usize::try_from(n).ok())
    {
        Some(max) => chunk_size.min(max),
        None => chunk_size,
    };
    let meta = RagMeta {
        embedding_model,
        chunk_size,
        chunk_overlap: options.chunk_overlap.unwrap_or(chunk_size / 20),
        reranker_model: options.reranker_model,
        top_k: options.top_k.max(1),
        document_paths: documents,
        ..RagMeta::default()
    };
    run(ctx, name, meta).await
}

/// Reads the sources of `name` again and updates it incrementally.
pub async fn rebuild(ctx: &BuildContext<'_>, name: &str) -> Result<BuildReport, RagError> {
    validate_name(name)?;
    let mut meta = store::read_meta(ctx.dir, name)?;
    if meta.embedding_model.is_none() {
        meta.embedding_model = ctx.default_embedding_model.clone();
    }
    run(ctx, name, meta).await
}

/// The texts to embed, each distinct chunk once, and where each hash is among them.
/// With `reuse`, chunks the previous index already has are left out (but one).
fn pending(
    chunks: &[ChunkInfo],
    texts: &[String],
    reuse: bool,
    old_hashes: &HashMap<u64, usize>,
) -> (Vec<String>, HashMap<u64, usize>) {
    let mut todo: Vec<String> = Vec::new();
    let mut todo_index: HashMap<u64, usize> = HashMap::new();
    for (chunk, text) in chunks.iter().zip(texts) {
        let known = reuse && old_hashes.contains_key(&chunk.hash);
        if !known && !todo_index.contains_key(&chunk.hash) {
            todo_index.insert(chunk.hash, todo.len());
            todo.push(text.clone());
        }
    }
    // With everything reused, one chunk is still embedded: that is how a model whose
    // vectors changed size is noticed.
    if todo.is_empty()
        && let (Some(chunk), Some(text)) = (chunks.first(), texts.first())
    {
        todo_index.insert(chunk.hash, 0);
        todo.push(text.clone());
    }
    (todo, todo_index)
}

/// Makes a relative file source absolute, so rebuilds work from any directory.
fn absolute_source(source: &str, cwd: &Path) -> String {
    let special = source.contains("://") || source.starts_with("git:") || source.starts_with('~');
    let prefixed = source
        .split_once(':')
        .is_some_and(|(p, _)| p.len() > 1 && !p.contains('/'));
    if special || prefixed || Path::new(source).is_absolute() {
        source.to_string()
    } else {
        cwd.join(source).to_string_lossy().into_owned()
    }
}

/// A stable 64-bit hash of a chunk for `model`.
fn chunk_hash(model: Option<&str>, text: &str) -> u64 {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
    ctx.update(model.unwrap_or("").as_bytes());
    ctx.update(&[0]);
    ctx.update(text.as_bytes());
    let digest = ctx.finish();
    let mut head = [0u8; 8];
    head.copy_from_slice(&digest.as_ref()[..8]);
    u64::from_le_bytes(head)
}

fn file_hash(text: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

async fn run(
    ctx: &BuildContext<'_>,
    name: &str,
    mut meta: RagMeta,
) -> Result<BuildReport, RagError> {
    if meta.document_paths.is_empty() {
        return Err(RagError::NoDocuments {
            name: name.to_string(),
            hint: "give documents with --rag-docs (files, directories, globs, URLs)".into(),
        });
    }
    let docs = load_documents(ctx, name, &meta).await?;
    let mut split = split_documents(name, &docs, &meta)?;
    let previous = Previous::open(ctx, name);
    let old = previous.hashes();
    let mut report = BuildReport {
        path: store::meta_path(ctx.dir, name),
        files: split.files.len(),
        chunks: split.chunks.len(),
        ..BuildReport::default()
    };
    report.reused = split
        .chunks
        .iter()
        .filter(|c| old.contains_key(&c.hash))
        .count();
    report.added = split.chunks.len() - report.reused;
    report.removed = previous.removed(&split.chunks);
    let (vectors, dims) = match meta.embedding_model.clone() {
        Some(id) => {
            let reusable = previous.vectors(meta.embedding_model.as_ref());
            let embedded = Embedding {
                ctx,
                name,
                id: &id,
                batch_size: meta.batch_size,
                old: &old,
            }
            .run(&split, reusable)
            .await?;
            match embedded {
                Embedded::Vectors {
                    vectors,
                    dims,
                    count,
                } => {
                    report.embedded = count;
                    (vectors, dims)
                }
                Embedded::Unreachable(error) => {
                    ctx.progress.report(Step::Warning(format!(
                        "{error}; building a keyword-only (BM25) index instead — rebuild with --rebuild-rag once the model is reachable"
                    )));
                    report.fallback_reason = Some(error.to_string());
                    meta.embedding_model = None;
                    // The hashes include the model: recompute them for the keyword-only index.
                    for (chunk, text) in split.chunks.iter_mut().zip(&split.texts) {
                        chunk.hash = chunk_hash(None, text);
                    }
                    (Vec::new(), 0)
                }
            }
        }
        None => (Vec::new(), 0),
    };
    report.keyword_only = dims == 0;
    meta.files = split.files;
    let text_refs: Vec<&str> = split.texts.iter().map(String::as_str).collect();
    if ctx.cancel.is_cancelled() {
        return Err(RagError::Cancelled);
    }
    store::write(
        ctx.dir,
        name,
        meta,
        NewIndex {
            chunks: split.chunks,
            texts: text_refs,
            vectors,
            dims,
        },
    )?;
    Ok(report)
}

/// Loads every source; a failure names the first one (the others are reported before
/// it), warnings and skipped binary files are reported.
async fn load_documents(
    ctx: &BuildContext<'_>,
    name: &str,
    meta: &RagMeta,
) -> Result<Vec<loaders::LoadedDoc>, RagError> {
    let loaded = loaders::load_all(
        &meta.document_paths,
        ctx.cwd,
        &ctx.loaders,
        ctx.progress,
        &ctx.cancel,
    )
    .await?;
    if let Some(first) = loaded.failures.first() {
        let more = loaded.failures.len() - 1;
        for other in &loaded.failures[1..] {
            ctx.progress.report(Step::Warning(other.to_string()));
        }
        return Err(RagError::Load {
            source_name: match first {
                RagError::Load { source_name, .. } => source_name.clone(),
                _ => name.to_string(),
            },
            message: format!(
                "{}{}; RAG `{name}` was not changed",
                match first {
                    RagError::Load { message, .. } => message.clone(),
                    other => other.to_string(),
                },
                if more > 0 {
                    format!(" (and {more} more failure(s))")
                } else {
                    String::new()
                }
            ),
        });
    }
    for warning in &loaded.warnings {
        ctx.progress.report(Step::Warning(warning.clone()));
    }
    if !loaded.skipped.is_empty() {
        ctx.progress.report(Step::Note(format!(
            "skipped {} binary file(s) (configure a document loader for them): {}",
            loaded.skipped.len(),
            loaded.skipped.join(", ")
        )));
    }
    if loaded.docs.is_empty() {
        return Err(RagError::NoDocuments {
            name: name.to_string(),
            hint: "the sources hold no text files".into(),
        });
    }
    Ok(loaded.docs)
}

/// The documents split into chunks: the files, the chunks and their texts.
struct Split {
    files: Vec<FileEntry>,
    chunks: Vec<ChunkInfo>,
    texts: Vec<String>,
}

fn split_documents(
    name: &str,
    docs: &[loaders::LoadedDoc],
    meta: &RagMeta,
) -> Result<Split, RagError> {
    let model_id = meta.embedding_model.as_deref();
    let mut split = Split {
        files: Vec::with_capacity(docs.len()),
        chunks: Vec::new(),
        texts: Vec::new(),
    };
    for doc in docs {
        let pieces = splitter::split(
            &doc.text,
            Language::from_extension(&doc.extension),
            meta.chunk_size,
            meta.chunk_overlap,
        );
        let file = u32::try_from(split.files.len()).unwrap_or(u32::MAX);
        split.files.push(FileEntry {
            path: doc.path.clone(),
            hash: file_hash(&doc.text),
            chunks: pieces.len(),
        });
        for piece in pieces {
            split.chunks.push(ChunkInfo {
                file,
                start_line: piece.start_line,
                end_line: piece.end_line,
                hash: chunk_hash(model_id, &piece.text),
                ..ChunkInfo::default()
            });
            split.texts.push(piece.text);
        }
    }
    if split.chunks.is_empty() {
        return Err(RagError::NoDocuments {
            name: name.to_string(),
            hint: "the documents hold no text".into(),
        });
    }
    Ok(split)
}

/// What the previous index of the knowledge base has, if one can be read.
struct Previous(Option<KnowledgeBase>);

impl Previous {
    fn open(ctx: &BuildContext<'_>, name: &str) -> Self {
        Self(match KnowledgeBase::open(ctx.dir, name) {
            Ok(kb) => match kb.index() {
                Ok(_) => Some(kb),
                Err(e) => {
                    ctx.progress
                        .report(Step::Warning(format!("{e}; building from scratch")));
                    None
                }
            },
            Err(_) => None,
        })
    }

    fn index(&self) -> Option<&store::Index> {
        self.0.as_ref().and_then(|kb| kb.index().ok())
    }

    /// Its chunks by hash.
    fn hashes(&self) -> HashMap<u64, usize> {
        self.index()
            .map(|index| {
                index
                    .chunks
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (c.hash, i))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Its chunks that `chunks` no longer has.
    fn removed(&self, chunks: &[ChunkInfo]) -> usize {
        let new: std::collections::HashSet<u64> = chunks.iter().map(|c| c.hash).collect();
        self.index().map_or(0, |index| {
            index
                .chunks
                .iter()
                .filter(|c| !new.contains(&c.hash))
                .count()
        })
    }

    /// Its vectors and their size, when they came from `model`.
    fn vectors(&self, model: Option<&String>) -> Option<(&store::Index, usize)> {
        self.index()
            .filter(|index| {
                !index.vectors.is_empty()
                    && self
                        .0
                        .as_ref()
                        .is_some_and(|kb| kb.meta.embedding_model.as_ref() == model)
            })
            .map(|index| (index, index.vectors.dims))
    }
}

/// Embedding what is new, reusing the previous vectors of unchanged chunks.
struct Embedding<'a, 'b> {
    ctx: &'a BuildContext<'b>,
    name: &'a str,
    id: &'a str,
    batch_size: Option<usize>,
    old: &'a HashMap<u64, usize>,
}

/// What embedding gave.
enum Embedded {
    /// One vector per chunk, in order, and how many chunks were sent to the model.
    Vectors {
        vectors: Vec<f32>,
        dims: usize,
        count: usize,
    },
    /// The model could not be reached and nothing can be reused: keyword-only.
    Unreachable(RagError),
}

impl Embedding<'_, '_> {
    async fn run(
        &self,
        split: &Split,
        mut reusable: Option<(&store::Index, usize)>,
    ) -> Result<Embedded, RagError> {
        let (ctx, chunks, texts) = (self.ctx, &split.chunks, &split.texts);
        let model = ctx.registry.resolve(self.id, ModelKind::Embedding)?;
        let provider = ctx.registry.provider(&model.client).ok_or_else(|| {
            RagError::ModelId(crate::client::registry::ModelError::UnknownClient {
                id: model.id(),
                client: model.client.clone(),
                available: ctx.registry.client_names().join(", "),
            })
        })?;
        let mut embedder = Embedder::new(Arc::clone(&provider), model, self.batch_size);
        embedder.retries = ctx.retries;
        let (mut todo, mut todo_index) = pending(chunks, texts, reusable.is_some(), self.old);
        let mut outcome = embedder
            .embed_documents(&todo, ctx.progress, &ctx.cancel)
            .await;
        // Nothing changed and only the size check failed (the model is offline, say):
        // the kept vectors still serve, so the rebuild goes on without the check.
        let nothing_new =
            reusable.is_some() && chunks.iter().all(|c| self.old.contains_key(&c.hash));
        if nothing_new
            && let Err((error, _)) = &outcome
            && !matches!(error, RagError::Cancelled)
        {
            ctx.progress.report(Step::Warning(format!(
                "{error}; the documents did not change, so the index keeps its vectors (their size was not checked)"
            )));
            todo.clear();
            todo_index.clear();
            outcome = Ok(Vec::new());
        }
        // The model's vectors changed size (another model version, a `dimensions`
        // setting): the kept vectors cannot be mixed with the new ones, so every chunk
        // is embedded again.
        if let (Ok(fresh), Some((_, old_dims))) = (&outcome, reusable)
            && let Some(new_dims) = fresh.first().map(Vec::len)
            && new_dims != old_dims
        {
            ctx.progress.report(Step::Note(format!(
                "`{}` now returns {new_dims}-dimensional vectors; the index has {old_dims}: embedding every chunk again",
                self.id
            )));
            reusable = None;
            (todo, todo_index) = pending(chunks, texts, false, self.old);
            outcome = embedder
                .embed_documents(&todo, ctx.progress, &ctx.cancel)
                .await;
        }
        match outcome {
            Ok(fresh) => {
                let dims = fresh
                    .first()
                    .map(Vec::len)
                    .or_else(|| reusable.map(|(_, dims)| dims))
                    .unwrap_or(0);
                let vectors = self.assemble(chunks, &fresh, &todo_index, reusable, dims)?;
                Ok(Embedded::Vectors {
                    vectors,
                    dims,
                    count: todo.len(),
                })
            }
            Err((RagError::Cancelled, _)) => Err(RagError::Cancelled),
            Err((error, cause)) => {
                let unreachable = matches!(
                    cause,
                    Some(ProviderError::Connect { .. } | ProviderError::Timeout { .. })
                );
                if !unreachable || reusable.is_some() {
                    return Err(self.unchanged(error));
                }
                Ok(Embedded::Unreachable(error))
            }
        }
    }

    /// One vector per chunk: the fresh one, or the previous index's for a chunk it has.
    fn assemble(
        &self,
        chunks: &[ChunkInfo],
        fresh: &[Vec<f32>],
        todo_index: &HashMap<u64, usize>,
        reusable: Option<(&store::Index, usize)>,
        dims: usize,
    ) -> Result<Vec<f32>, RagError> {
        let mut vectors = Vec::with_capacity(chunks.len() * dims);
        for chunk in chunks {
            let reused;
            let v: &[f32] = match todo_index.get(&chunk.hash) {
                Some(&i) => &fresh[i],
                None => match (reusable, self.old.get(&chunk.hash)) {
                    (Some((index, _)), Some(&old)) => {
                        reused = index.vector(old).unwrap_or_default();
                        &reused
                    }
                    _ => &[],
                },
            };
            if v.len() != dims {
                return Err(RagError::Model {
                    what: "embedding",
                    model: self.id.to_string(),
                    message: format!("vectors of different sizes ({} and {dims})", v.len()),
                });
            }
            vectors.extend_from_slice(v);
        }
        Ok(vectors)
    }

    /// A model error, saying the knowledge base was left as it was.
    fn unchanged(&self, error: RagError) -> RagError {
        match error {
            RagError::Model {
                what,
                model,
                message,
            } => RagError::Model {
                what,
                model,
                message: format!("{message}; RAG `{}` was not changed", self.name),
            },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_become_absolute_except_urls_and_loaders() {
        let cwd = Path::new("/w");
        assert_eq!(absolute_source("docs/a.md", cwd), "/w/docs/a.md");
        assert_eq!(absolute_source("/x/y", cwd), "/x/y");
        assert_eq!(absolute_source("https://h/a/**", cwd), "https://h/a/**");
        assert_eq!(absolute_source("pdf:a.pdf", cwd), "pdf:a.pdf");
        assert_eq!(absolute_source("**/*.md", cwd), "/w/**/*.md");
        assert_ne!(chunk_hash(Some("a"), "x"), chunk_hash(None, "x"));
    }
}
