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
pub(crate) mod trailing;
pub mod vault;
pub(crate) mod wizard;

use crate::conversation::{Finished, Outside};
use crate::render::theme::Theme;

/// What a finished one-shot command gave; when the work failed or its session was not
/// saved, the error is reported on the terminal and `Err` is the exit status to end with.
fn outcome_or_exit<T>(finished: Finished<T>, theme: &Theme) -> Result<T, u8> {
    let status = finished.exit_status(Outside::default());
    finished.into_result().map_err(|e| {
        crate::term::report_error(theme, &e.to_string());
        status
    })
}
