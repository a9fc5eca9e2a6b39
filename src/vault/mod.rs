//! The vault: named secrets encrypted at rest in one file, `<config_dir>/vault.age`.
//!
//! The file is an ASCII-armoured [age](https://age-encryption.org) file encrypted to a
//! passphrase (age's scrypt recipient). Its plaintext is a YAML mapping of secret names to
//! values, so `age -d vault.age` with the same passphrase shows every secret; nothing here
//! is home-made cryptography. One file for all secrets, as the reference keeps
//! `vault.yml`: a start-up that resolves several `{{NAME}}` placeholders pays for one
//! scrypt derivation, not one per secret, and the names are encrypted too.
//!
//! The passphrase comes from `vault_password_file` (read as it is, one trailing newline
//! dropped), else from the front end's [`Unlock`] (a masked prompt on a terminal). The
//! vault a process uses is a [`Keyring`] in its `AppState`: no process-wide vault. Writes go through
//! [`crate::atomic_file`] with mode 0600; a wrong passphrase or a damaged file is one line
//! and leaves the file untouched. Every value read from the vault is registered with
//! [`loki_wire::secrets`], so it is redacted wherever loki writes.

mod age_file;
pub mod commands;
mod crypt;
mod password;
mod placeholders;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub use secrecy::SecretString;

pub use password::{exposure_warning, password_file_from_text};
pub use placeholders::{Resolved, placeholder_names, resolve_env, substitute};

use crate::config::{Env, Paths};

/// The vault file's name in the config directory.
pub const VAULT_FILE: &str = crate::config::paths::VAULT_FILE;

/// Why a vault operation failed; each is one line for the user.
#[derive(Debug, thiserror::Error)]
pub enum VaultError {
    /// The passphrase does not open the file.
    #[error("wrong vault password for {0} (the vault was left unchanged)")]
    WrongPassword(PathBuf),
    /// The file is not an age file loki can read.
    #[error("{path} is damaged or not a loki vault ({reason}); the file was left unchanged")]
    Corrupted {
        /// The vault file.
        path: PathBuf,
        /// What was wrong.
        reason: String,
    },
    /// The file asks for more key-derivation work than loki ever writes (not written by
    /// loki, or changed since).
    #[error(
        "{path} asks for scrypt work 2^{log_n}, above loki's limit of 2^{max} (loki writes 2^{written}); it was not written by loki or was changed, and was left unchanged"
    )]
    ExcessiveWork {
        /// The vault file.
        path: PathBuf,
        /// The file's work factor.
        log_n: u8,
        /// The most loki accepts.
        max: u8,
        /// What loki writes.
        written: u8,
    },
    /// No passphrase source: no password file and no terminal.
    #[error(
        "the vault needs its password: set `vault_password_file` in config.yaml (or LOKI_VAULT_PASSWORD_FILE); it is asked for only when stdin and stderr are both a terminal"
    )]
    NoPassword,
    /// `vault_password_file` contains a `{{…}}` placeholder.
    #[error(
        "`vault_password_file` cannot use a {{{{…}}}} placeholder (the vault password cannot come from the vault); give a plain path"
    )]
    PlaceholderInPasswordFile,
    /// The password file does not exist.
    #[error(
        "the vault password file '{0}' does not exist; create it (mode 0600) with the password on one line, or unset `vault_password_file` (config.yaml or LOKI_VAULT_PASSWORD_FILE)"
    )]
    MissingPasswordFile(PathBuf),
    /// The password file is empty.
    #[error("the vault password file '{0}' is empty; write the vault password into it")]
    EmptyPasswordFile(PathBuf),
    /// No such secret.
    #[error("no secret named '{0}' in the vault (see --list-secrets)")]
    NotFound(String),
    /// `add` of a name that exists.
    #[error("the secret '{0}' is already in the vault; use --update-secret {0} to change it")]
    Exists(String),
    /// A name that cannot be a placeholder.
    #[error("invalid secret name '{0}': use letters, digits and underscores")]
    BadName(String),
    /// Placeholders naming secrets that exist nowhere.
    #[error("{file} references secrets that are in neither the vault nor the environment: {names}")]
    Missing {
        /// The file with the placeholders.
        file: String,
        /// Comma-separated names.
        names: String,
    },
    /// `--add-secret` / `--update-secret` read an empty value.
    #[error(
        "the value of '{0}' is empty: pipe the value on stdin, or type it at the prompt on a terminal"
    )]
    EmptyValue(String),
    /// The passphrase prompt failed or was cancelled.
    #[error("vault password prompt: {0}")]
    Prompt(String),
    /// Reading or writing a file.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

