//! `allow`, `ask` and `deny` rules, in the shape of Claude Code's settings, and how they
//! hold whatever a call is spelled like.
//!
//! A rule is a tool name — loki's or Claude's, `*` as a wildcard — and optionally what it
//! covers: `execute_command(git diff:*)` (a command whose program is `git` and whose
//! arguments start with `diff`), `Bash(npm test)` (exactly that command),
//! `fs_write(src/**)` (a path glob), `mcp__github__*` (a name glob).
//!
//! - Commands are read as the shell will run them ([`crate::shell_syntax`]): a deny rule
//!   matches any program a command line starts, by name (`/bin/rm`, `\rm`, `env rm`,
//!   `xargs rm`, `find -delete`, `sh -c 'rm …'` are all `rm`); an allow rule covers a
//!   command only when everything it runs is known and allowed and nothing in it writes
//!   files (redirections, `--output=…`); a command the analysis cannot be sure of is
//!   asked about when any command rule could be involved.
//! - `WebFetch(domain:example.com)` covers a fetch whose URL's host is that domain or
//!   one below it (`docs.example.com`); `domain:*.example.com` only the ones below.
//! - Path rules follow gitignore: a pattern without `/` matches at any depth (`.env`,
//!   `*.pem`), one with `/` from the working directory, `/…` or `~/…` absolutely. A path
//!   rule on a tool that reads (`Read`, `Grep`, `Glob`, `LS`, …) covers every tool that
//!   reads the file — `fs_grep` over its directory, LSP tools, the sandbox; one on a tool
//!   that writes (`Write`, `Edit`, …) every tool that writes it.
//!
//! Deny wins (even over yolo), then ask, then allow.

use std::path::Path;

use serde_json::Value;

use super::PermissionsConfig;
use super::commands::{Words, writes_by_options};
use crate::shell_syntax::{Analysis, analyze};

/// Tool names (loki's and Claude's) that read files.
const READING_TOOLS: &[&str] = &[
    "Read", "Grep", "Glob", "LS", "fs_read", "fs_cat", "fs_grep", "fs_glob", "fs_ls",
];
/// Tool names that write files.
const WRITING_TOOLS: &[&str] = &[
    "Write",
    "Edit",
    "MultiEdit",
    "NotebookEdit",
    "fs_write",
    "fs_edit",
    "fs_patch",
    "fs_mkdir",
    "fs_rm",
];

/// Why a rule cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// Nothing before `(`.
    #[error("no tool name")]
    NoTool,
    /// `(` without the closing `)` at the end.
    #[error("expected `tool` or `tool(what)`")]
    Shape,
    /// A glob that does not parse.
    #[error("bad pattern: {0}")]
    Glob(String),
}

/// Which files a path rule is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    /// Files read.
    Read,
    /// Files written.
    Write,
}

/// One rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// As written, for messages.
    pub text: String,
    /// The tool part as written.
    tool_text: String,
    /// Tool names it covers (loki's or Claude's), a glob.
    tool: globset::GlobMatcher,
    what: Option<What>,
    /// The files a path rule is about, when its tool reads or writes files.
    family: Option<Family>,
}

#[derive(Debug, Clone)]
enum What {
    /// `domain:example.com`: a URL whose host is that domain or one below it
    /// (`docs.example.com`); `domain:*.example.com` only the ones below.
    Domain(String),
    /// `prefix:*`: a command whose words start with these; a path starting with this.
    Prefix { words: Words, text: String },
    /// An exact command, or a path glob.
    Pattern {
        words: Words,
        glob: globset::GlobMatcher,
        /// The glob is absolute (`/…`, `~/…`): it is matched against absolute paths.
        absolute: bool,
    },
}

