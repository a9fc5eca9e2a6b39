//! Roles: a Markdown file with optional YAML front matter (model, temperature, top_p,
//! tools) and a prompt, turned into the messages that frame the user's input.
//!
//! Three prompt shapes are understood:
//! * **embedded** — the prompt contains `__INPUT__`; the input is substituted and sent as
//!   one user message;
//! * **few-shot** — `### INPUT:` / `### OUTPUT:` pairs (after optional instructions)
//!   become example user/assistant turns before the input;
//! * **system** — anything else is the system message.
//!
//! Special variables (`{{__os__}}`, `{{__shell__}}`, `{{__now__}}`, …) are filled in when a
//! role is loaded. Built-in roles ship in `assets/roles/` and are written into the roles
//! directory on first run; a user's file of the same name wins.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use loki_wire::message::{Message, Role as MessageRole};

/// The name used for `--prompt` / `.prompt` roles.
pub const TEMP_ROLE: &str = "temp";

/// Built-in roles: `(name, file contents)`.
pub const BUILTIN: &[(&str, &str)] = &[
    ("code", include_str!("../assets/roles/code.md")),
    ("shell", include_str!("../assets/roles/shell.md")),
    (
        "explain-shell",
        include_str!("../assets/roles/explain-shell.md"),
    ),
    (
        "create-title",
        include_str!("../assets/roles/create-title.md"),
    ),
    (
        "create-prompt",
        include_str!("../assets/roles/create-prompt.md"),
    ),
    (
        "commit-message",
        include_str!("../assets/roles/commit-message.md"),
    ),
    ("review", include_str!("../assets/roles/review.md")),
    ("summarize", include_str!("../assets/roles/summarize.md")),
];

/// A role that cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum RoleError {
    /// No user file and no built-in of that name.
    #[error("unknown role `{name}`; see `loki --list-roles`")]
    Unknown {
        /// The name asked for.
        name: String,
    },
    /// The file could not be read.
    #[error("cannot read {}: {message}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// The front matter is not valid YAML.
    #[error("{}: invalid front matter: {message}", path.display())]
    FrontMatter {
        /// The file.
        path: PathBuf,
        /// What serde_yaml said.
        message: String,
    },
}

/// A loaded role.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Role {
    /// Role name (file stem, or `temp`).
    pub name: String,
    /// Preferred model, `client:model`.
    pub model: Option<String>,
    /// Temperature for this role.
    pub temperature: Option<f64>,
    /// Top-p for this role.
    pub top_p: Option<f64>,
    /// Tools this role enables.
    pub enabled_tools: Option<String>,
    /// MCP servers this role enables.
    pub enabled_mcp_servers: Option<String>,
    /// Knowledge base used while the role is active (`rag:` in the front matter).
    pub rag: Option<String>,
    /// The permission mode the role sets when it is taken (`default`, `accept-edits`,
    /// `plan`, `yolo`); in a sub-agent it can only tighten the tree's.
    pub permission_mode: Option<String>,
    /// The sandbox mode the role asks for; it can only tighten the conversation's.
    pub sandbox: Option<String>,
    /// The prompt, with special variables filled in.
    pub prompt: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct FrontMatter {
    name: Option<String>,
    model: Option<String>,
    temperature: Option<f64>,
    top_p: Option<f64>,
    #[serde(alias = "use_tools")]
    enabled_tools: Option<String>,
    enabled_mcp_servers: Option<String>,
    rag: Option<String>,
    permission_mode: Option<String>,
    sandbox: Option<String>,
    prompt: Option<String>,
}

/// Facts about the machine substituted into role prompts.
#[derive(Debug, Clone, Default)]
pub struct SystemVars {
    /// `linux`, `macos`, `windows` …
    pub os: String,
    /// `unix` or `windows`.
    pub os_family: String,
    /// `x86_64`, `aarch64` …
    pub arch: String,
    /// The user's shell name (`bash`, `zsh`, `fish` …).
    pub shell: String,
    /// `en-US` style locale.
    pub locale: String,
    /// RFC 3339 timestamp.
    pub now: String,
    /// Working directory.
    pub cwd: String,
}

