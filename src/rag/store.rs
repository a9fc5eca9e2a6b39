//! A knowledge base on disk: `rags/<name>.yaml` (settings, documents, files and their
//! hashes; human-readable) and `rags/<name>.index/<generation>.bin` (chunk table, vectors,
//! BM25 index, chunk texts).
//!
//! A build writes a new index file under a fresh generation name, then the YAML that
//! points to it (both atomically), then removes older index files. The YAML is the commit
//! point: until it is replaced, the previous index stays in use, so a killed or failed build
//! loses nothing.
//!
//! Opening a knowledge base reads only the YAML. The index is read on the first search
//! (one bulk read of the tables, no per-record parsing of vectors), and chunk texts are
//! read one by one, only for the chunks a search returns.
//!
//! Index layout (little-endian): `LOKIRAG1`, chunk count, dimensions; per chunk its file,
//! first and last line, content hash, text offset and length; the vectors; the BM25 index;
//! then the texts; and a trailer with the texts' offset and length and `LOKIEND1`.

use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde::{Deserialize, Serialize};

use super::RagError;
use loki_rag::bm25::Bm25;
use loki_rag::index_bytes::{ByteReader, ByteWriter, IndexError};
use loki_rag::vector::Vectors;

const MAGIC: &[u8; 8] = b"LOKIRAG1";
const END_MAGIC: &[u8; 8] = b"LOKIEND1";
const TRAILER: u64 = 24;
const CHUNK_RECORD: usize = 4 * 3 + 8 * 2 + 4;

/// `rags/<name>.yaml`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RagMeta {
    /// `client:model` that embedded the chunks; none for a keyword-only (BM25) index.
    pub embedding_model: Option<String>,
    /// Vector dimensions (0 without embeddings).
    pub dimensions: usize,
    /// Chunk size in tokens.
    pub chunk_size: usize,
    /// Tokens shared by neighbouring chunks.
    pub chunk_overlap: usize,
    /// Reranker model (`.set rag_reranker_model`); none: reciprocal rank fusion only.
    pub reranker_model: Option<String>,
    /// Chunks retrieved per question.
    pub top_k: usize,
    /// Texts per embeddings request (none: the model's `max_batch_size`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub batch_size: Option<usize>,
    /// The documents as given: paths, globs, URLs, `loader:resource`.
    pub document_paths: Vec<String>,
    /// Chunks in the index.
    pub chunks: usize,
    /// The index file, relative to `rags/<name>.index/`.
    pub index_file: String,
    /// Every loaded file.
    pub files: Vec<FileEntry>,
    /// Read from a knowledge base Loki or AIChat built (settings and documents only):
    /// it has no index until rebuilt.
    #[serde(skip)]
    pub legacy: bool,
}

/// What loki takes from a knowledge base file of Loki or AIChat (`files` a map of
/// numbered entries, the vectors inside the YAML): its settings and its documents.
#[derive(Debug, Deserialize)]
struct LegacyMeta {
    embedding_model: Option<String>,
    chunk_size: Option<usize>,
    chunk_overlap: Option<usize>,
    reranker_model: Option<String>,
    top_k: Option<usize>,
    batch_size: Option<usize>,
    #[serde(default)]
    document_paths: Vec<String>,
    /// Only its shape is looked at: a map marks the old format.
    #[allow(dead_code)]
    files: serde_yaml::Mapping,
}

impl LegacyMeta {
    /// Settings and documents to rebuild from; no index.
    fn adopted(self) -> RagMeta {
        let chunk_size = self
            .chunk_size
            .unwrap_or(crate::rag::build::DEFAULT_CHUNK_SIZE);
        RagMeta {
            embedding_model: self.embedding_model,
            chunk_size,
            chunk_overlap: self.chunk_overlap.unwrap_or(chunk_size / 20),
            reranker_model: self.reranker_model,
            top_k: self.top_k.unwrap_or(5),
            batch_size: self.batch_size,
            document_paths: self.document_paths,
            legacy: true,
            ..RagMeta::default()
        }
    }
}

/// One loaded document.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Path or URL.
    pub path: String,
    /// SHA-256 of its text.
    pub hash: String,
    /// Chunks taken from it.
    pub chunks: usize,
}