/// The rules written together in one string (`Bash(git add:*), Read`), split where
/// `separator` says but never inside a rule's parentheses; empty pieces are left out.
pub fn split_rule_list(value: &str, separator: impl Fn(char) -> bool) -> Vec<String> {
    let mut rules = Vec::new();
    let mut depth = 0usize;
    let mut current = String::new();
    for c in value.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth == 0 && separator(c) {
            if !current.is_empty() {
                rules.push(std::mem::take(&mut current));
            }
        } else {
            current.push(c);
        }
    }
    if !current.is_empty() {
        rules.push(current);
    }
    rules
}

impl Rule {
    /// Parses `tool` or `tool(what)`.
    pub fn parse(text: &str) -> Result<Self, RuleError> {
        let text = text.trim();
        let (name, what) = match text.split_once('(') {
            Some((name, rest)) => {
                let inner = rest.strip_suffix(')').ok_or(RuleError::Shape)?;
                (name.trim(), Some(inner.trim()))
            }
            None => (text, None),
        };
        if name.is_empty() {
            return Err(RuleError::NoTool);
        }
        let what = match what.filter(|w| !w.is_empty() && *w != "*") {
            None => None,
            Some(w) if w.starts_with("domain:") => {
                let domain = w["domain:".len()..].trim().trim_end_matches('.');
                if domain.is_empty() {
                    return Err(RuleError::Shape);
                }
                Some(What::Domain(domain.to_ascii_lowercase()))
            }
            Some(w) => Some(match w.strip_suffix(":*") {
                Some(prefix) => What::Prefix {
                    words: Words::of(prefix),
                    text: prefix.to_string(),
                },
                None => {
                    let (pattern, absolute) = path_pattern(w);
                    What::Pattern {
                        words: Words::of(w),
                        glob: globset::GlobBuilder::new(&pattern)
                            .literal_separator(true)
                            .build()
                            .map(|g| g.compile_matcher())
                            .map_err(|e| RuleError::Glob(e.to_string()))?,
                        absolute,
                    }
                }
            }),
        };
        let tool = globset::Glob::new(name)
            .map(|g| g.compile_matcher())
            .map_err(|e| RuleError::Glob(e.to_string()))?;
        let family = what
            .as_ref()
            .filter(|w| !matches!(w, What::Domain(_)))
            .and_then(|_| {
                if READING_TOOLS.iter().any(|t| tool.is_match(t)) {
                    Some(Family::Read)
                } else if WRITING_TOOLS.iter().any(|t| tool.is_match(t)) {
                    Some(Family::Write)
                } else {
                    None
                }
            });
        Ok(Self {
            text: text.to_string(),
            tool_text: name.to_string(),
            tool,
            what,
            family,
        })
    }

    /// Whether the rule names one of `names`.
    fn names(&self, names: &[String]) -> bool {
        names.iter().any(|n| self.tool.is_match(n))
    }

    /// Whether the rule's tool part matches any of `known` (so it can ever apply).
    pub fn names_any(&self, known: &[&str]) -> bool {
        known.iter().any(|n| self.tool.is_match(n))
    }

    /// The tool part as written.
    pub fn tool_text(&self) -> &str {
        &self.tool_text
    }

    /// Whether the path `shown` (relative to the working directory when inside it) or
    /// `absolute` is what the rule covers.
    fn covers_path(&self, shown: &str, absolute: &Path) -> bool {
        match &self.what {
            None => true,
            Some(What::Domain(_)) => false,
            Some(What::Prefix { text, .. }) => shown.starts_with(text.as_str()),
            Some(What::Pattern {
                glob,
                absolute: true,
                ..
            }) => glob.is_match(absolute),
            Some(What::Pattern { glob, .. }) => {
                !Path::new(shown).is_absolute() && glob.is_match(shown)
            }
        }
    }

    /// Whether one program of a command line is what the rule covers.
    fn covers_invocation(&self, call: &crate::shell_syntax::Invocation) -> bool {
        match &self.what {
            None => true,
            Some(What::Domain(_)) => false,
            Some(What::Prefix { words, .. }) => words.prefix_of(call),
            Some(What::Pattern { words, .. }) => words.exactly(call),
        }
    }
}

