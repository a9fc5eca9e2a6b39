//! Integration suites, one file per capability.

mod client_security;
mod config;
mod embeddings;
mod errors;
mod execute;
mod input;
mod mcp;
mod oauth;
mod oneshot;
mod providers;
mod repl;
mod roles;
mod sessions;
mod shell;
mod terminal;
mod tools;
