//! What one sandbox enforces, in the form the wrapper process receives it: the mode, the
//! directories commands may write, the paths they may not read, and whether they may
//! reach the network. Paths are made absolute and canonical here, once, by loki; the
//! wrapper only applies them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::SandboxMode;

/// Files and directories below the home directory that hold credentials: out of reach
/// of every sandboxed command whatever the mode (short of `danger-full-access`).
const HOME_SECRETS: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".config/hub",
    ".npmrc",
    ".yarnrc",
    ".pypirc",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".gem/credentials",
    ".password-store",
    ".local/share/keyrings",
    ".vault-token",
    ".terraform.d/credentials.tfrc.json",
    ".config/op",
    ".pgpass",
    ".my.cnf",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".bash_history",
    ".zsh_history",
    ".local/share/fish/fish_history",
    ".python_history",
    ".psql_history",
    ".mysql_history",
    ".node_repl_history",
];

/// What the wrapper enforces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Policy {
    /// `read-only` or `workspace-write` (`danger-full-access` never reaches the wrapper).
    pub mode: SandboxMode,
    /// Directories below which commands may create, change and delete (canonical; the
    /// private temporary directory is always one).
    pub writable: Vec<PathBuf>,
    /// Paths commands may not read (canonical, existing when the policy was made).
    pub deny_read: Vec<PathBuf>,
    /// Whether commands may reach the network.
    pub network: bool,
    /// The private temporary directory (`TMPDIR`).
    pub temp: PathBuf,
    /// Use user namespaces (else Landlock and seccomp only).
    #[serde(default = "yes")]
    pub namespaces: bool,
    /// When set, commands may read only below these (and the writable directories)
    /// rather than everywhere but `deny_read` (`loki --serve`: the system's programs and
    /// libraries, and `api.tools.root`).
    #[serde(default)]
    pub readable: Option<Vec<PathBuf>>,
}

fn yes() -> bool {
    true
}

/// What a server's commands may read besides its root: the system's programs, libraries
/// and configuration.
pub const SYSTEM_READ: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix",
    "/proc", "/sys",
];

/// Paths found only when the policy is first needed (walking the working tree for the
/// files a glob `Read(…)` rule names).
pub type LaterPaths = Box<dyn Fn() -> Vec<PathBuf> + Send + Sync>;

/// What a policy is made from.
#[derive(Default)]
pub struct PolicyInput {
    /// The working directory (writable in `workspace-write`).
    pub cwd: PathBuf,
    /// More directories commands may write (`--add-dir`, `additional_directories`,
    /// `sandbox.writable`).
    pub writable: Vec<PathBuf>,
    /// More paths they may not read (`sandbox.deny_read`, `Read(…)` deny rules, loki's
    /// own directories and files).
    pub deny_read: Vec<PathBuf>,
    /// More denied paths, found when the policy is first needed.
    pub deny_later: Option<LaterPaths>,
    /// `sandbox.network`.
    pub network: bool,
    /// The user's home directory, whose credential files are denied.
    pub home: Option<PathBuf>,
    /// Reads held to the system's directories and the writable ones ([`SYSTEM_READ`]).
    pub reads_held: bool,
    /// `sandbox.namespaces: false` turns the namespaces layer off.
    pub no_namespaces: bool,
}

impl std::fmt::Debug for PolicyInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyInput")
            .field("cwd", &self.cwd)
            .field("writable", &self.writable)
            .field("deny_read", &self.deny_read)
            .field("network", &self.network)
            .finish_non_exhaustive()
    }
}