impl SystemVars {
    /// Reads the variables from a conversation's environment snapshot and working
    /// directory.
    pub fn detect(env: &crate::config::Env, cwd: &Path) -> Self {
        let shell_path = env
            .get("LOKI_SHELL")
            .or_else(|| env.get("SHELL"))
            .unwrap_or(if cfg!(windows) { "powershell" } else { "sh" });
        let shell = Path::new(shell_path)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| shell_path.to_string());
        let locale = env
            .get("LC_ALL")
            .or_else(|| env.get("LANG"))
            .map(|l| l.split('.').next().unwrap_or(l).replace('_', "-"))
            .unwrap_or_else(|| "en-US".into());
        Self {
            os: std::env::consts::OS.into(),
            os_family: std::env::consts::FAMILY.into(),
            arch: std::env::consts::ARCH.into(),
            shell,
            locale,
            now: httpdate_rfc3339(std::time::SystemTime::now()),
            cwd: cwd.display().to_string(),
        }
    }

    /// Replaces `{{__name__}}` variables; unknown ones are left as they are.
    pub fn interpolate(&self, text: &str) -> String {
        if !text.contains("{{__") {
            return text.to_string();
        }
        [
            ("{{__os__}}", &self.os),
            ("{{__os_family__}}", &self.os_family),
            ("{{__os_distro__}}", &self.os),
            ("{{__arch__}}", &self.arch),
            ("{{__shell__}}", &self.shell),
            ("{{__locale__}}", &self.locale),
            ("{{__now__}}", &self.now),
            ("{{__cwd__}}", &self.cwd),
        ]
        .iter()
        .fold(text.to_string(), |acc, (k, v)| acc.replace(k, v))
    }
}

/// Formats a time as RFC 3339 UTC (`2026-11-22T10:15:44Z`) without a date crate.
pub fn httpdate_rfc3339(t: std::time::SystemTime) -> String {
    let secs = t
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

impl SystemVars {
    /// The current time as RFC 3339 UTC.
    pub fn now_rfc3339() -> String {
        httpdate_rfc3339(std::time::SystemTime::now())
    }
}

/// A UTC timestamp usable in file names: `20261122T101544`.
pub fn compact_timestamp(t: std::time::SystemTime) -> String {
    httpdate_rfc3339(t)
        .chars()
        .filter(|c| c.is_ascii_digit() || *c == 'T')
        .collect()
}

impl Role {
    /// A temporary role from a prompt (`--prompt`, `.prompt`).
    pub fn temp(prompt: &str) -> Self {
        Self {
            name: TEMP_ROLE.into(),
            prompt: prompt.to_string(),
            ..Self::default()
        }
    }

    /// Parses role text. `name` is the file stem; `path` is used in errors.
    pub fn parse(
        name: &str,
        text: &str,
        path: &Path,
        vars: &SystemVars,
    ) -> Result<Self, RoleError> {
        let (front, body) = split_front_matter(crate::config::yaml::strip_bom(text));
        let meta: FrontMatter = match front {
            Some(yaml) if !yaml.trim().is_empty() => {
                if let Err(deep) = crate::config::yaml::check_nesting(yaml) {
                    return Err(RoleError::FrontMatter {
                        path: path.to_path_buf(),
                        message: format!("line {}: {}", deep.line + 1, deep.message()),
                    });
                }
                serde_yaml::from_str(yaml).map_err(|e| RoleError::FrontMatter {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                })?
            }
            _ => FrontMatter::default(),
        };
        for (key, value, max) in [
            ("temperature", meta.temperature, 2.0),
            ("top_p", meta.top_p, 1.0),
        ] {
            if let Some(v) = value
                && !(0.0..=max).contains(&v)
            {
                return Err(RoleError::FrontMatter {
                    path: path.to_path_buf(),
                    message: format!("`{key}` must be a number from 0 to {max}, got {v}"),
                });
            }
        }
        let body = body.trim();
        let prompt = if body.is_empty() {
            meta.prompt.unwrap_or_default()
        } else {
            body.to_string()
        };
        Ok(Self {
            name: meta.name.unwrap_or_else(|| name.to_string()),
            model: meta.model,
            temperature: meta.temperature,
            top_p: meta.top_p,
            enabled_tools: meta.enabled_tools,
            enabled_mcp_servers: meta.enabled_mcp_servers,
            rag: meta.rag,
            permission_mode: meta.permission_mode,
            sandbox: meta.sandbox,
            prompt: vars.interpolate(prompt.trim()),
        })
    }

    /// Loads `name` from `roles_dir`, falling back to the built-in of that name.
    pub fn load(roles_dir: &Path, name: &str, vars: &SystemVars) -> Result<Self, RoleError> {
        let path = roles_dir.join(format!("{name}.md"));
        match crate::atomic_file::read_regular_text(&path, crate::atomic_file::MAX_OWN_FILE) {
            Ok(text) => Self::parse(name, &text, &path, vars),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let (_, text) =
                    BUILTIN
                        .iter()
                        .find(|(n, _)| *n == name)
                        .ok_or_else(|| RoleError::Unknown {
                            name: name.to_string(),
                        })?;
                Self::parse(
                    name,
                    text,
                    Path::new(&format!("(built-in) {name}.md")),
                    vars,
                )
            }
            Err(e) => Err(RoleError::Read {
                path,
                message: e.to_string(),
            }),
        }
    }

    /// The messages that frame `input` (a user message built by the caller).
    pub fn frame(&self, input: Message) -> Vec<Message> {
        let prompt = self.prompt.as_str();
        if prompt.is_empty() {
            return vec![input];
        }
        if prompt.contains("__INPUT__") {
            let text = prompt.replace("__INPUT__", &input.text_content());
            let mut user = input;
            user.content = loki_wire::message::Content::Text(text.into());
            return vec![user];
        }
        if let Some((system, pairs)) = few_shot(prompt) {
            let mut out = Vec::with_capacity(pairs.len() * 2 + 2);
            if !system.is_empty() {
                out.push(Message::text(MessageRole::System, system));
            }
            for (q, a) in pairs {
                out.push(Message::text(MessageRole::User, q));
                out.push(Message::text(MessageRole::Assistant, a));
            }
            out.push(input);
            return out;
        }
        vec![Message::text(MessageRole::System, prompt), input]
    }

    /// The role as a file: front matter with the settings that are set, then the prompt.
    pub fn export(&self) -> String {
        let mut header = String::new();
        let mut line = |k: &str, v: Option<String>| {
            if let Some(v) = v {
                header.push_str(&format!("{k}: {v}\n"));
            }
        };
        line("model", self.model.clone());
        line("temperature", self.temperature.map(|t| t.to_string()));
        line("top_p", self.top_p.map(|t| t.to_string()));
        line("enabled_tools", self.enabled_tools.clone());
        line("enabled_mcp_servers", self.enabled_mcp_servers.clone());
        line("rag", self.rag.clone());
        line("permission_mode", self.permission_mode.clone());
        line("sandbox", self.sandbox.clone());
        if header.is_empty() {
            format!("{}\n", self.prompt)
        } else {
            format!("---\n{header}---\n\n{}\n", self.prompt)
        }
    }
}

