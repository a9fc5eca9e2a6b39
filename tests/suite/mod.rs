//! Integration suites, one file per capability.

mod cli_fixes;
mod client_security;
mod compression;
mod config;
mod embeddings;
mod errors;
mod execute;
mod input;
mod mcp;
mod oauth;
mod oneshot;
mod providers;
mod rag;
mod render_fixes;
mod repl;
mod repl_fixes;
mod roles;
mod session_safety;
mod sessions;
mod shell;
mod terminal;
mod terminal_safety;
mod tool_safety;
mod tools;
mod typing;
mod untrusted_input;
