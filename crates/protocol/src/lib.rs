//! The conversation protocol: what a driver (the one-shot CLI, the REPL, the server, ACP,
//! the Agent SDK mode, MCP serving, a parent agent) receives from a conversation.
//!
//! Owns: what a driver sends — an [`op::Op`] (a prompt, a [`command::Command`], an
//! approval's [`op::Decision`], an answer, an interrupt, one tool call) — and the typed
//! replies it gets ([`op::RunOutcome`], [`command::Applied`], [`op::ToolOutcome`]); the
//! event vocabulary ([`event`]: every [`event::Event`] in its [`event::Envelope`], the
//! public schema of `--output-format stream-json`, see `docs/events.md`) and the
//! [`emitter::Emitter`] a driver implements to receive them.
//! Does not own: running anything — loki's `conversation` module takes a driver's ops and
//! emits these events.
//!
//! A crate so that the boundary is the compiler's: a driver sees these types and the
//! conversation handle, nothing of the engine's state.

pub mod command;
pub mod emitter;
pub mod event;
pub mod op;
