//! The one-shot front end and its siblings that are not the REPL: the one-shot run as
//! text or headless JSON (`oneshot`, `headless`), the shell assistant (`execute`), the
//! information commands (`listing`, `info`), the first-run wizard, and the arguments.
//! The process entry and the choice between them is in [`crate::app`].

pub mod args;
mod build_tools;
mod claude_json;
pub(crate) mod complete;
pub mod execute;
pub mod flags;
pub mod headless;
mod info;
pub mod init;
pub mod listing;
pub mod macro_run;
mod menu;
pub mod oneshot;
pub(crate) mod rag;
pub mod resume;
pub mod rewind;
pub mod run_tool;
pub(crate) mod stdin_json;
mod structured;
mod sync_models;
pub mod vault;
pub(crate) mod wizard;