/// The host of a call's `url` argument (a fetch's), lower-case, without a final dot.
fn url_host(args: &Value) -> Option<String> {
    let url = reqwest::Url::parse(args["url"].as_str()?.trim()).ok()?;
    let host = url.host_str()?.trim_end_matches('.').to_ascii_lowercase();
    Some(host)
}

/// Whether `host` is `domain` or below it; `*.domain` only below it.
fn in_domain(host: &str, domain: &str) -> bool {
    match domain.strip_prefix("*.") {
        Some(parent) => host.ends_with(&format!(".{parent}")),
        None => host == domain || host.ends_with(&format!(".{domain}")),
    }
}

/// A path rule's glob: gitignore-like (no `/`: at any depth), `./` dropped, `~/` and
/// `//` made absolute. Returns the glob and whether it is absolute.
fn path_pattern(written: &str) -> (String, bool) {
    let written = written.strip_prefix("./").unwrap_or(written);
    if let Some(rest) = written.strip_prefix("//") {
        return (format!("/{rest}"), true);
    }
    if let (Some(rest), Some(home)) = (written.strip_prefix("~/"), dirs::home_dir()) {
        return (format!("{}/{rest}", home.display()), true);
    }
    if written.starts_with('/') {
        return (written.to_string(), true);
    }
    let anchored = written.trim_end_matches('/').contains('/');
    if anchored {
        (written.to_string(), false)
    } else {
        (format!("**/{written}"), false)
    }
}

/// What a rule looks at in a call.
pub struct RuleCall<'a> {
    /// The tool's names: loki's, Claude's (and `mcp__<server>__<tool>` for MCP tools).
    pub names: Vec<String>,
    /// Its arguments.
    pub args: &'a Value,
    /// It runs a shell command (`args.command`).
    pub is_command: bool,
    /// The path it touches, relative to the working directory when inside it.
    pub path: Option<&'a str>,
    /// The same path, absolute.
    pub absolute: Option<&'a Path>,
}

/// The parsed rules.
#[derive(Debug, Clone, Default)]
pub struct Rules {
    allow: Vec<Rule>,
    ask: Vec<Rule>,
    deny: Vec<Rule>,
    /// Where rules that are not the user's own came from, by text.
    origins: std::collections::BTreeMap<String, String>,
}

/// What the rules say of a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleVerdict {
    /// A `deny` rule (its text).
    Deny(String),
    /// An `ask` rule, or a command the rules cannot be sure about (why).
    Ask(String),
    /// An `allow` rule.
    Allow(String),
}

impl Rules {
    /// The rules of `config` that parse (the others were reported when it was loaded).
    pub fn new(config: &PermissionsConfig) -> Self {
        let parse = |list: &[String]| list.iter().filter_map(|r| Rule::parse(r).ok()).collect();
        Self {
            allow: parse(&config.allow),
            ask: parse(&config.ask),
            deny: parse(&config.deny),
            origins: config.origins.clone(),
        }
    }

    /// These rules with `extra` allow rules (a command's `allowed-tools`, for its turn;
    /// `origin` names where they came from). Deny and ask rules still win over them; a
    /// rule that does not parse is left out.
    pub fn with_allowed(&self, extra: &[String], origin: &str) -> Self {
        let mut rules = self.clone();
        for text in extra {
            if let Ok(rule) = Rule::parse(text) {
                rules
                    .origins
                    .entry(rule.text.clone())
                    .or_insert_with(|| origin.to_string());
                rules.allow.push(rule);
            }
        }
        rules
    }

    /// A rule as a refusal names it, with where it came from so the reader knows what to
    /// change: `the user's permission rule `X`` (their configuration) or `the permission
    /// rule `X` of the project settings file /repo/.claude/settings.json`.
    pub fn describe(&self, rule: &str) -> String {
        match self.origins.get(rule) {
            Some(origin) => format!("the permission rule `{rule}` of {origin}"),
            None => format!("the user's permission rule `{rule}`"),
        }
    }

