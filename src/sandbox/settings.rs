//! The sandbox as configured: `sandbox:` in config.yaml, a role or an agent, `--sandbox`,
//! `--add-dir` and `.sandbox`.
//!
//! ```yaml
//! sandbox: workspace-write          # read-only | workspace-write | danger-full-access
//! # or
//! sandbox:
//!   mode: workspace-write
//!   network: false                  # commands may reach the network
//!   namespaces: true                # false: Landlock and seccomp only
//!   writable: [~/.cargo/registry]   # more directories commands may write
//!   deny_read: [~/work/secrets]     # more paths commands may not read
//! ```

use serde::{Deserialize, Deserializer, Serialize};

/// How far what a model runs may reach; ordered from the tightest.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "kebab-case")]
pub enum SandboxMode {
    /// Reads; writes only the private temporary directory.
    ReadOnly,
    /// Also writes below the working directory and the added directories.
    #[default]
    WorkspaceWrite,
    /// No sandbox.
    DangerFullAccess,
}

impl SandboxMode {
    /// Every mode, tightest first.
    pub const ALL: [Self; 3] = [Self::ReadOnly, Self::WorkspaceWrite, Self::DangerFullAccess];

    /// `read-only`, `workspace-write`, `danger-full-access` (underscores accepted).
    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().replace('_', "-").as_str() {
            "read-only" => Some(Self::ReadOnly),
            "workspace-write" => Some(Self::WorkspaceWrite),
            "danger-full-access" => Some(Self::DangerFullAccess),
            _ => None,
        }
    }

    /// Its name in config and commands.
    pub fn name(self) -> &'static str {
        match self {
            Self::ReadOnly => "read-only",
            Self::WorkspaceWrite => "workspace-write",
            Self::DangerFullAccess => "danger-full-access",
        }
    }

    /// The tighter of the two: what a sub-agent, a role or a hook may ask for at most.
    pub fn tighter(self, other: Self) -> Self {
        self.min(other)
    }
}

impl std::fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `sandbox:` as written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxSettings {
    /// The mode; none: `workspace-write` where the system can confine, else no sandbox.
    pub mode: Option<SandboxMode>,
    /// Commands may reach the network.
    pub network: bool,
    /// Use user namespaces (`false`: Landlock and seccomp only, for systems where they
    /// misbehave).
    pub namespaces: bool,
    /// More directories commands may write (`~` expanded when used).
    pub writable: Vec<String>,
    /// More paths commands may not read.
    pub deny_read: Vec<String>,
}

impl Default for SandboxSettings {
    fn default() -> Self {
        Self {
            mode: None,
            network: false,
            namespaces: true,
            writable: Vec::new(),
            deny_read: Vec::new(),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    #[serde(default)]
    mode: Option<String>,
    #[serde(default)]
    network: bool,
    #[serde(default)]
    namespaces: Option<bool>,
    #[serde(default, alias = "writable_roots")]
    writable: Vec<String>,
    #[serde(default)]
    deny_read: Vec<String>,
}

/// A `sandbox` setting naming no mode loki has.
#[derive(Debug, thiserror::Error)]
#[error("unknown sandbox mode `{0}` (read-only, workspace-write or danger-full-access)")]
struct UnknownMode(String);

fn mode(name: &str) -> Result<SandboxMode, UnknownMode> {
    SandboxMode::parse(name).ok_or_else(|| UnknownMode(name.to_string()))
}

impl<'de> Deserialize<'de> for SandboxSettings {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Either {
            Mode(String),
            Full(Written),
        }
        let either = Option::<Either>::deserialize(deserializer).map_err(|_| {
            serde::de::Error::custom(
                "expected a mode (read-only, workspace-write, danger-full-access) or a map with \
                 mode, network, namespaces, writable and deny_read",
            )
        })?;
        match either {
            None => Ok(Self::default()),
            Some(Either::Mode(name)) => Ok(Self {
                mode: Some(mode(&name).map_err(serde::de::Error::custom)?),
                ..Self::default()
            }),
            Some(Either::Full(written)) => Ok(Self {
                mode: written
                    .mode
                    .as_deref()
                    .map(mode)
                    .transpose()
                    .map_err(serde::de::Error::custom)?,
                network: written.network,
                namespaces: written.namespaces.unwrap_or(true),
                writable: written.writable,
                deny_read: written.deny_read,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_mode_names_the_known_ones() {
        let error = serde_yaml::from_str::<SandboxSettings>("strict").unwrap_err();
        assert!(
            error.to_string().contains(
                "unknown sandbox mode `strict` (read-only, workspace-write or danger-full-access)"
            ),
            "{error}"
        );
    }

    #[test]
    fn modes_order_from_the_tightest_and_parse_both_spellings() {
        assert_eq!(
            SandboxMode::DangerFullAccess.tighter(SandboxMode::ReadOnly),
            SandboxMode::ReadOnly
        );
        assert_eq!(
            SandboxMode::parse("workspace_write"),
            Some(SandboxMode::WorkspaceWrite)
        );
        assert_eq!(SandboxMode::parse("off"), None);
    }

    #[test]
    fn settings_are_a_mode_or_a_map() {
        let none: SandboxSettings = serde_yaml::from_str("null").unwrap();
        assert_eq!(none, SandboxSettings::default());
        let short: SandboxSettings = serde_yaml::from_str("read-only").unwrap();
        assert_eq!(short.mode, Some(SandboxMode::ReadOnly));
        let full: SandboxSettings =
            serde_yaml::from_str("{mode: workspace-write, network: true, writable: [/x]}").unwrap();
        assert_eq!(full.mode, Some(SandboxMode::WorkspaceWrite));
        assert!(full.network);
        assert_eq!(full.writable, ["/x"]);
        let bad = serde_yaml::from_str::<SandboxSettings>("{mode: wide-open}");
        assert!(bad.is_err());
        let typo = serde_yaml::from_str::<SandboxSettings>("{netwrok: true}");
        assert!(typo.is_err());
    }
}
