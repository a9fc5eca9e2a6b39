//! `--add-secret`, `--get-secret`, `--update-secret`, `--delete-secret`, `--list-secrets`
//! and the REPL's `.vault` (same operations, same messages).

use crate::vault::{Keyring, Vault, VaultError};

/// One vault operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Add a new secret.
    Add(String),
    /// Print a secret.
    Get(String),
    /// Replace a secret.
    Update(String),
    /// Remove a secret.
    Delete(String),
    /// List the names.
    List,
}

impl Op {
    /// Parses `.vault <sub> [name]`; `Err` is the usage line.
    pub fn from_repl(args: &str) -> Result<Self, UsageError> {
        let mut words = args.split_whitespace();
        let sub = words.next().unwrap_or_default();
        let name = words.next().map(str::to_string);
        let usage_named = || UsageError::MissingName(sub.to_string());
        match sub {
            "list" => Ok(Self::List),
            "add" => name.map(Self::Add).ok_or_else(usage_named),
            "get" => name.map(Self::Get).ok_or_else(usage_named),
            "update" => name.map(Self::Update).ok_or_else(usage_named),
            "delete" => name.map(Self::Delete).ok_or_else(usage_named),
            _ => Err(UsageError::UnknownCommand),
        }
    }
}

/// `.vault` arguments that name no operation: the usage line to show.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UsageError {
    /// A sub-command that needs a name got none.
    #[error("Usage: .vault {0} <name>")]
    MissingName(String),
    /// No sub-command, or an unknown one.
    #[error("Usage: .vault <add|get|update|delete|list> [name]")]
    UnknownCommand,
}

/// What an operation produced.
#[derive(Debug)]
pub enum Outcome {
    /// A secret's value (`get`).
    Value(String),
    /// Secret names (`list`).
    Names(Vec<String>),
    /// A confirmation line.
    Done(String),
}

/// Performs `op`; `read_value` supplies a new value for add/update.
pub fn perform(
    op: &Op,
    keyring: &Keyring,
    read_value: fn(&str) -> Result<String, VaultError>,
) -> Result<Outcome, VaultError> {
    let access = keyring.access();
    match op {
        Op::List => {
            if !access.exists() {
                return Ok(Outcome::Names(Vec::new()));
            }
            keyring.with_vault(|v| Ok(Outcome::Names(v.names())))
        }
        Op::Get(name) => {
            if !access.exists() {
                return Err(VaultError::NotFound(name.clone()));
            }
            keyring.with_vault(|v| {
                v.get(name)
                    .map(|s| Outcome::Value(s.to_string()))
                    .ok_or_else(|| VaultError::NotFound(name.clone()))
            })
        }
        Op::Add(name) => {
            crate::vault::check_name(name)?;
            keyring.with_vault(|v| {
                if v.get(name).is_some() {
                    return Err(VaultError::Exists(name.clone()));
                }
                store_value(v, name, &read_value(name)?, Vault::add, "added to")
            })
        }
        Op::Update(name) => {
            if !access.exists() {
                return Err(VaultError::NotFound(name.clone()));
            }
            keyring.with_vault(|v| {
                if v.get(name).is_none() {
                    return Err(VaultError::NotFound(name.clone()));
                }
                store_value(v, name, &read_value(name)?, Vault::update, "updated in")
            })
        }
        Op::Delete(name) => {
            if !access.exists() {
                return Err(VaultError::NotFound(name.clone()));
            }
            keyring.with_vault(|v| {
                v.delete(name)?;
                v.save()?;
                Ok(Outcome::Done(format!(
                    "✓ Secret '{name}' deleted from the vault."
                )))
            })
        }
    }
}

/// Values this short are not redacted from output ([`loki_wire::secrets::MIN_SECRET_LEN`]).
/// Puts `value` in the vault as `name` with `put` and saves; `done` says what happened
/// (`added to`, `updated in`).
fn store_value(
    vault: &mut Vault,
    name: &str,
    value: &str,
    put: fn(&mut Vault, &str, &str) -> Result<(), VaultError>,
    done: &str,
) -> Result<Outcome, VaultError> {
    put(vault, name, value)?;
    vault.save()?;
    Ok(Outcome::Done(format!(
        "✓ Secret '{name}' {done} the vault.{}",
        short_note(value)
    )))
}

fn short_note(value: &str) -> String {
    if value.trim().chars().count() < loki_wire::secrets::MIN_SECRET_LEN {
        format!(
            "\nnote: values shorter than {} characters are not redacted from loki's output.",
            loki_wire::secrets::MIN_SECRET_LEN
        )
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repl_arguments() {
        assert_eq!(Op::from_repl("add TOKEN"), Ok(Op::Add("TOKEN".into())));
        assert_eq!(Op::from_repl("list"), Ok(Op::List));
        assert_eq!(
            Op::from_repl("get").unwrap_err().to_string(),
            "Usage: .vault get <name>"
        );
        assert_eq!(
            Op::from_repl("nope").unwrap_err().to_string(),
            "Usage: .vault <add|get|update|delete|list> [name]"
        );
    }
}