/// One chunk's place in its document and in the index file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ChunkInfo {
    /// Index into [`RagMeta::files`].
    pub file: u32,
    /// First line (1-based).
    pub start_line: u32,
    /// Last line.
    pub end_line: u32,
    /// Hash of the chunk's text (and the embedding model), for reuse on rebuilds.
    pub hash: u64,
    /// Offset of the text in the texts section.
    pub text_offset: u64,
    /// Length of the text in bytes.
    pub text_len: u32,
}

/// The searchable part of an index, read on first use.
#[derive(Debug)]
pub struct Index {
    /// Chunk table.
    pub chunks: Vec<ChunkInfo>,
    /// Normalised vectors (empty for keyword-only indexes).
    pub vectors: Vectors,
    /// Keyword index.
    pub bm25: Bm25,
    vectors_start: u64,
    texts_start: u64,
    file: Mutex<std::fs::File>,
}

impl Index {
    /// The stored vector of chunk `id` (from memory, or from the file when only codes are
    /// held).
    pub fn vector(&self, id: usize) -> Result<Vec<f32>, IndexError> {
        if !self.vectors.is_quantized() {
            return Ok(self.vectors.get(id).to_vec());
        }
        let dims = self.vectors.dims;
        let mut buf = vec![0u8; dims * 4];
        let mut file = self.file.lock().map_err(|_| IndexError::Poisoned)?;
        file.seek(SeekFrom::Start(self.vectors_start + (id * dims * 4) as u64))
            .and_then(|_| file.read_exact(&mut buf))
            .map_err(IndexError::io)?;
        Ok(buf
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    /// The `limit` chunks most similar to `query`: exact, or candidates from the 8-bit
    /// codes re-scored with the stored vectors.
    pub fn vector_search(&self, query: &[f32], limit: usize) -> Vec<(u32, f32)> {
        if !self.vectors.is_quantized() {
            return self.vectors.search(query, limit);
        }
        let mut hits: Vec<(u32, f32)> = self
            .vectors
            .search(query, (limit * 4).max(64))
            .into_iter()
            .map(|(id, approx)| match self.vector(id as usize) {
                Ok(v) => (id, loki_rag::vector::dot(query, &v)),
                Err(_) => (id, approx),
            })
            .collect();
        loki_rag::vector::top_k(&mut hits, limit);
        hits
    }

    /// Reads the text of chunk `id`.
    pub fn text(&self, id: usize) -> Result<String, IndexError> {
        let chunk = self.chunks.get(id).ok_or(IndexError::NoSuchChunk)?;
        let mut buf = vec![0u8; chunk.text_len as usize];
        let mut file = self.file.lock().map_err(|_| IndexError::Poisoned)?;
        file.seek(SeekFrom::Start(self.texts_start + chunk.text_offset))
            .and_then(|_| file.read_exact(&mut buf))
            .map_err(IndexError::io)?;
        String::from_utf8(buf).map_err(|_| IndexError::NotUtf8("chunk text"))
    }
}

/// A saved knowledge base.
#[derive(Debug)]
pub struct KnowledgeBase {
    /// Its name.
    pub name: String,
    /// Its settings and files.
    pub meta: RagMeta,
    /// `rags/<name>.yaml`.
    pub meta_path: PathBuf,
    stamp: Option<(std::time::SystemTime, u64)>,
    index: OnceLock<Result<Index, IndexError>>,
}

/// `rags/<name>.yaml`.
pub fn meta_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.yaml"))
}

/// `rags/<name>.index/`.
pub fn index_dir(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{name}.index"))
}

fn stamp(path: &Path) -> Option<(std::time::SystemTime, u64)> {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.modified().ok()?, meta.len()))
}

/// Reads `rags/<name>.yaml`.
pub fn read_meta(dir: &Path, name: &str) -> Result<RagMeta, RagError> {
    let path = meta_path(dir, name);
    let text = match crate::atomic_file::read_regular_text(&path, crate::atomic_file::MAX_OWN_FILE)
    {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(RagError::Unknown {
                name: name.to_string(),
            });
        }
        Err(e) => return Err(RagError::io(&path, &e)),
    };
    serde_yaml::from_str(&text).or_else(|e| {
        // Loki's and AIChat's own format: adopted for a rebuild.
        match serde_yaml::from_str::<LegacyMeta>(&text) {
            Ok(legacy) => Ok(legacy.adopted()),
            Err(_) => Err(RagError::CorruptSettings {
                name: name.to_string(),
                path: path.display().to_string(),
                message: e.to_string(),
            }),
        }
    })
}