/// Where the vault lives and where its passphrase comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    /// The vault file.
    pub file: PathBuf,
    /// `vault_password_file` as configured (unexpanded), if any.
    pub password_file: Option<String>,
    /// The config directory, for relative password-file paths.
    pub config_dir: PathBuf,
}

impl Access {
    /// The vault in `paths.config_dir`, with `password_file` as configured.
    pub fn new(paths: &Paths, password_file: Option<&str>) -> Self {
        Self {
            file: paths.config_dir.join(VAULT_FILE),
            password_file: password_file.map(str::to_string),
            config_dir: paths.config_dir.clone(),
        }
    }

    /// Whether the vault file exists.
    pub fn exists(&self) -> bool {
        self.file.exists()
    }
}

/// An opened vault: its secrets and the passphrase that opened it.
pub struct Vault {
    access: Access,
    passphrase: SecretString,
    entries: BTreeMap<String, String>,
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vault")
            .field("file", &self.access.file)
            .field("names", &self.entries.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl Vault {
    /// Opens the vault, or starts an empty one when the file does not exist yet (asking
    /// for a new passphrase twice on a terminal). Nothing is written until [`Vault::save`].
    pub fn open(access: &Access, unlock: &dyn Unlock) -> Result<Self, VaultError> {
        let creating = !access.exists();
        let passphrase = password::obtain(access, creating, unlock)?;
        let entries = if creating {
            BTreeMap::new()
        } else {
            let bytes =
                crate::atomic_file::read_regular(&access.file, crate::atomic_file::MAX_OWN_FILE)
                    .map_err(|source| VaultError::Io {
                        path: access.file.clone(),
                        source,
                    })?;
            crypt::decrypt(&bytes, &passphrase, &access.file)?
        };
        for (name, value) in &entries {
            loki_wire::secrets::remember(name, value);
        }
        Ok(Self {
            access: access.clone(),
            passphrase,
            entries,
        })
    }

    /// The secret names, sorted.
    pub fn names(&self) -> Vec<String> {
        self.entries.keys().cloned().collect()
    }

    /// A secret's value.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.entries.get(name).map(String::as_str)
    }

    /// Adds a new secret; `Exists` if the name is taken.
    pub fn add(&mut self, name: &str, value: &str) -> Result<(), VaultError> {
        check_name(name)?;
        if self.entries.contains_key(name) {
            return Err(VaultError::Exists(name.to_string()));
        }
        loki_wire::secrets::remember(name, value);
        self.entries.insert(name.to_string(), value.to_string());
        Ok(())
    }

    /// Replaces an existing secret; `NotFound` if there is none.
    pub fn update(&mut self, name: &str, value: &str) -> Result<(), VaultError> {
        let Some(slot) = self.entries.get_mut(name) else {
            return Err(VaultError::NotFound(name.to_string()));
        };
        loki_wire::secrets::remember(name, value);
        *slot = value.to_string();
        Ok(())
    }

    /// Removes a secret; `NotFound` if there is none.
    pub fn delete(&mut self, name: &str) -> Result<(), VaultError> {
        self.entries
            .remove(name)
            .map(|_| ())
            .ok_or_else(|| VaultError::NotFound(name.to_string()))
    }

    /// Encrypts and writes the vault atomically with mode 0600.
    pub fn save(&self) -> Result<(), VaultError> {
        let text = crypt::encrypt(&self.entries, &self.passphrase)?;
        crate::atomic_file::write_atomic(&self.access.file, text.as_bytes(), true).map_err(
            |source| VaultError::Io {
                path: self.access.file.clone(),
                source,
            },
        )
    }

    /// The vault file.
    pub fn path(&self) -> &Path {
        &self.access.file
    }
}

/// `Ok` when `name` can be written as a `{{NAME}}` placeholder.
pub fn check_name(name: &str) -> Result<(), VaultError> {
    if is_valid_name(name) {
        Ok(())
    } else {
        Err(VaultError::BadName(name.to_string()))
    }
}

/// Letters, digits and underscores, not empty.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Where the passphrase is asked for when no `vault_password_file` gives it: the front
/// end's (a masked prompt on a terminal); a service never asks ([`NoPrompt`]).
pub trait Unlock: Send + Sync {
    /// The passphrase for `access`; `creating` asks for a new one (twice, on a terminal).
    fn passphrase(&self, access: &Access, creating: bool) -> Result<SecretString, VaultError>;
}

/// Never asks: without a password file the vault stays locked with
/// [`VaultError::NoPassword`] (headless runs of a library user, shell completion, tests).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoPrompt;

impl Unlock for NoPrompt {
    fn passphrase(&self, _access: &Access, _creating: bool) -> Result<SecretString, VaultError> {
        Err(VaultError::NoPassword)
    }
}

/// The vault a process (or a library user's `AppState`) uses: where it is, how it is
/// unlocked, and its secrets once opened — so one run asks for the passphrase at most once.
pub struct Keyring {
    access: Access,
    unlock: Box<dyn Unlock>,
    opened: Mutex<Option<Vault>>,
}

impl std::fmt::Debug for Keyring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Keyring")
            .field("access", &self.access)
            .finish_non_exhaustive()
    }
}