    /// Where `rule` lives, for advice on changing it: its project settings file, or the
    /// user's configuration.
    pub fn origin(&self, rule: &str) -> &str {
        self.origins
            .get(rule)
            .map_or("the user's configuration", String::as_str)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.ask.is_empty() && self.deny.is_empty()
    }

    /// Every rule, for checking that each names a tool that exists.
    pub fn all(&self) -> impl Iterator<Item = &Rule> {
        self.deny.iter().chain(&self.ask).chain(&self.allow)
    }

    /// Deny, then ask, then allow.
    pub fn decide(&self, call: &RuleCall<'_>) -> Option<RuleVerdict> {
        if call.is_command {
            let command = call.args["command"].as_str().unwrap_or_default();
            return self.decide_command(&call.names, &analyze(command));
        }
        let host = url_host(call.args);
        let covers = |rule: &&Rule| {
            rule.names(&call.names)
                && match (&rule.what, call.path, call.absolute) {
                    (None, _, _) => true,
                    (Some(What::Domain(domain)), _, _) => {
                        host.as_deref().is_some_and(|h| in_domain(h, domain))
                    }
                    (Some(_), Some(shown), Some(absolute)) => rule.covers_path(shown, absolute),
                    _ => false,
                }
        };
        if let Some(rule) = self.deny.iter().find(covers) {
            return Some(RuleVerdict::Deny(rule.text.clone()));
        }
        if let Some(rule) = self.ask.iter().find(covers) {
            return Some(RuleVerdict::Ask(rule.text.clone()));
        }
        self.allow
            .iter()
            .find(covers)
            .map(|rule| RuleVerdict::Allow(rule.text.clone()))
    }

    /// The rules on a command line the tool `names` would run.
    fn decide_command(&self, names: &[String], analysis: &Analysis) -> Option<RuleVerdict> {
        let any_covers = |rule: &&Rule| {
            rule.names(names)
                && (rule.what.is_none()
                    || analysis
                        .invocations
                        .iter()
                        .any(|i| rule.covers_invocation(i)))
        };
        if let Some(rule) = self.deny.iter().find(any_covers) {
            return Some(RuleVerdict::Deny(rule.text.clone()));
        }
        let command_rules = |list: &[Rule]| {
            list.iter()
                .find(|r| r.names(names) && r.what.is_some())
                .map(|r| r.text.clone())
        };
        if !analysis.certain
            && let Some(rule) = command_rules(&self.deny)
        {
            return Some(RuleVerdict::Ask(format!(
                "what this command runs cannot be known before it runs, so `{rule}` cannot be checked"
            )));
        }
        if let Some(rule) = self.ask.iter().find(any_covers) {
            return Some(RuleVerdict::Ask(rule.text.clone()));
        }
        if let Some(rule) = self
            .allow
            .iter()
            .find(|r| r.names(names) && r.what.is_none())
        {
            return Some(RuleVerdict::Allow(rule.text.clone()));
        }
        // Each program must be allowed, and nothing may be hidden or write files.
        if !analysis.certain || analysis.invocations.is_empty() {
            return None;
        }
        let mut allowed_by = None;
        for call in &analysis.invocations {
            if !call.literal || call.writes || writes_by_options(call) {
                return None;
            }
            let rule = self
                .allow
                .iter()
                .find(|r| r.names(names) && r.covers_invocation(call))?;
            allowed_by.get_or_insert_with(|| rule.text.clone());
        }
        allowed_by.map(RuleVerdict::Allow)
    }

    /// The deny rule that keeps a file from being read, if any: a path rule on any tool
    /// that reads files.
    pub fn denies_read(&self, shown: &str, absolute: &Path) -> Option<&str> {
        self.denying(Family::Read, shown, absolute)
    }

    /// The deny rule that keeps a file from being written, if any.
    pub fn denies_write(&self, shown: &str, absolute: &Path) -> Option<&str> {
        self.denying(Family::Write, shown, absolute)
    }

