//! The little-endian encoding of a knowledge base's index file, and why reading one fails.
//! Read whole when a knowledge base's index is loaded and written when it is built.

/// Why an index file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// It ends too early.
    #[error("the index file is truncated")]
    Truncated,
    /// Its trailer does not add up.
    #[error("the index file is truncated or not a loki index")]
    NotAnIndex,
    /// Its structure is inconsistent.
    #[error("{0}")]
    Corrupt(&'static str),
    /// A text in it is not UTF-8.
    #[error("{0} is not UTF-8")]
    NotUtf8(&'static str),
    /// No chunk of that number.
    #[error("no such chunk")]
    NoSuchChunk,
    /// A reader panicked while holding the file.
    #[error("index file lock poisoned")]
    Poisoned,
    /// It does not match its YAML.
    #[error("{0}")]
    Mismatch(String),
    /// Reading it failed.
    #[error("{0}")]
    Io(String),
}

impl IndexError {
    /// An I/O failure, as text.
    pub fn io(e: impl std::fmt::Display) -> Self {
        Self::Io(e.to_string())
    }
}

impl From<IndexError> for String {
    fn from(e: IndexError) -> Self {
        e.to_string()
    }
}

/// Little-endian binary output.
#[derive(Debug, Default)]
pub struct ByteWriter(Vec<u8>);

impl ByteWriter {
    /// Bytes as they are.
    pub fn raw(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
    /// A `u32`.
    pub fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A `u64`.
    pub fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    /// A length-prefixed string.
    pub fn str(&mut self, s: &str) {
        self.u32(u32::try_from(s.len()).unwrap_or(u32::MAX));
        self.raw(s.as_bytes());
    }
    /// Many `u32`s.
    pub fn u32s(&mut self, v: &[u32]) {
        self.0.reserve(v.len() * 4);
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
    }
    /// Many `u16`s.
    pub fn u16s(&mut self, v: &[u16]) {
        self.0.reserve(v.len() * 2);
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
    }
    /// Many `f32`s.
    pub fn f32s(&mut self, v: &[f32]) {
        self.0.reserve(v.len() * 4);
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
    }
    /// Bytes written so far.
    pub fn len(&self) -> usize {
        self.0.len()
    }
    /// True when nothing was written.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    /// The bytes.
    pub fn into_inner(self) -> Vec<u8> {
        self.0
    }
}

/// Little-endian binary input; every read checks the length.
#[derive(Debug)]
pub struct ByteReader<'a> {
    bytes: &'a [u8],
}

impl<'a> ByteReader<'a> {
    /// Reads from `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes }
    }
    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.bytes.len()
    }
    /// The next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> Result<&'a [u8], IndexError> {
        if self.bytes.len() < n {
            return Err(IndexError::Truncated);
        }
        let (head, tail) = self.bytes.split_at(n);
        self.bytes = tail;
        Ok(head)
    }
    /// A `u32`.
    pub fn u32(&mut self) -> Result<u32, IndexError> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A `u64`.
    pub fn u64(&mut self) -> Result<u64, IndexError> {
        let b = self.bytes(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    /// A length-prefixed string.
    pub fn str(&mut self) -> Result<String, IndexError> {
        let n = self.u32()? as usize;
        String::from_utf8(self.bytes(n)?.to_vec()).map_err(|_| IndexError::NotUtf8("a term"))
    }
    /// `n` `u32`s.
    pub fn u32s(&mut self, n: usize) -> Result<Vec<u32>, IndexError> {
        let b = self.bytes(n.checked_mul(4).ok_or(IndexError::Corrupt("too large"))?)?;
        Ok(b.chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
    /// `n` `u16`s.
    pub fn u16s(&mut self, n: usize) -> Result<Vec<u16>, IndexError> {
        let b = self.bytes(n.checked_mul(2).ok_or(IndexError::Corrupt("too large"))?)?;
        Ok(b.chunks_exact(2)
            .map(|c| u16::from_le_bytes([c[0], c[1]]))
            .collect())
    }
    /// `n` `f32`s.
    pub fn f32s(&mut self, n: usize) -> Result<Vec<f32>, IndexError> {
        let b = self.bytes(n.checked_mul(4).ok_or(IndexError::Corrupt("too large"))?)?;
        Ok(b.chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}