impl Policy {
    /// The policy of `mode` for `input`, writing temporary files into `temp`.
    pub fn new(mode: SandboxMode, input: &PolicyInput, temp: &Path) -> Self {
        let mut writable = vec![canonical(temp)];
        if mode != SandboxMode::ReadOnly {
            writable.push(canonical(&input.cwd));
            writable.extend(input.writable.iter().map(|p| canonical(p)));
        }
        dedup_nested(&mut writable);
        let later = input.deny_later.as_ref().map(|f| f()).unwrap_or_default();
        let mut deny_read: Vec<PathBuf> = input
            .home
            .iter()
            .flat_map(|home| HOME_SECRETS.iter().map(move |s| home.join(s)))
            .chain(input.deny_read.iter().cloned())
            .chain(later)
            .filter_map(|p| std::fs::canonicalize(p).ok())
            // A denied directory that holds a writable one (the user works inside
            // `~/.config/loki`) gives way; the specific files listed with it stay denied.
            .filter(|denied| !writable.iter().any(|w| w.starts_with(denied)))
            .collect();
        deny_read.sort();
        deny_read.dedup();
        // A path below a denied directory is denied with it.
        let all = deny_read.clone();
        deny_read.retain(|p| !all.iter().any(|other| other != p && p.starts_with(other)));
        let readable = input.reads_held.then(|| {
            SYSTEM_READ
                .iter()
                .map(PathBuf::from)
                .filter(|p| p.exists())
                .chain(std::iter::once(canonical(&input.cwd)))
                .collect()
        });
        Self {
            mode,
            writable,
            deny_read,
            network: input.network,
            temp: canonical(temp),
            namespaces: !input.no_namespaces,
            readable,
        }
    }

    /// Whether commands may write `path` (absolute).
    pub fn may_write(&self, path: &Path) -> bool {
        self.writable.iter().any(|w| path.starts_with(w)) && self.may_read(path)
    }

    /// Whether commands may read `path` (absolute).
    pub fn may_read(&self, path: &Path) -> bool {
        let within = self.readable.as_ref().is_none_or(|roots| {
            roots
                .iter()
                .chain(&self.writable)
                .any(|r| path.starts_with(r))
        });
        within && !self.deny_read.iter().any(|d| path.starts_with(d))
    }
}

/// `path` with links resolved, or as given when it does not exist (yet).
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Keeps only the outermost of nested directories.
fn dedup_nested(dirs: &mut Vec<PathBuf>) {
    dirs.sort();
    dirs.dedup();
    let all = dirs.clone();
    dirs.retain(|d| !all.iter().any(|other| other != d && d.starts_with(other)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writable_roots_and_denied_paths_are_canonical_and_minimal() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let home = root.join("home");
        let work = home.join("work");
        std::fs::create_dir_all(work.join("sub")).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::create_dir_all(home.join(".config/loki")).unwrap();
        std::fs::write(home.join(".config/loki/config.yaml"), "").unwrap();
        std::fs::write(work.join(".env"), "").unwrap();
        let temp = root.join("tmp");
        std::fs::create_dir(&temp).unwrap();
        let deny = [
            home.join(".config/loki"),
            home.join(".config/loki/config.yaml"),
            work.join(".env"),
            home.join("missing"),
        ];
        let input = PolicyInput {
            cwd: work.clone(),
            writable: vec![work.join("sub")],
            deny_read: deny.to_vec(),
            home: Some(home.clone()),
            ..PolicyInput::default()
        };
        let policy = Policy::new(SandboxMode::WorkspaceWrite, &input, &temp);
        assert_eq!(policy.writable, [home.join("work"), temp.clone()]);
        assert_eq!(
            policy.deny_read,
            [
                home.join(".config/loki"),
                home.join(".ssh"),
                work.join(".env")
            ]
        );
        assert!(policy.may_write(&work.join("a.txt")));
        assert!(!policy.may_write(&work.join(".env")));
        assert!(!policy.may_read(&home.join(".ssh/id_ed25519")));
        assert!(policy.may_read(&home.join("notes.txt")));
        let read_only = Policy::new(SandboxMode::ReadOnly, &input, &temp);
        assert_eq!(read_only.writable, std::slice::from_ref(&temp));

        // Working inside loki's config directory: the directory gives way, its config
        // file stays denied.
        let inside = PolicyInput {
            cwd: home.join(".config/loki"),
            ..input
        };
        let policy = Policy::new(SandboxMode::WorkspaceWrite, &inside, &temp);
        assert!(
            policy
                .deny_read
                .contains(&home.join(".config/loki/config.yaml"))
        );
        assert!(!policy.deny_read.contains(&home.join(".config/loki")));
    }
}