impl Keyring {
    /// The vault at `access`, unlocked by its password file or else by `unlock`.
    pub fn new(access: Access, unlock: impl Unlock + 'static) -> Self {
        Self {
            access,
            unlock: Box::new(unlock),
            opened: Mutex::new(None),
        }
    }

    /// The vault of config directory `paths` as config.yaml's raw `text` configures it
    /// (its `vault_password_file`, or `LOKI_VAULT_PASSWORD_FILE`).
    pub fn configured(paths: &Paths, text: &str, env: &Env, unlock: impl Unlock + 'static) -> Self {
        let password_file = password_file_from_text(text, env);
        Self::new(Access::new(paths, password_file.as_deref()), unlock)
    }

    /// Where the vault is and how it is unlocked.
    pub fn access(&self) -> &Access {
        &self.access
    }

    /// Runs `f` on the opened vault, opening it first. A failed `f` keeps the in-memory
    /// copy as it was on disk.
    pub fn with_vault<T>(
        &self,
        f: impl FnOnce(&mut Vault) -> Result<T, VaultError>,
    ) -> Result<T, VaultError> {
        let mut slot = self
            .opened
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(Vault::open(&self.access, self.unlock.as_ref())?);
        }
        let Some(vault) = slot.as_mut() else {
            return Err(VaultError::NoPassword);
        };
        let before = vault.entries.clone();
        let result = f(vault);
        if result.is_err() {
            vault.entries = before;
        }
        result
    }

    /// The names in the vault if it has been opened (Tab completion must never ask for
    /// the password).
    pub fn opened_names(&self) -> Vec<String> {
        self.opened
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .as_ref()
            .map(Vault::names)
            .unwrap_or_default()
    }

    /// The environment for `functions/mcp.json`'s placeholders: vault secrets first. A
    /// vault that cannot be opened is returned as the reason the file cannot be used;
    /// names that exist nowhere are reported per server by the MCP layer.
    pub fn env_for_mcp(&self, text: Option<&str>, env: &Env) -> (Env, Option<VaultError>) {
        let Some(text) = text else {
            return (env.clone(), None);
        };
        match resolve_env(self, text, false, env, None) {
            Ok(Resolved::Overlaid(with_vault)) => (with_vault, None),
            Ok(Resolved::Unchanged) => (env.clone(), None),
            Err(e) => (env.clone(), Some(e)),
        }
    }

    /// The tools' environment with `{{NAME}}` in values (from `functions/.env`) replaced
    /// by vault secrets. Unchanged when no value has a placeholder or there is no vault.
    pub fn resolve_dotenv(&self, vars: Env) -> Result<Env, VaultError> {
        if !vars.pairs().any(|(_, v)| v.contains("{{")) {
            return Ok(vars);
        }
        let mut pairs = Vec::new();
        for (k, v) in vars.pairs() {
            let value = if v.contains("{{") {
                substitute(self, v)?
            } else {
                v.to_string()
            };
            pairs.push((k.to_string(), value));
        }
        Ok(Env::from_pairs(pairs))
    }
}

