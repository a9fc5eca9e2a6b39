//! Which loki session an SDK run works in, and the id the program knows it by.
//!
//! Claude Code's session ids are UUIDs the program may choose (`--session-id`); loki's
//! session names may not be UUID-shaped (those are its own ids), so a chosen id `U` is
//! kept as the session `sdk-U` and reported as `U`. `--resume U` finds it again, as does
//! `loki -s sdk-U`. A run given neither gets a new `sdk-<time>-<hex>`, reported as is.

use std::path::Path;

use crate::conversation::catalog;
use crate::state::AppState;

use super::flags::ClaudeOptions;

/// The prefix of the loki sessions SDK runs make.
const PREFIX: &str = "sdk-";

/// A run's session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Chosen {
    /// Loki's name for it (`-s NAME`).
    pub name: String,
    /// What the program sees as `session_id`.
    pub id: String,
}

impl Chosen {
    /// The session stored as `name`, with the id the program knows it by.
    fn named(name: String) -> Self {
        let id = name
            .strip_prefix(PREFIX)
            .filter(|rest| is_uuid(rest))
            .map_or_else(|| name.clone(), str::to_string);
        Self { name, id }
    }
}

/// `--resume ID` (the session of that name, or the one `--session-id ID` made), else with
/// `--continue` the newest session started in `cwd` (a new one when there is none), else
/// `--session-id UUID` (which must be new), else a new `sdk-<time>-<hex>`.
pub(super) async fn choose(
    state: &AppState,
    options: &ClaudeOptions,
    cwd: &Path,
) -> anyhow::Result<Chosen> {
    if let Some(id) = &options.resume {
        if options.session_id.is_some() {
            tracing::info!("claude sdk: --session-id with --resume: the resumed session is kept");
        }
        for name in [id.clone(), format!("{PREFIX}{id}")] {
            if catalog::stored_session(state, &name).await?.is_some() {
                return Ok(Chosen {
                    name,
                    id: id.clone(),
                });
            }
        }
        anyhow::bail!("--resume: no session `{id}`");
    }
    if options.continue_last
        && let Some(name) = catalog::newest_session_in(state, cwd).await?
    {
        return Ok(Chosen::named(name));
    }
    if let Some(id) = &options.session_id {
        if !is_uuid(id) {
            anyhow::bail!("--session-id: `{id}` is not a UUID");
        }
        let name = format!("{PREFIX}{id}");
        if catalog::stored_session(state, &name).await?.is_some() {
            anyhow::bail!("--session-id: session {id} is already in use");
        }
        return Ok(Chosen {
            name,
            id: id.clone(),
        });
    }
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Ok(Chosen::named(format!(
        "{PREFIX}{}-{:04x}",
        now.as_secs(),
        fastrand::u16(..)
    )))
}

/// Whether `text` is a hyphenated UUID.
fn is_uuid(text: &str) -> bool {
    text.len() == 36 && uuid::Uuid::try_parse(text).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chosen_uuid_is_reported_without_the_prefix() {
        let uuid = "0b6e5b1c-6f0a-4c8e-9a55-1d2f3e4a5b6c";
        let chosen = Chosen::named(format!("sdk-{uuid}"));
        assert_eq!(chosen.id, uuid);
        assert_eq!(chosen.name, format!("sdk-{uuid}"));
        let old = Chosen::named("sdk-1700000000-00ab".into());
        assert_eq!(old.id, "sdk-1700000000-00ab");
        assert!(!is_uuid("sdk-1700000000-00ab") && is_uuid(uuid));
    }
}
