//! The vault's questions on a terminal: its passphrase ([`TerminalUnlock`], the front
//! ends' [`Unlock`]) and a secret's value for `--add-secret` / `.vault add`.

use std::io::{IsTerminal, Read};

use crate::config::TerminalCaps;
use crate::vault::{Access, SecretString, Unlock, VaultError};

/// Asks for the vault passphrase at a masked prompt when stdin and stderr are terminals;
/// otherwise the vault stays locked with [`VaultError::NoPassword`].
#[derive(Debug, Clone, Copy)]
pub struct TerminalUnlock {
    interactive: bool,
}

impl TerminalUnlock {
    /// Prompts on the terminal `caps` describes, if someone can answer there.
    pub fn new(caps: &TerminalCaps) -> Self {
        Self {
            interactive: caps.interactive(),
        }
    }
}

impl Unlock for TerminalUnlock {
    fn passphrase(&self, _access: &Access, creating: bool) -> Result<SecretString, VaultError> {
        if !self.interactive {
            return Err(VaultError::NoPassword);
        }
        let mut prompt = inquire::Password::new(if creating {
            "New vault password:"
        } else {
            "Vault password:"
        })
        .with_display_mode(inquire::PasswordDisplayMode::Masked);
        if creating {
            prompt = prompt
                .with_custom_confirmation_message("Repeat the vault password:")
                .with_custom_confirmation_error_message("The passwords differ.")
                .with_validator(|typed: &str| {
                    Ok(if typed.chars().count() >= 8 {
                        inquire::validator::Validation::Valid
                    } else {
                        inquire::validator::Validation::Invalid("Use at least 8 characters.".into())
                    })
                });
        } else {
            prompt = prompt.without_confirmation();
        }
        let typed = prompt
            .prompt()
            .map_err(|e| VaultError::Prompt(e.to_string()))?;
        Ok(SecretString::from(typed))
    }
}

/// A secret value: a masked prompt on a terminal, else all of stdin (one trailing
/// newline dropped).
pub fn read_value_cli(name: &str) -> Result<String, VaultError> {
    if std::io::stdin().is_terminal() {
        return prompt_value(name);
    }
    let mut text = String::new();
    std::io::stdin()
        .read_to_string(&mut text)
        .map_err(|source| VaultError::Io {
            path: "stdin".into(),
            source,
        })?;
    let value = text
        .strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .unwrap_or(&text);
    if value.is_empty() {
        return Err(VaultError::EmptyValue(name.to_string()));
    }
    Ok(value.to_string())
}

/// A secret value typed at a masked prompt.
pub fn prompt_value(name: &str) -> Result<String, VaultError> {
    let value = inquire::Password::new("Enter the secret value:")
        .with_help_message(name)
        .with_display_mode(inquire::PasswordDisplayMode::Masked)
        .without_confirmation()
        .prompt()
        .map_err(|e| VaultError::Prompt(e.to_string()))?;
    if value.is_empty() {
        return Err(VaultError::EmptyValue(name.to_string()));
    }
    Ok(value)
}