/// Splits `---\nyaml\n---\nbody`; text without a leading `---` line is all body.
fn split_front_matter(text: &str) -> (Option<&str>, &str) {
    let trimmed = text.trim_start_matches('\u{feff}');
    let Some(rest) = trimmed
        .strip_prefix("---\n")
        .or_else(|| trimmed.strip_prefix("---\r\n"))
    else {
        return (None, text);
    };
    if let Some(end) = rest.find("\n---") {
        let yaml = &rest[..end];
        let after = &rest[end + 4..];
        let body = after.split_once('\n').map(|(_, b)| b).unwrap_or("");
        return (Some(yaml), body);
    }
    if let Some(body) = rest.strip_prefix("---") {
        return (Some(""), body);
    }
    (None, text)
}

/// `(system text, [(input, output)])` when the prompt holds balanced few-shot pairs.
fn few_shot(prompt: &str) -> Option<(String, Vec<(String, String)>)> {
    const INPUT: &str = "### INPUT:";
    const OUTPUT: &str = "### OUTPUT:";
    let first = prompt.find(INPUT)?;
    let system = prompt[..first].trim().to_string();
    let mut pairs = Vec::new();
    for block in prompt[first..].split(INPUT).skip(1) {
        let (q, a) = block.split_once(OUTPUT)?;
        pairs.push((q.trim().to_string(), a.trim().to_string()));
    }
    (!pairs.is_empty()).then_some((system, pairs))
}

/// Writes the built-in roles into `roles_dir` when it does not exist yet (first run).
pub fn install_builtins(roles_dir: &Path) -> std::io::Result<()> {
    if roles_dir.exists() {
        return Ok(());
    }
    std::fs::create_dir_all(roles_dir)?;
    for (name, text) in BUILTIN {
        crate::atomic_file::write_atomic(
            &roles_dir.join(format!("{name}.md")),
            text.as_bytes(),
            false,
        )?;
    }
    Ok(())
}

/// Whether `name` is one of the built-in roles.
pub fn is_builtin(name: &str) -> bool {
    BUILTIN.iter().any(|(n, _)| *n == name)
}

/// The roles that have a file in `roles_dir` (what `.delete role` can remove).
pub fn list_files(roles_dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(roles_dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".md")?;
            (!stem.starts_with('.') && entry.path().is_file()).then(|| stem.to_string())
        })
        .collect();
    names.sort();
    names
}

/// Role names: files in `roles_dir` plus built-ins, sorted, without duplicates.
pub fn list(roles_dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = BUILTIN.iter().map(|(n, _)| (*n).to_string()).collect();
    if let Ok(entries) = std::fs::read_dir(roles_dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            let hidden = path
                .file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with('.'));
            if path.extension().and_then(|e| e.to_str()) == Some("md")
                && !hidden
                && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
            {
                names.push(stem.to_string());
            }
        }
    }
    names.sort();
    names.dedup();
    names
}

#[cfg(test)]
mod tests {
    use super::*;
    use loki_wire::message::Role as R;