impl crate::config::load::Secrets for Keyring {
    fn overlay(
        &self,
        text: &str,
        env: &Env,
        label: &str,
    ) -> Result<Option<Env>, crate::config::load::SecretsError> {
        match resolve_env(self, text, true, env, Some(label)) {
            Ok(Resolved::Overlaid(with_vault)) => Ok(Some(with_vault)),
            Ok(Resolved::Unchanged) => Ok(None),
            Err(e) => Err(crate::config::load::SecretsError::new(e)),
        }
    }
}

/// Reads config.yaml with its `{{NAME}}` placeholders resolved from the vault it
/// configures (unlocked by `unlock` when no password file is set); returns the config
/// (`None` without a file) and that vault, for the `AppState`.
pub fn load_config(
    paths: &Paths,
    env: &Env,
    unlock: impl Unlock + 'static,
) -> Result<(Option<crate::config::load::LoadedConfig>, Keyring), crate::config::ConfigError> {
    load_config_resolving(paths, env, unlock, true)
}

/// [`load_config`] for a run that reads no secret (the information commands): with
/// `resolve` false, placeholders are resolved from the environment alone and the vault
/// is not opened — no prompt, no key derivation.
pub fn load_config_resolving(
    paths: &Paths,
    env: &Env,
    unlock: impl Unlock + 'static,
    resolve: bool,
) -> Result<(Option<crate::config::load::LoadedConfig>, Keyring), crate::config::ConfigError> {
    let text = crate::config::load::read(paths)?;
    let keyring = Keyring::configured(paths, text.as_deref().unwrap_or_default(), env, unlock);
    let secrets: &dyn crate::config::load::Secrets = if resolve {
        &keyring
    } else {
        &crate::config::load::NoSecrets
    };
    let loaded = match text {
        Some(text) => Some(crate::config::load::parse_with(
            &text,
            &paths.config_file,
            env,
            secrets,
        )?),
        None => None,
    };
    Ok((loaded, keyring))
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(&'static str);

    impl Unlock for Fixed {
        fn passphrase(
            &self,
            _access: &Access,
            _creating: bool,
        ) -> Result<SecretString, VaultError> {
            Ok(SecretString::from(self.0.to_string()))
        }
    }

    fn paths(dir: &Path) -> Paths {
        let env = Env::from_pairs([("LOKI_CONFIG_DIR", dir.display().to_string())]);
        Paths::resolve(&env)
    }

    #[test]
    fn each_keyring_unlocks_its_own_vault_through_its_front_end() {
        let dir = tempfile::tempdir().unwrap();
        let paths = paths(dir.path());
        let writer = Keyring::new(Access::new(&paths, None), Fixed("correct horse"));
        writer
            .with_vault(|vault| {
                vault.add("TOKEN_A", "value-of-token-a")?;
                vault.save()
            })
            .unwrap();
        assert_eq!(writer.opened_names(), ["TOKEN_A"]);

        // A service's keyring never asks: the vault stays locked, and nothing is shared
        // with the keyring that opened it.
        let service = Keyring::new(Access::new(&paths, None), NoPrompt);
        assert!(service.opened_names().is_empty());
        let locked = service.with_vault(|vault| Ok(vault.names()));
        assert!(matches!(locked, Err(VaultError::NoPassword)), "{locked:?}");

        let wrong = Keyring::new(Access::new(&paths, None), Fixed("wrong password"));
        assert!(matches!(
            wrong.with_vault(|vault| Ok(vault.names())),
            Err(VaultError::WrongPassword(_))
        ));
        let reader = Keyring::new(Access::new(&paths, None), Fixed("correct horse"));
        let vars = Env::from_pairs([("A", "{{TOKEN_A}}"), ("B", "plain")]);
        let resolved = reader.resolve_dotenv(vars).unwrap();
        assert_eq!(resolved.get("A"), Some("value-of-token-a"));
        assert_eq!(resolved.get("B"), Some("plain"));
    }
}