/// Writes `rags/<name>.yaml` atomically.
pub fn write_meta(dir: &Path, name: &str, meta: &RagMeta) -> Result<(), RagError> {
    let path = meta_path(dir, name);
    let yaml = serde_yaml::to_string(meta).map_err(|e| RagError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    crate::atomic_file::write_atomic(&path, yaml.as_bytes(), true)
        .map_err(|e| RagError::io(&path, &e))
}

/// Removes index files of `name` other than `keep` (and leftover temporary files).
pub fn remove_index_files(dir: &Path, name: &str, keep: Option<&str>) {
    let index_dir = index_dir(dir, name);
    for entry in std::fs::read_dir(&index_dir)
        .into_iter()
        .flatten()
        .flatten()
    {
        let file = entry.file_name();
        if Some(file.to_string_lossy().as_ref()) != keep {
            let _ = std::fs::remove_file(entry.path());
        }
    }
    if keep.is_none() {
        let _ = std::fs::remove_dir(&index_dir);
    }
}

impl KnowledgeBase {
    /// Opens `name` (reads its YAML only; the index is read on first use).
    pub fn open(dir: &Path, name: &str) -> Result<Self, RagError> {
        let meta = read_meta(dir, name)?;
        if meta.legacy {
            return Err(RagError::Legacy {
                name: name.to_string(),
            });
        }
        let meta_path = meta_path(dir, name);
        // `index_file` names a file in the knowledge base's own `<name>.index/`: a path
        // elsewhere (`../../x`, `/etc/passwd`) or a link out of it is refused.
        let own_name = {
            let mut parts = Path::new(&meta.index_file).components();
            matches!(
                (parts.next(), parts.next()),
                (Some(std::path::Component::Normal(_)), None)
            )
        };
        let index_path = index_dir(dir, name).join(&meta.index_file);
        if !own_name {
            return Err(RagError::Corrupt {
                name: name.to_string(),
                path: meta_path.display().to_string(),
                message: format!(
                    "index_file `{}` is not a file name in {}",
                    meta.index_file,
                    index_dir(dir, name).display()
                ),
            });
        }
        let regular = std::fs::symlink_metadata(&index_path).is_ok_and(|m| m.is_file());
        if !regular {
            return Err(RagError::Corrupt {
                name: name.to_string(),
                path: index_path.display().to_string(),
                message: "the index file is missing (or not a regular file)".into(),
            });
        }
        Ok(Self {
            name: name.to_string(),
            stamp: stamp(&meta_path),
            meta_path,
            meta,
            index: OnceLock::new(),
        })
    }

    /// Whether the YAML on disk is still the one this was opened from.
    pub fn is_current(&self) -> bool {
        stamp(&self.meta_path) == self.stamp
    }

    /// The index file.
    pub fn index_path(&self) -> PathBuf {
        let dir = self.meta_path.parent().unwrap_or(Path::new("."));
        index_dir(dir, &self.name).join(&self.meta.index_file)
    }

    /// The index, read on first use.
    pub fn index(&self) -> Result<&Index, RagError> {
        let loaded = self
            .index
            .get_or_init(|| read_index(&self.index_path(), &self.meta));
        loaded.as_ref().map_err(|message| RagError::Corrupt {
            name: self.name.clone(),
            path: self.index_path().display().to_string(),
            message: message.to_string(),
        })
    }

    /// `path:start-end` of chunk `id`.
    pub fn locate(&self, chunk: &ChunkInfo) -> String {
        let path = self
            .meta
            .files
            .get(chunk.file as usize)
            .map_or("?", |f| f.path.as_str());
        if chunk.start_line == chunk.end_line {
            format!("{path}:{}", chunk.start_line)
        } else {
            format!("{path}:{}-{}", chunk.start_line, chunk.end_line)
        }
    }
}

fn read_index(path: &Path, meta: &RagMeta) -> Result<Index, IndexError> {
    let mut file = std::fs::File::open(path).map_err(IndexError::io)?;
    let size = file.metadata().map_err(IndexError::io)?.len();
    if size < TRAILER + MAGIC.len() as u64 {
        return Err(IndexError::Truncated);
    }
    let mut trailer = [0u8; TRAILER as usize];
    file.seek(SeekFrom::Start(size - TRAILER))
        .and_then(|_| file.read_exact(&mut trailer))
        .map_err(IndexError::io)?;
    let mut t = ByteReader::new(&trailer);
    let texts_start = t.u64()?;
    let texts_len = t.u64()?;
    if t.bytes(8)? != END_MAGIC || texts_start.checked_add(texts_len) != Some(size - TRAILER) {
        return Err(IndexError::NotAnIndex);
    }
    let mut head = vec![0u8; usize::try_from(texts_start).map_err(IndexError::io)?];
    file.seek(SeekFrom::Start(0))
        .and_then(|_| file.read_exact(&mut head))
        .map_err(IndexError::io)?;
    let mut r = ByteReader::new(&head);
    if r.bytes(8)? != MAGIC {
        return Err(IndexError::Corrupt("not a loki index (bad magic)"));
    }
    let n = r.u32()? as usize;
    let dims = r.u32()? as usize;
    if n != meta.chunks || dims != meta.dimensions {
        return Err(IndexError::Mismatch(format!(
            "the index holds {n} chunks of {dims} dimensions, the YAML says {} of {}",
            meta.chunks, meta.dimensions
        )));
    }
    let table = r.bytes(
        n.checked_mul(CHUNK_RECORD)
            .ok_or(IndexError::Corrupt("too many chunks"))?,
    )?;
    let mut chunks = Vec::with_capacity(n);
    let mut t = ByteReader::new(table);
    for _ in 0..n {
        let chunk = ChunkInfo {
            file: t.u32()?,
            start_line: t.u32()?,
            end_line: t.u32()?,
            hash: t.u64()?,
            text_offset: t.u64()?,
            text_len: t.u32()?,
        };
        if chunk.file as usize >= meta.files.len()
            || chunk.text_offset + u64::from(chunk.text_len) > texts_len
        {
            return Err(IndexError::Corrupt("a chunk points outside the index"));
        }
        chunks.push(chunk);
    }
    let values = n
        .checked_mul(dims)
        .ok_or(IndexError::Corrupt("too many vectors"))?;
    let vectors_start = (head.len() - r.remaining()) as u64;
    let vectors = if n > loki_rag::vector::QUANTIZE_ABOVE && dims > 0 {
        let bytes = r.bytes(
            values
                .checked_mul(4)
                .ok_or(IndexError::Corrupt("too many vectors"))?,
        )?;
        Vectors::quantized_from_le_bytes(bytes, dims)
    } else {
        Vectors {
            dims,
            data: r.f32s(values)?,
            ..Vectors::default()
        }
    };
    let bm25 = Bm25::read(&mut r)?;
    if bm25.len() != n {
        return Err(IndexError::Corrupt(
            "the keyword index does not match the chunks",
        ));
    }
    Ok(Index {
        chunks,
        vectors,
        vectors_start,
        bm25,
        texts_start,
        file: Mutex::new(file),
    })
}

/// Everything a new index file holds.
pub struct NewIndex<'a> {
    /// Chunk table (text offsets are filled in here).
    pub chunks: Vec<ChunkInfo>,
    /// Chunk texts, in chunk order.
    pub texts: Vec<&'a str>,
    /// `dims` normalised values per chunk, or empty.
    pub vectors: Vec<f32>,
    /// Dimensions (0: none).
    pub dims: usize,
}