    fn vars() -> SystemVars {
        SystemVars {
            os: "linux".into(),
            shell: "zsh".into(),
            ..SystemVars::default()
        }
    }

    fn user(text: &str) -> Message {
        Message::text(R::User, text)
    }

    fn shape(messages: &[Message]) -> Vec<(R, String)> {
        messages
            .iter()
            .map(|m| (m.role, m.text_content()))
            .collect()
    }

    #[test]
    fn sampling_out_of_range_is_an_error_naming_the_file() {
        for text in ["---\ntemperature: 5\n---\nx\n", "---\ntop_p: 7\n---\nx\n"] {
            let e = Role::parse("bad", text, Path::new("roles/bad.md"), &vars())
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(
                e.starts_with("roles/bad.md: invalid front matter: `"),
                "{e}"
            );
            assert!(e.contains("must be a number from 0 to"), "{e}");
        }
    }

    #[test]
    fn front_matter_and_system_prompt() {
        let text = "---\nmodel: openai:gpt-4o\ntemperature: 0.2\nenabled_tools: fs_ls\n---\nYou are terse on {{__os__}} with {{__shell__}}.\n";
        let role = Role::parse("terse", text, Path::new("terse.md"), &vars()).unwrap();
        assert_eq!(role.model.as_deref(), Some("openai:gpt-4o"));
        assert_eq!(role.temperature, Some(0.2));
        assert_eq!(role.prompt, "You are terse on linux with zsh.");
        assert_eq!(
            shape(&role.frame(user("hi"))),
            [
                (R::System, "You are terse on linux with zsh.".into()),
                (R::User, "hi".into())
            ]
        );
    }

    #[test]
    fn embedded_prompt() {
        let role = Role::parse(
            "toml",
            "---\nprompt: convert __INPUT__ to TOML\n---\n",
            Path::new("x"),
            &vars(),
        )
        .unwrap();
        assert_eq!(
            shape(&role.frame(user("{\"a\":1}"))),
            [(R::User, "convert {\"a\":1} to TOML".into())]
        );
    }

    #[test]
    fn few_shot_prompt() {
        let text =
            "Output code only.\n### INPUT:\nasync sleep in js\n### OUTPUT:\n```js\nawait x\n```\n";
        let role = Role::parse("c", text, Path::new("x"), &vars()).unwrap();
        assert_eq!(
            shape(&role.frame(user("python add"))),
            [
                (R::System, "Output code only.".into()),
                (R::User, "async sleep in js".into()),
                (R::Assistant, "```js\nawait x\n```".into()),
                (R::User, "python add".into())
            ]
        );
    }

    #[test]
    fn empty_and_metadata_only_roles() {
        let role = Role::parse("m", "---\nmodel: a:b\n---\n", Path::new("x"), &vars()).unwrap();
        assert_eq!(role.model.as_deref(), Some("a:b"));
        assert_eq!(shape(&role.frame(user("q"))), [(R::User, "q".into())]);
    }

    #[test]
    fn bad_front_matter_names_the_file() {
        let err = Role::parse(
            "b",
            "---\nmodel: [\n---\nx",
            Path::new("roles/b.md"),
            &vars(),
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("roles/b.md: invalid front matter"),
            "{err}"
        );
    }

    #[test]
    fn builtins_load_and_user_files_win() {
        let dir = tempfile::tempdir().unwrap();
        let roles = dir.path().join("roles");
        assert!(
            Role::load(&roles, "shell", &vars())
                .unwrap()
                .prompt
                .contains("zsh")
        );
        install_builtins(&roles).unwrap();
        std::fs::write(roles.join("code.md"), "mine").unwrap();
        std::fs::write(roles.join("extra.md"), "x").unwrap();
        assert_eq!(Role::load(&roles, "code", &vars()).unwrap().prompt, "mine");
        assert!(matches!(
            Role::load(&roles, "nope", &vars()),
            Err(RoleError::Unknown { .. })
        ));
        let names = list(&roles);
        assert!(names.contains(&"extra".to_string()) && names.contains(&"shell".to_string()));
        // A second install never overwrites the user's edits.
        install_builtins(&roles).unwrap();
        assert_eq!(
            std::fs::read_to_string(roles.join("code.md")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn export_round_trips() {
        let role = Role {
            name: "r".into(),
            model: Some("a:b".into()),
            temperature: Some(0.5),
            prompt: "Be kind.".into(),
            ..Role::default()
        };
        let text = role.export();
        assert_eq!(text, "---\nmodel: a:b\ntemperature: 0.5\n---\n\nBe kind.\n");
        assert_eq!(
            Role::parse("r", &text, Path::new("x"), &vars()).unwrap(),
            role
        );
    }

    #[test]
    fn rfc3339() {
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_700_000_000);
        assert_eq!(httpdate_rfc3339(t), "2023-11-14T22:13:20Z");
    }
}
