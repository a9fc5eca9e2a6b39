//! What loki exchanges with the outside, as bytes and types: the streamed body's
//! read-and-decode loop ([`body_stream`]), SSE framing ([`sse`]), the events a provider's
//! stream decodes to ([`provider_event`]), the OpenAI chat-completions chunk types and
//! their decoder ([`openai_wire`]), the conversation messages ([`message`]), the session
//! file with its JSON cache ([`session_file`]) and its YAML writer ([`session_yaml`]),
//! JSON encoding of request bodies and parsing of streamed events ([`json`]), error bodies
//! as one line ([`error_text`]), the terminal sanitiser every untrusted byte passes
//! through ([`sanitize`]), the registry of known secret values and their redaction
//! ([`secrets`]), and the character-based token estimate ([`token_estimate`]).
//!
//! Owns: formats and their (de)serialisers, with no configuration, state or I/O of its
//! own beyond reading a body it is handed. Does not own: who is called, when, or what is
//! done with an answer (loki's `client`, `engine`, `session`, `render`).
//!
//! A crate because it is the layer every driver and provider shares (what codex-rs keeps
//! in its protocol crates), and because it is built at `opt-level = 3` while loki is built
//! for size: generic code (every serde (de)serialiser) is compiled in the crate that names
//! the concrete types, so the types live here with the functions that instantiate their
//! code (docs/architecture.md, docs/benchmarks.md).

pub mod body_stream;
pub mod error_text;
pub mod json;
pub mod message;
pub mod openai_wire;
pub mod provider_event;
pub mod sanitize;
pub mod secrets;
pub mod session_file;
pub mod session_yaml;
pub mod sse;
pub mod token_estimate;
