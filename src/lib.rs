//! loki: a command-line and REPL client for large language models.
//!
//! Layout (dependencies point down): front ends (`cli`) → `engine` → services (`client`)
//! with `config`, `state` and `context` read by all. `render` is used only by front ends.
//! See `docs/architecture.md`.

// Defined before the modules so every one of them can use it.
/// `Debug` for a type holding secrets: only the listed fields are shown.
macro_rules! debug_without_secrets {
    ($type:ty, $($field:ident),+) => {
        impl std::fmt::Debug for $type {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($type))
                    $(.field(stringify!($field), &self.$field))+
                    .finish_non_exhaustive()
            }
        }
    };
}

pub mod acp;
pub mod agent;
pub mod agents_md;
pub mod app;
pub mod atomic_file;
pub mod checkpoint;
pub mod claude_names;
pub mod claude_sdk;
pub mod cli;
pub mod client;
pub mod config;
pub mod conversation;
pub mod dotcmd;
pub mod error;
pub mod files;
#[doc(hidden)]
pub mod fuzzing;
pub mod hooks;
pub mod input;
pub mod jsonrpc;
pub mod logging;
pub mod lsp;
pub mod macros;
pub mod mcp;
pub mod mcp_serve;
pub mod memory;
pub mod mention;
pub mod origin;
pub mod output_schema;
pub mod process_group;
pub mod prompt_tags;
pub mod rag;
pub mod render;
pub mod repl;
pub mod role;
pub mod sandbox;
pub mod server;
pub mod session;
pub mod shell_syntax;
pub mod shell_words;
pub mod signals;
pub mod skill;
pub mod state;
pub mod term;
#[cfg(test)]
mod test_support;
pub mod tokens;
pub mod tool;
pub mod usage;
pub mod vault;

pub use app::main_entry;
