//! `{{NAME}}` placeholders: which names a file uses, and an environment snapshot in which
//! the vault's secrets stand before the process environment.

use crate::config::Env;

use super::{Keyring, VaultError, is_valid_name};

/// The valid names in `{{ NAME }}` placeholders of `text`, in order, without repeats.
/// With `skip_comments`, lines starting with `#` are ignored (YAML comments).
pub fn placeholder_names(text: &str, skip_comments: bool) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for line in text.lines() {
        if skip_comments && line.trim_start().starts_with('#') {
            continue;
        }
        let mut rest = line;
        while let Some(start) = rest.find("{{") {
            let after = &rest[start + 2..];
            let Some(end) = after.find("}}") else { break };
            let name = after[..end].trim();
            if is_valid_name(name) && !names.iter().any(|n| n == name) {
                names.push(name.to_string());
            }
            rest = &after[end + 2..];
        }
    }
    names
}

/// What [`resolve_env`] found.
#[derive(Debug)]
pub enum Resolved {
    /// No placeholders, or no vault: use the environment as it is.
    Unchanged,
    /// The environment with the vault's secrets laid over it.
    Overlaid(Env),
}

/// For a file whose placeholders are resolved from `env`: when it has placeholders and the
/// vault exists, opens the vault (once per process) and returns `env` with every vault
/// secret laid over it. With `file`, names found in neither are an error naming them all,
/// as long as a vault is in use (without a vault, the old behaviour stands: the consumer
/// reports them).
pub fn resolve_env(
    keyring: &Keyring,
    text: &str,
    skip_comments: bool,
    env: &Env,
    file: Option<&str>,
) -> Result<Resolved, VaultError> {
    let names = placeholder_names(text, skip_comments);
    if names.is_empty() || !keyring.access().exists() {
        return Ok(Resolved::Unchanged);
    }
    let secrets: Vec<(String, String)> = keyring.with_vault(|vault| {
        Ok(vault
            .entries
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect())
    })?;
    let missing: Vec<&str> = names
        .iter()
        .map(String::as_str)
        .filter(|n| env.get(n).is_none() && !secrets.iter().any(|(k, _)| k == n))
        .collect();
    if let Some(file) = file
        && !missing.is_empty()
    {
        return Err(VaultError::Missing {
            file: file.to_string(),
            names: missing.join(", "),
        });
    }
    Ok(Resolved::Overlaid(Env::from_pairs(
        env.pairs()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .chain(secrets),
    )))
}

/// `text` with each `{{NAME}}` naming a vault secret replaced by its value (other
/// placeholders are left). Opens the vault only when a placeholder is present and the
/// vault exists.
pub fn substitute(keyring: &Keyring, text: &str) -> Result<String, VaultError> {
    if placeholder_names(text, false).is_empty() || !keyring.access().exists() {
        return Ok(text.to_string());
    }
    keyring.with_vault(|vault| {
        let vault: &super::Vault = vault;
        Ok(crate::config::env::replace_placeholders(
            text,
            move |name| vault.get(name),
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_skip_comments_and_invalid_names() {
        let text = "a: '{{ KEY }}'\n# b: {{HIDDEN}}\nc: {{bad name}} {{KEY}} {{OTHER}}";
        assert_eq!(placeholder_names(text, true), ["KEY", "OTHER"]);
        assert_eq!(placeholder_names(text, false), ["KEY", "HIDDEN", "OTHER"]);
    }
}