    fn denying(&self, family: Family, shown: &str, absolute: &Path) -> Option<&str> {
        self.deny
            .iter()
            .find(|r| r.family == Some(family) && r.covers_path(shown, absolute))
            .map(|r| r.text.as_str())
    }

    /// Whether any rule keeps files from readers.
    pub fn has_read_denials(&self) -> bool {
        self.deny.iter().any(|r| r.family == Some(Family::Read))
    }

    /// Whether a path relative to the working directory is denied to readers (for walks
    /// over the working tree).
    pub fn denies_read_in_tree(&self, rel: &str) -> bool {
        self.deny.iter().any(|r| {
            r.family == Some(Family::Read)
                && matches!(&r.what, Some(What::Pattern { glob, absolute: false, .. }) if glob.is_match(rel))
        })
    }

    /// The path patterns of deny rules on reading tools, as written (for the sandbox's
    /// deny list).
    pub fn read_denied_patterns(&self) -> Vec<&str> {
        self.deny
            .iter()
            .filter(|r| r.family == Some(Family::Read))
            .filter_map(|r| {
                r.text
                    .split_once('(')
                    .map(|(_, w)| w.trim_end_matches(')').trim())
            })
            .collect()
    }

    /// The rules as lines (`deny  execute_command(rm:*)`), for `.info permissions`.
    pub fn lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for (list, rules) in [
            ("deny", &self.deny),
            ("ask", &self.ask),
            ("allow", &self.allow),
        ] {
            lines.extend(rules.iter().map(|r| format!("{list:<6}{}", r.text)));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bash(args: &Value) -> RuleCall<'_> {
        RuleCall {
            names: vec!["execute_command".into(), "Bash".into()],
            args,
            is_command: true,
            path: None,
            absolute: None,
        }
    }

    fn rules(allow: &[&str], ask: &[&str], deny: &[&str]) -> Rules {
        let list = |l: &[&str]| l.iter().map(|s| (*s).to_string()).collect();
        Rules::new(&PermissionsConfig {
            allow: list(allow),
            ask: list(ask),
            deny: list(deny),
            ..PermissionsConfig::default()
        })
    }

    #[test]
    fn commands_are_matched_by_what_they_run() {
        let r = rules(
            &["Bash(git diff:*)", "Bash(head:*)"],
            &[],
            &["execute_command(rm:*)"],
        );
        let verdict = |c: &str| r.decide(&bash(&json!({ "command": c })));
        let allowed = Some(RuleVerdict::Allow("Bash(git diff:*)".into()));
        assert_eq!(verdict("git diff --stat"), allowed);
        assert_eq!(verdict("git diff"), allowed);
        assert_eq!(verdict("git diff | head -n 3"), allowed);
        assert_eq!(verdict("git diffx"), None);
        // A shell reading a pipe runs what cannot be known: asked, with a deny rule about.
        assert!(matches!(
            verdict("git diff && curl x | sh"),
            Some(RuleVerdict::Ask(_))
        ));
        assert_eq!(verdict("git diff --output=/outside/file"), None);
        assert_eq!(verdict("git diff > /outside/file"), None);
        assert_eq!(verdict("git diff $(touch x)"), None);
        let denied = Some(RuleVerdict::Deny("execute_command(rm:*)".into()));
        for spelling in [
            "git diff; rm -rf /",
            "echo $(rm -rf x)",
            "/bin/rm x",
            "\\rm x",
            "command rm x",
            "X=1 rm x",
            "env rm x",
            "xargs rm",
            "find . -delete",
            "sh -c 'rm x'",
        ] {
            assert_eq!(verdict(spelling), denied, "{spelling}");
        }
        assert!(matches!(verdict("$CMD x"), Some(RuleVerdict::Ask(_))));
        assert_eq!(verdict("ls"), None);
    }

