//! The knowledge-base code that runs per chunk and per vector: splitting text into chunks
//! ([`splitter`]), the keyword index ([`bm25`]), vectors and their scan ([`vector`]), and
//! the index file's encoding ([`index_bytes`]). Knowledge bases themselves — files,
//! embedding, search settings — are `loki::rag`'s, which re-exports these.

pub mod bm25;
pub mod index_bytes;
pub mod splitter;
pub mod vector;
