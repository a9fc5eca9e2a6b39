//! The vault from the command line (`--add-secret`, `--get-secret`, `--list-secrets`, …):
//! the operation is [`crate::vault::commands`]'s; this prints its outcome.

use std::io::{IsTerminal, Write};

use crate::config::{Env, Paths};
use crate::render::sanitize;
use crate::vault::commands::{Op, Outcome, access, perform, read_value_cli};

/// Runs `op` from the command line; the result line goes to stderr, a secret to stdout.
pub fn run(op: Op, paths: &Paths, env: &Env) -> anyhow::Result<u8> {
    let access = access(paths, env);
    let outcome = perform(&op, &access, read_value_cli)?;
    let stdout_tty = std::io::stdout().is_terminal();
    match outcome {
        Outcome::Value(value) => {
            writeln!(
                std::io::stdout().lock(),
                "{}",
                sanitize::for_terminal(&value, stdout_tty)
            )?;
        }
        Outcome::Names(names) => {
            if names.is_empty() {
                writeln!(std::io::stderr().lock(), "The vault is empty.")?;
            }
            let mut out = std::io::stdout().lock();
            for name in names {
                writeln!(out, "{}", sanitize::for_terminal(&name, stdout_tty))?;
            }
        }
        Outcome::Done(line) => writeln!(std::io::stderr().lock(), "{line}")?,
    }
    Ok(0)
}
