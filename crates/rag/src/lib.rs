//! What a knowledge base runs per chunk and per vector: splitting text into chunks
//! ([`splitter`]), the keyword index ([`bm25`]), vectors and their scan ([`vector`]), and
//! the index file's encoding ([`index_bytes`]).
//!
//! Owns: pure, in-memory code over text, vectors and bytes. Does not own: knowledge bases
//! themselves (files, loaders, embedding calls, search settings, the store on disk),
//! which are `loki::rag`'s. A crate of its own because it is a concept with no I/O and
//! because it is built at `opt-level = 3` while loki is built for size (a search scans
//! every vector; docs/benchmarks.md).

pub mod bm25;
pub mod index_bytes;
mod kernels;
pub mod splitter;
pub mod vector;