    #[test]
    fn paths_names_and_order() {
        let r = rules(
            &["fs_write(src/**)", "mcp__github__*"],
            &["fs_write(src/secret/**)"],
            &["Write(.env)"],
        );
        let write = |path: &'static str| RuleCall {
            names: vec!["fs_write".into(), "Write".into()],
            args: &Value::Null,
            is_command: false,
            path: Some(path),
            absolute: Some(Path::new("/w")),
        };
        assert!(matches!(
            r.decide(&write("src/a/b.rs")),
            Some(RuleVerdict::Allow(_))
        ));
        assert!(matches!(
            r.decide(&write("src/secret/k")),
            Some(RuleVerdict::Ask(_))
        ));
        assert!(matches!(
            r.decide(&write(".env")),
            Some(RuleVerdict::Deny(_))
        ));
        assert!(matches!(
            r.decide(&write("deep/down/.env")),
            Some(RuleVerdict::Deny(_))
        ));
        assert_eq!(r.decide(&write("README.md")), None);
        let mcp = RuleCall {
            names: vec![
                "github_create_issue".into(),
                "mcp__github__create_issue".into(),
            ],
            args: &Value::Null,
            is_command: false,
            path: None,
            absolute: None,
        };
        assert!(matches!(r.decide(&mcp), Some(RuleVerdict::Allow(_))));
        let bad = PermissionsConfig {
            deny: vec!["Bash(rm".into(), "(x)".into()],
            ..PermissionsConfig::default()
        };
        assert_eq!(bad.problems().len(), 2);
    }

    #[test]
    fn domain_rules_match_the_fetched_host_and_below() {
        let r = rules(
            &["WebFetch(domain:docs.rs)"],
            &[],
            &["WebFetch(domain:example.com)", "WebSearch"],
        );
        let fetch = |url: &str| {
            let args = json!({ "url": url });
            r.decide(&RuleCall {
                names: vec!["fetch_url".into(), "WebFetch".into()],
                args: &args,
                is_command: false,
                path: None,
                absolute: None,
            })
        };
        let denied = Some(RuleVerdict::Deny("WebFetch(domain:example.com)".into()));
        assert_eq!(fetch("https://example.com/a"), denied);
        assert_eq!(fetch("http://API.Example.COM./x"), denied);
        assert_eq!(fetch("https://notexample.com/"), None);
        assert_eq!(fetch("https://example.com.evil.net/"), None);
        assert_eq!(
            fetch("https://docs.rs/serde"),
            Some(RuleVerdict::Allow("WebFetch(domain:docs.rs)".into()))
        );
        let search = RuleCall {
            names: vec!["web_search".into(), "WebSearch".into()],
            args: &json!({"query": "q"}),
            is_command: false,
            path: None,
            absolute: None,
        };
        assert_eq!(
            r.decide(&search),
            Some(RuleVerdict::Deny("WebSearch".into()))
        );
        assert!(Rule::parse("WebFetch(domain:)").is_err());
    }

    #[test]
    fn read_rules_cover_every_reader() {
        let r = rules(
            &[],
            &[],
            &["Read(.env)", "Read(~/.aws/**)", "Edit(src/generated/**)"],
        );
        let abs = Path::new("/x");
        assert_eq!(r.denies_read(".env", abs), Some("Read(.env)"));
        assert_eq!(r.denies_read("app/.env", abs), Some("Read(.env)"));
        assert_eq!(r.denies_read("env.txt", abs), None);
        assert!(r.denies_read_in_tree("app/.env"));
        assert_eq!(
            r.denies_write("src/generated/a.rs", abs),
            Some("Edit(src/generated/**)")
        );
        assert_eq!(r.denies_read("src/generated/a.rs", abs), None);
        if let Some(home) = dirs::home_dir() {
            let key = home.join(".aws/credentials");
            assert!(r.denies_read(&key.display().to_string(), &key).is_some());
        }
        assert_eq!(r.read_denied_patterns(), [".env", "~/.aws/**"]);
    }
}