/// Writes a new index file and then `meta` pointing to it; removes the old index files.
pub fn write(
    dir: &Path,
    name: &str,
    mut meta: RagMeta,
    new: NewIndex<'_>,
) -> Result<RagMeta, RagError> {
    let NewIndex {
        mut chunks,
        texts,
        vectors,
        dims,
    } = new;
    let bm25 = Bm25::build(&mut texts.iter().copied());
    let mut w = ByteWriter::default();
    w.raw(MAGIC);
    w.u32(u32::try_from(chunks.len()).unwrap_or(u32::MAX));
    w.u32(u32::try_from(dims).unwrap_or(u32::MAX));
    let mut offset = 0u64;
    for (chunk, text) in chunks.iter_mut().zip(&texts) {
        chunk.text_offset = offset;
        chunk.text_len = u32::try_from(text.len()).unwrap_or(u32::MAX);
        offset += text.len() as u64;
        w.u32(chunk.file);
        w.u32(chunk.start_line);
        w.u32(chunk.end_line);
        w.u64(chunk.hash);
        w.u64(chunk.text_offset);
        w.u32(chunk.text_len);
    }
    w.f32s(&vectors);
    bm25.write(&mut w);
    let texts_start = w.len() as u64;
    for text in &texts {
        w.raw(text.as_bytes());
    }
    w.u64(texts_start);
    w.u64(offset);
    w.raw(END_MAGIC);

    let generation = format!("{:016x}.bin", fastrand::u64(..));
    let index_path = index_dir(dir, name).join(&generation);
    crate::atomic_file::write_atomic(&index_path, &w.into_inner(), true)
        .map_err(|e| RagError::io(&index_path, &e))?;
    meta.index_file = generation.clone();
    meta.chunks = chunks.len();
    meta.dimensions = dims;
    if let Err(e) = write_meta(dir, name, &meta) {
        let _ = std::fs::remove_file(&index_path);
        return Err(e);
    }
    remove_index_files(dir, name, Some(&generation));
    Ok(meta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_reads_and_detects_damage() {
        let dir = tempfile::tempdir().unwrap();
        let meta = RagMeta {
            files: vec![FileEntry {
                path: "a.md".into(),
                hash: "h".into(),
                chunks: 2,
            }],
            top_k: 3,
            ..RagMeta::default()
        };
        let chunks = vec![
            ChunkInfo {
                start_line: 1,
                end_line: 2,
                hash: 7,
                ..ChunkInfo::default()
            },
            ChunkInfo {
                start_line: 3,
                end_line: 3,
                hash: 8,
                ..ChunkInfo::default()
            },
        ];
        let written = write(
            dir.path(),
            "kb",
            meta,
            NewIndex {
                chunks,
                texts: vec!["alpha beta", "gamma délta"],
                vectors: vec![1.0, 0.0, 0.0, 1.0],
                dims: 2,
            },
        )
        .unwrap();
        assert_eq!(written.chunks, 2);
        let kb = KnowledgeBase::open(dir.path(), "kb").unwrap();
        let index = kb.index().unwrap();
        assert_eq!(index.text(1).unwrap(), "gamma délta");
        assert_eq!(index.vectors.get(1), &[0.0, 1.0]);
        assert_eq!(kb.locate(&index.chunks[0]), "a.md:1-2");
        assert_eq!(index.bm25.search("gamma", 1)[0].0, 1);

        // Large indexes hold 8-bit codes and re-score candidates from the file.
        let n = loki_rag::vector::QUANTIZE_ABOVE + 1;
        let mut rng = fastrand::Rng::with_seed(1);
        let mut vectors = Vec::new();
        for _ in 0..n {
            let mut v: Vec<f32> = (0..8).map(|_| rng.f32() - 0.5).collect();
            loki_rag::vector::normalize(&mut v);
            vectors.extend(v);
        }
        let texts: Vec<String> = (0..n).map(|i| format!("t{i}")).collect();
        let big_meta = RagMeta {
            files: vec![FileEntry::default()],
            ..RagMeta::default()
        };
        write(
            dir.path(),
            "big",
            big_meta,
            NewIndex {
                chunks: vec![ChunkInfo::default(); n],
                texts: texts.iter().map(String::as_str).collect(),
                vectors: vectors.clone(),
                dims: 8,
            },
        )
        .unwrap();
        let big = KnowledgeBase::open(dir.path(), "big").unwrap();
        let index = big.index().unwrap();
        assert!(index.vectors.is_quantized() && index.vectors.data.is_empty());
        assert_eq!(index.vector(12345).unwrap(), vectors[12345 * 8..12346 * 8]);
        let hits = index.vector_search(&vectors[999 * 8..1000 * 8], 3);
        assert_eq!(hits[0].0, 999);
        assert!(
            (hits[0].1 - 1.0).abs() < 1e-5,
            "exactly re-scored: {hits:?}"
        );
        assert_eq!(index.text(20000).unwrap(), "t20000");

        // A truncated index is reported, not used.
        let path = kb.index_path();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 3]).unwrap();
        let kb = KnowledgeBase::open(dir.path(), "kb").unwrap();
        let err = kb.index().unwrap_err().to_string();
        assert!(
            err.contains("damaged") && err.contains("--rebuild-rag"),
            "{err}"
        );
    }
}
