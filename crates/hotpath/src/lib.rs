//! The code loki runs per byte, token and message, and on every start, kept in a crate of
//! its own so that it is built at `opt-level = 3` while the rest of loki is built for size.
//!
//! Owns: the streamed body's read-and-decode loop ([`body_stream`]), SSE framing
//! ([`sse`]), the decoded events ([`provider_event`]), the chat-completions chunk types
//! and their decoder ([`openai_wire`]), the conversation messages ([`message`]), the
//! session file with its JSON cache ([`session_file`]) and its writer ([`session_yaml`]),
//! JSON encoding of request bodies and parsing of streamed events ([`json`]), error
//! bodies as one line ([`error_text`]), terminal sanitising ([`sanitize`]) and wrapping
//! ([`wrap`]), the command-line arguments ([`cli_args`]), which clap builds and parses on
//! every start, the token estimate ([`token_estimate`]), and the per-chunk and per-vector
//! code of knowledge bases ([`rag`]: splitting, BM25, the vector scan, the index file's
//! encoding).
//! Does not own: anything that needs loki's configuration, state or I/O; loki re-exports
//! these modules where its code names them (`loki::client::message`, …).
//!
//! Why a crate: Cargo's optimisation level is per crate, and generic code (every serde
//! (de)serialiser, every hasher, clap's derive) is compiled in the crate that names its
//! concrete types. So the types live here together with non-generic functions that
//! instantiate their code, and loki calls those functions (docs/architecture.md, "Two
//! crates"; docs/benchmarks.md).

pub mod body_stream;
pub mod cli_args;
pub mod error_text;
pub mod json;
pub mod message;
pub mod openai_wire;
pub mod provider_event;
pub mod rag;
pub mod sanitize;
pub mod session_file;
pub mod session_yaml;
pub mod sse;
pub mod token_estimate;
pub mod wrap;
