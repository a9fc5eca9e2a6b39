//! Where the vault passphrase comes from: `vault_password_file`, else the front end's
//! [`Unlock`] (a masked prompt on a terminal), else a clear error.

use std::path::PathBuf;

use secrecy::SecretString;

use super::{Access, Unlock, VaultError};

/// `vault_password_file:` from the raw text of config.yaml, before any `{{…}}` is
/// resolved (the key itself can never use one). `LOKI_VAULT_PASSWORD_FILE` wins.
pub fn password_file_from_text(text: &str, env: &crate::config::Env) -> Option<String> {
    if let Some(value) = env.get("LOKI_VAULT_PASSWORD_FILE") {
        return Some(value.to_string());
    }
    text.lines().find_map(|line| {
        let rest = line.strip_prefix("vault_password_file")?.trim_start();
        let value = rest.strip_prefix(':')?;
        let value = value.split(" #").next().unwrap_or(value).trim();
        let value = value
            .strip_prefix('\'')
            .and_then(|v| v.strip_suffix('\''))
            .or_else(|| value.strip_prefix('"').and_then(|v| v.strip_suffix('"')))
            .unwrap_or(value);
        (!value.is_empty() && value != "null" && value != "~").then(|| value.to_string())
    })
}

/// The passphrase for `access`: its password file, else `unlock`'s.
pub(super) fn obtain(
    access: &Access,
    creating: bool,
    unlock: &dyn Unlock,
) -> Result<SecretString, VaultError> {
    match &access.password_file {
        Some(raw) => from_file(access, raw),
        None => unlock.passphrase(access, creating),
    }
}

fn from_file(access: &Access, raw: &str) -> Result<SecretString, VaultError> {
    if raw.contains("{{") {
        return Err(VaultError::PlaceholderInPasswordFile);
    }
    let path = expand(access, raw);
    let text = match crate::atomic_file::read_regular_text(&path, 64 * 1024) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(VaultError::MissingPasswordFile(path));
        }
        Err(source) => return Err(VaultError::Io { path, source }),
    };
    let password = text
        .strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .unwrap_or(&text);
    if password.is_empty() {
        return Err(VaultError::EmptyPasswordFile(path));
    }
    Ok(SecretString::from(password.to_string()))
}

/// A warning when the configured password file can be read by other users: it unlocks
/// every secret, so it should be private (0600) like the files loki writes.
pub fn exposure_warning(access: &Access) -> Option<String> {
    let raw = access.password_file.as_deref()?;
    if raw.contains("{{") {
        return None;
    }
    let path = expand(access, raw);
    let mode = exposed_mode(&path)?;
    Some(format!(
        "vault password file {} can be read by other users (mode {mode:03o}); run `chmod 600 {}`",
        path.display(),
        path.display()
    ))
}

#[cfg(unix)]
fn exposed_mode(path: &std::path::Path) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mode = meta.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then_some(mode)
}

#[cfg(not(unix))]
fn exposed_mode(_path: &std::path::Path) -> Option<u32> {
    None
}

/// `~/x` under the home directory; a relative path under the config directory.
fn expand(access: &Access, raw: &str) -> PathBuf {
    if let Some(rest) = raw.strip_prefix("~/")
        && let Some(home) = dirs::home_dir()
    {
        return home.join(rest);
    }
    let path = PathBuf::from(raw);
    if path.is_relative() {
        access.config_dir.join(path)
    } else {
        path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn password_file_key_is_read_from_raw_text() {
        let env = crate::config::Env::default();
        let text = "model: x\nvault_password_file: '~/.loki-pass' # mine\napi_key: '{{K}}'\n";
        assert_eq!(
            password_file_from_text(text, &env).as_deref(),
            Some("~/.loki-pass")
        );
        assert_eq!(password_file_from_text("model: x\n", &env), None);
        let env = crate::config::Env::from_pairs([("LOKI_VAULT_PASSWORD_FILE", "/p")]);
        assert_eq!(password_file_from_text(text, &env).as_deref(), Some("/p"));
    }
}
