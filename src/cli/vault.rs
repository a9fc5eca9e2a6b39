//! The vault from the command line (`--add-secret`, `--get-secret`, `--list-secrets`, …):
//! the operation is [`crate::vault::commands`]'s; this prints its outcome.

use std::io::Write;

use crate::config::{Env, Paths, TerminalCaps};
use crate::term::vault_prompt::{TerminalUnlock, read_value_cli};
use crate::vault::Keyring;
use crate::vault::commands::{Op, Outcome, perform};
use loki_wire::sanitize;

/// Runs `op` from the command line; the result line goes to stderr, a secret to stdout.
pub fn run(op: Op, paths: &Paths, env: &Env, caps: &TerminalCaps) -> anyhow::Result<u8> {
    // config.yaml's raw text names the password file even when its placeholders cannot
    // be resolved yet (they may name the secret being added).
    let text = crate::config::load::read(paths)
        .ok()
        .flatten()
        .unwrap_or_default();
    let vault = Keyring::configured(paths, &text, env, TerminalUnlock::new(caps));
    if let Some(warning) = crate::vault::exposure_warning(vault.access()) {
        crate::term::report_warning(&crate::render::theme::Theme::stderr(caps), &warning);
    }
    let outcome = perform(&op, &vault, read_value_cli)?;
    let stdout_tty = caps.stdout_tty;
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
