//! Tab completion: dot-commands (fuzzy), `.model` ids with their descriptions, `.set`
//! keys and values, role, session, knowledge-base and macro names, file paths after `.file`,
//! and paths after `@` anywhere in a line (fuzzy, git-ignored ones last).

use std::sync::{Arc, RwLock};

use reedline::{Completer, CompletionResult, Span, Suggestion};

use crate::conversation::SETTABLE;
use crate::dotcmd::{COMMANDS, DISPLAY_SETTINGS};

/// Lists the names of saved sessions.
pub type SessionNames = Arc<dyn Fn() -> Vec<String> + Send + Sync>;

/// Data the completer needs that can change while the REPL runs (after `.edit config`).
#[derive(Default)]
pub struct CompletionData {
    /// `(id, description)` of chat models.
    pub models: Vec<(String, String)>,
    /// Where role files are (listed on each Tab, so new ones show up).
    pub roles_dir: std::path::PathBuf,
    /// Lists saved sessions (called on each Tab, on the line editor's thread).
    pub sessions: Option<SessionNames>,
    /// Where knowledge bases are (listed on each Tab).
    pub rags_dir: std::path::PathBuf,
    /// Where macros are (listed on each Tab).
    pub macros_dir: std::path::PathBuf,
    /// Where agents are (listed on each Tab).
    pub agents_dir: std::path::PathBuf,
    /// Tools, MCP servers and their aliases (read on each Tab).
    pub state: Option<Arc<crate::state::AppState>>,
    /// The agent in use (its starters complete `.starter`).
    pub active_agent: Option<String>,
    /// The config directory's `skills/` (with the project's, they complete `/name`).
    pub skills_dir: std::path::PathBuf,
    /// `.set highlight false`: the input line is not coloured either.
    pub plain_input: bool,
}

impl std::fmt::Debug for CompletionData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CompletionData")
            .field("models", &self.models.len())
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Clone, Copy)]
enum Names {
    Roles,
    /// Roles with a file (for `.delete role`).
    RoleFiles,
    Sessions,
    Rags,
    Macros,
    Agents,
}

/// The REPL's completer.
pub struct LokiCompleter {
    data: Arc<RwLock<CompletionData>>,
}

impl LokiCompleter {
    /// A completer reading models from `data`.
    pub fn new(data: Arc<RwLock<CompletionData>>) -> Self {
        Self { data }
    }
}

impl Completer for LokiCompleter {
    fn complete(&mut self, line: &str, pos: usize) -> CompletionResult {
        CompletionResult::fresh(self.suggest(line, pos))
    }
}

impl LokiCompleter {
    /// Suggestions for `line` with the cursor at `pos`.
    pub fn suggest(&self, line: &str, pos: usize) -> Vec<Suggestion> {
        let line = &line[..pos.min(line.len())];
        if let Some((at, typed)) = mention_at_end(line) {
            return complete_mention(at, typed, line.len());
        }
        if let Some(typed) = line.strip_prefix('/')
            && !typed.contains(char::is_whitespace)
        {
            return self.complete_skills(typed);
        }
        if !line.starts_with('.') {
            return Vec::new();
        }
        let Some((cmd, rest)) = line.split_once(' ') else {
            return complete_commands(line);
        };
        let arg_start = cmd.len() + 1;
        match cmd {
            ".model" => self.complete_models(rest, arg_start),
            ".set" => self.complete_set(rest, arg_start),
            ".file" => complete_path(line),
            ".role" => self.complete_names(Names::Roles, rest, arg_start),
            ".session" => self.complete_names(Names::Sessions, rest, arg_start),
            ".rag" => self.complete_names(Names::Rags, rest, arg_start),
            ".macro" => self.complete_names(Names::Macros, rest, arg_start),
            ".agent" => match rest.split_once(' ') {
                None => self.complete_names(Names::Agents, rest, arg_start),
                Some((agent, given)) => self.complete_variables(agent, given, arg_start),
            },
            ".starter" => self.complete_starters(rest, arg_start),
            ".mcp" => self.complete_mcp(rest, arg_start),
            ".rebuild" | ".sources" => fixed(&["rag"], rest, arg_start),
            ".vault" => match rest.split_once(' ') {
                None => fixed(&["add", "get", "update", "delete", "list"], rest, arg_start),
                Some(("get" | "update" | "delete", name)) => {
                    let names = self
                        .data
                        .read()
                        .ok()
                        .and_then(|data| data.state.as_ref().map(|s| s.vault.opened_names()))
                        .unwrap_or_default();
                    let names: Vec<&str> = names.iter().map(String::as_str).collect();
                    let at = arg_start + rest.len() - name.len();
                    fixed(&names, name, at)
                }
                Some(_) => Vec::new(),
            },
            ".edit" => fixed(
                &["config", "role", "session", "rag-docs", "agent-config"],
                rest,
                arg_start,
            ),
            ".empty" => fixed(&["session"], rest, arg_start),
            ".info" | ".exit" => match rest.split_once(' ') {
                None => fixed(&["role", "session", "rag", "agent"], rest, arg_start),
                Some(_) => Vec::new(),
            },
            ".save" => match rest.split_once(' ') {
                None => fixed(&["role", "session"], rest, arg_start),
                Some(_) => Vec::new(),
            },
            ".delete" => match rest.split_once(' ') {
                None => fixed(
                    &["role", "session", "rag", "macro", "agent-data"],
                    rest,
                    arg_start,
                ),
                Some(("macro", name)) => {
                    self.complete_names(Names::Macros, name, arg_start + "macro ".len())
                }
                Some(("agent-data", name)) => {
                    self.complete_names(Names::Agents, name, arg_start + "agent-data ".len())
                }
                Some(("rag", name)) => {
                    self.complete_names(Names::Rags, name, arg_start + "rag ".len())
                }
                Some(("role", name)) => {
                    self.complete_names(Names::RoleFiles, name, arg_start + "role ".len())
                }
                Some(("session", name)) => {
                    self.complete_names(Names::Sessions, name, arg_start + "session ".len())
                }
                Some(_) => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// The configuration of agent `name`, read on each Tab.
    fn agent_config(&self, name: &str) -> Option<crate::agent::config::AgentConfig> {
        let data = self.data.read().ok()?;
        let path = data.agents_dir.join(name).join("config.yaml");
        serde_yaml::from_str(&std::fs::read_to_string(path).ok()?).ok()
    }

    /// `.agent <name> …`: the agent's variables not given yet, as `name=` (with their
    /// description and default).
    fn complete_variables(&self, agent: &str, given: &str, start: usize) -> Vec<Suggestion> {
        let Some(config) = self.agent_config(agent) else {
            return Vec::new();
        };
        let word_start = given.rfind(' ').map_or(0, |i| i + 1);
        let typed = &given[word_start..];
        if typed.contains('=') {
            return Vec::new();
        }
        let at = start + agent.len() + 1 + word_start;
        config
            .variables
            .iter()
            .filter(|v| !given.contains(&format!("{}=", v.name)))
            .filter(|v| fuzzy(typed, &v.name))
            .map(|v| {
                let mut about = v.description.clone();
                if let Some(default) = &v.default {
                    about.push_str(&format!(" (default: {default})"));
                }
                let mut s = suggestion(
                    &format!("{}=", v.name),
                    Some(shown(&about)),
                    at,
                    at + typed.len(),
                    false,
                );
                s.append_whitespace = false;
                s
            })
            .collect()
    }

    /// `/name`: the skills a person may run, with their descriptions.
    fn complete_skills(&self, typed: &str) -> Vec<Suggestion> {
        let Ok(data) = self.data.read() else {
            return Vec::new();
        };
        let cwd = std::env::current_dir().unwrap_or_default();
        crate::skill::discover(&data.skills_dir, &cwd)
            .into_iter()
            .filter(|s| s.user_invocable && fuzzy(typed, &s.name))
            .map(|s| {
                suggestion(
                    &format!("/{}", s.name),
                    Some(shown(&s.summary())),
                    0,
                    typed.len() + 1,
                    true,
                )
            })
            .collect()
    }

    /// `.starter`: the numbers of the active agent's starters, each with its text.
    fn complete_starters(&self, typed: &str, start: usize) -> Vec<Suggestion> {
        let agent = self.data.read().ok().and_then(|d| d.active_agent.clone());
        let Some(config) = agent.and_then(|a| self.agent_config(&a)) else {
            return Vec::new();
        };
        config
            .conversation_starters
            .iter()
            .enumerate()
            .map(|(i, text)| ((i + 1).to_string(), text))
            .filter(|(n, _)| n.starts_with(typed))
            .map(|(n, text)| suggestion(&n, Some(shown(text)), start, start + typed.len(), false))
            .collect()
    }

    /// Role or session names starting with (or fuzzily matching) the word being typed.
    fn complete_names(&self, which: Names, rest: &str, start: usize) -> Vec<Suggestion> {
        if rest.contains(' ') {
            return Vec::new();
        }
        let Ok(data) = self.data.read() else {
            return Vec::new();
        };
        let names = match which {
            Names::Roles => crate::role::list(&data.roles_dir),
            Names::RoleFiles => crate::role::list_files(&data.roles_dir),
            Names::Rags => crate::rag::list(&data.rags_dir),
            Names::Macros => crate::macros::list(&data.macros_dir),
            Names::Agents => crate::agent::list(&data.agents_dir),
            Names::Sessions => data
                .sessions
                .as_ref()
                .map(|list| list())
                .unwrap_or_default(),
        };
        // A name that would reach the terminal escaped (control, bidirectional or
        // invisible characters, from a file name) is not offered: inserted, it would be
        // drawn raw in the input line.
        names
            .iter()
            .filter(|name| fuzzy(rest, name) && is_plain(name))
            .map(|name| suggestion(name, None, start, start + rest.len(), false))
            .collect()
    }

    fn complete_models(&self, typed: &str, start: usize) -> Vec<Suggestion> {
        let Ok(data) = self.data.read() else {
            return Vec::new();
        };
        data.models
            .iter()
            .filter(|(id, _)| fuzzy(typed, id))
            .map(|(id, desc)| suggestion(id, Some(desc.clone()), start, start + typed.len(), false))
            .collect()
    }

    fn complete_set(&self, rest: &str, start: usize) -> Vec<Suggestion> {
        let keys = SETTABLE.iter().chain(DISPLAY_SETTINGS.iter());
        let Some((key, typed)) = rest.split_once(' ') else {
            return keys
                .filter(|(k, _)| fuzzy(rest, k))
                .map(|(k, hint)| {
                    suggestion(
                        k,
                        Some((*hint).to_string()),
                        start,
                        start + rest.len(),
                        true,
                    )
                })
                .collect();
        };
        let value_start = start + key.len() + 1;
        let values: Vec<String> = match key {
            "model" => self
                .data
                .read()
                .map(|d| d.models.iter().map(|(id, _)| id.clone()).collect())
                .unwrap_or_default(),
            "wrap" => vec!["no".into(), "auto".into(), "80".into(), "100".into()],
            "enabled_tools" | "enabled_mcp_servers" => {
                return self.complete_list(key, typed, value_start);
            }
            // The words the setting's hint lists (`<dark|light>`, `<number|null>`): the
            // values `.set` accepts, placeholders left out.
            _ => SETTABLE
                .iter()
                .chain(DISPLAY_SETTINGS.iter())
                .find(|(k, _)| *k == key)
                .map(|(_, hint)| {
                    hint.trim_start_matches('<')
                        .trim_end_matches('>')
                        .split('|')
                        .filter(|v| {
                            !matches!(*v, "number" | "width")
                                && v.chars().all(|c| c.is_ascii_lowercase() || c == '-')
                        })
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        };
        values
            .iter()
            .filter(|v| fuzzy(typed, v))
            .map(|v| suggestion(v, None, value_start, value_start + typed.len(), false))
            .collect()
    }

    /// Values of `enabled_tools` / `enabled_mcp_servers`: `all`, the names and the
    /// aliases (`mapping_tools` / `mapping_mcp_servers`), for the item after the last
    /// comma; items already listed are not offered again.
    /// `.mcp prompts|resources|prompt`, server names, a server's prompt names (as last
    /// listed) and their arguments (`name=`).
    fn complete_mcp(&self, rest: &str, start: usize) -> Vec<Suggestion> {
        let words: Vec<&str> = rest.split(' ').collect();
        let last = words.last().copied().unwrap_or_default();
        let at = start + rest.len() - last.len();
        let Some(state) = self.data.read().ok().and_then(|d| d.state.clone()) else {
            return Vec::new();
        };
        let prompts_of = |server: &str| {
            state
                .mcp
                .running(&[server.to_string()])
                .first()
                .map(|s| s.cached_prompts())
                .unwrap_or_default()
        };
        match words.as_slice() {
            [_] => fixed(&["prompts", "resources", "prompt"], last, at),
            ["prompts" | "resources" | "prompt", _] => {
                let names = state.mcp.configured();
                let names: Vec<&str> = names.iter().map(String::as_str).collect();
                fixed(&names, last, at)
            }
            ["prompt", server, _] => {
                let prompts = prompts_of(server);
                prompts
                    .iter()
                    .filter(|p| is_plain(&p.name) && fuzzy(last, &p.name))
                    .map(|p| {
                        let about = p.description.as_deref().map(shown);
                        suggestion(&p.name, about, at, at + last.len(), true)
                    })
                    .collect()
            }
            ["prompt", server, name, given @ ..] => {
                let prompts = prompts_of(server);
                let Some(prompt) = prompts.iter().find(|p| p.name == *name) else {
                    return Vec::new();
                };
                prompt
                    .arguments
                    .iter()
                    .flatten()
                    .filter(|a| is_plain(&a.name))
                    .filter(|a| !given.iter().any(|g| g.starts_with(&format!("{}=", a.name))))
                    .map(|a| format!("{}=", a.name))
                    .filter(|a| fuzzy(last, a))
                    .map(|a| suggestion(&a, None, at, at + last.len(), false))
                    .collect()
            }
            _ => Vec::new(),
        }
    }

    fn complete_list(&self, key: &str, typed: &str, start: usize) -> Vec<Suggestion> {
        let (done, word) = match typed.rfind(',') {
            Some(i) => (&typed[..i], &typed[i + 1..]),
            None => ("", typed),
        };
        let word_start = start + typed.len() - word.len();
        let listed: Vec<&str> = done.split(',').map(str::trim).collect();
        let mut values: Vec<(String, Option<String>)> = vec![("all".into(), None)];
        if done.is_empty() {
            values.push(("null".into(), Some("the configured value".into())));
        }
        if let Some(state) = self.data.read().ok().and_then(|d| d.state.clone()) {
            let (names, aliases) = if key == "enabled_tools" {
                let names = crate::tool::enabled_tools(
                    &state.config,
                    &state.script_tools().tools,
                    Some("all"),
                )
                .iter()
                .map(|t| t.name().to_string())
                .collect::<Vec<_>>();
                (names, &state.config.mapping_tools)
            } else {
                (state.mcp.configured(), &state.config.mapping_mcp_servers)
            };
            values.extend(
                aliases
                    .iter()
                    .map(|(alias, group)| (alias.clone(), Some(format!("= {group}")))),
            );
            values.extend(names.into_iter().map(|n| (n, None)));
        }
        values
            .into_iter()
            .filter(|(v, _)| !listed.contains(&v.as_str()) && fuzzy(word, v))
            .map(|(v, desc)| suggestion(&v, desc, word_start, start + typed.len(), false))
            .collect()
    }
}

/// Commands starting with what was typed; only when none does, fuzzy matches (so `.mo`
/// completes `.model` alone, not also `.macro`).
fn complete_commands(typed: &str) -> Vec<Suggestion> {
    let prefixed = COMMANDS.iter().any(|c| c.name.starts_with(typed));
    COMMANDS
        .iter()
        .filter(|c| {
            if prefixed {
                c.name.starts_with(typed)
            } else {
                fuzzy(typed, c.name)
            }
        })
        .map(|c| {
            suggestion(
                c.name,
                Some(c.help.to_string()),
                0,
                typed.len(),
                !c.args.is_empty(),
            )
        })
        .collect()
}

fn fixed(options: &[&str], typed: &str, start: usize) -> Vec<Suggestion> {
    options
        .iter()
        .filter(|o| fuzzy(typed, o))
        .map(|o| suggestion(o, None, start, start + typed.len(), false))
        .collect()
}

/// Completes the last word of `line` as a path relative to the working directory. A
/// word in double quotes (open or closed) is one path, spaces included; a name with a
/// space comes back quoted, as `.file` splits its words like a shell.
fn complete_path(line: &str) -> Vec<Suggestion> {
    let quotes: Vec<usize> = line.match_indices('"').map(|(i, _)| i).collect();
    let word_start = match quotes.as_slice() {
        // An open quote: the word starts at it.
        [.., last] if quotes.len() % 2 == 1 => *last,
        // A closed quote ending the line: the word starts at its opening quote.
        [.., open, close] if *close + 1 == line.len() => *open,
        _ => line.rfind(' ').map_or(0, |i| i + 1),
    };
    let word = &line[word_start..];
    let quoted = word.starts_with('"');
    let raw = word.trim_start_matches('"').trim_end_matches('"');
    let (dir, prefix) = match raw.rfind('/') {
        Some(i) => (&raw[..=i], &raw[i + 1..]),
        None => ("", raw),
    };
    let read_from = if dir.is_empty() { "." } else { dir };
    let Ok(entries) = std::fs::read_dir(read_from) else {
        return Vec::new();
    };
    let mut out: Vec<Suggestion> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            if !name.starts_with(prefix) || (name.starts_with('.') && !prefix.starts_with('.')) {
                return None;
            }
            let is_dir = e.file_type().map(|t| t.is_dir()).unwrap_or(false);
            let path = format!("{dir}{name}{}", if is_dir { "/" } else { "" });
            let value = if quoted || path.contains(' ') {
                format!("\"{path}\"")
            } else {
                path
            };
            Some(suggestion(&value, None, word_start, line.len(), !is_dir))
        })
        .collect();
    out.sort_by(|a, b| a.value.cmp(&b.value));
    out
}

/// The `@` mention the cursor is in, if any: where its `@` is and what follows it
/// (an opening quote included, for a quoted mention not closed yet).
fn mention_at_end(line: &str) -> Option<(usize, &str)> {
    let starts_word = |at: usize| {
        line[..at]
            .chars()
            .next_back()
            .is_none_or(char::is_whitespace)
    };
    for quote in ["@\"", "@'"] {
        if let Some(at) = line.rfind(quote)
            && starts_word(at)
            && !line[at + 2..].contains(&quote[1..])
        {
            return Some((at, &line[at + 1..]));
        }
    }
    let word_start = line.rfind(char::is_whitespace).map_or(0, |i| {
        i + line[i..].chars().next().map_or(1, char::len_utf8)
    });
    line[word_start..]
        .strip_prefix('@')
        .map(|typed| (word_start, typed))
}

/// Paths for the `@` mention at `at`, fuzzily (`crate::mention::completions`).
fn complete_mention(at: usize, typed: &str, end: usize) -> Vec<Suggestion> {
    let Ok(cwd) = std::env::current_dir() else {
        return Vec::new();
    };
    crate::mention::completions(&cwd, typed)
        .into_iter()
        .filter(|c| is_plain(&c.value))
        .map(|c| {
            let note = c.ignored.then(|| "git-ignored".to_string());
            suggestion(&c.value, note, at, end, !c.is_dir)
        })
        .collect()
}

/// Text from a file (a description, a starter) as the menu may show it: one line, control
/// characters escaped.
fn shown(text: &str) -> String {
    loki_wire::sanitize::approval_line(text).into_owned()
}

/// Whether `name` is shown as it is (nothing for the sanitiser to escape).
fn is_plain(name: &str) -> bool {
    matches!(
        loki_wire::sanitize::approval_line(name),
        std::borrow::Cow::Borrowed(_)
    )
}

fn suggestion(
    value: &str,
    description: Option<String>,
    start: usize,
    end: usize,
    space: bool,
) -> Suggestion {
    Suggestion {
        value: value.to_string(),
        description,
        span: Span { start, end },
        append_whitespace: space,
        ..Suggestion::default()
    }
}

/// Case-insensitive subsequence match: `mdl` matches `.model`.
pub fn fuzzy(typed: &str, candidate: &str) -> bool {
    let mut chars = candidate.chars().map(|c| c.to_ascii_lowercase());
    typed
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .all(|t| chars.any(|c| c == t))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn completer() -> LokiCompleter {
        let data = CompletionData {
            models: vec![
                ("fake:gpt-4o-mini".into(), "d".into()),
                ("local:llama".into(), "d".into()),
            ],
            ..CompletionData::default()
        };
        LokiCompleter::new(Arc::new(RwLock::new(data)))
    }

    #[test]
    fn names_that_would_reach_the_terminal_escaped_are_not_offered() {
        let dir = crate::test_support::tree(&[
            ("rags/docs.yaml", "x"),
            ("rags/evil\u{1b}]52;c;aGk=\u{7}.yaml", "x"),
        ]);
        let data = CompletionData {
            rags_dir: dir.path().join("rags"),
            ..CompletionData::default()
        };
        let c = LokiCompleter::new(Arc::new(RwLock::new(data)));
        assert_eq!(values(c.suggest(".rag ", 5)), ["docs"]);
    }

    fn values(s: Vec<Suggestion>) -> Vec<String> {
        s.into_iter().map(|s| s.value).collect()
    }

    #[test]
    fn agent_variables_and_starters() {
        let dir = crate::test_support::tree(&[(
            "demo/config.yaml",
            "instructions: x\nvariables:\n  - name: user\n    description: Who\n  - name: tone\n    default: calm\nconversation_starters:\n  - Say hello\n  - Plan the day\n",
        )]);
        let data = CompletionData {
            agents_dir: dir.path().to_path_buf(),
            active_agent: Some("demo".into()),
            ..CompletionData::default()
        };
        let c = LokiCompleter::new(Arc::new(RwLock::new(data)));
        assert_eq!(values(c.suggest(".agent dem", 10)), ["demo"]);
        // The built-in agents are offered before any run installed them.
        assert!(values(c.suggest(".agent expl", 11)).contains(&"explore".to_string()));
        let line = ".agent demo ";
        let found = c.suggest(line, line.len());
        assert_eq!(values(found.clone()), ["user=", "tone="]);
        assert_eq!(found[1].description.as_deref(), Some(" (default: calm)"));
        assert_eq!(found[0].span.start, line.len());
        let line = ".agent demo user=ann t";
        assert_eq!(values(c.suggest(line, line.len())), ["tone="]);
        let starters = c.suggest(".starter ", 9);
        assert_eq!(values(starters.clone()), ["1", "2"]);
        assert_eq!(starters[1].description.as_deref(), Some("Plan the day"));
        assert_eq!(values(c.suggest(".delete agent-data dem", 22)), ["demo"]);
        crate::test_support::write_tree(
            dir.path(),
            &[(
                "skills/review/SKILL.md",
                "---\ndescription: Review a file\n---\nReview $ARGUMENTS\n",
            )],
        );
        let data = CompletionData {
            skills_dir: dir.path().join("skills"),
            ..CompletionData::default()
        };
        let c = LokiCompleter::new(Arc::new(RwLock::new(data)));
        let found = c.suggest("/rev", 4);
        assert_eq!(values(found.clone()), ["/review"]);
        assert_eq!(found[0].description.as_deref(), Some("Review a file"));
        assert!(c.suggest("/review x", 9).is_empty());
        std::fs::write(
            dir.path().join("skills/review/SKILL.md"),
            "---\ndescription: Review \u{1b}]52;c;cHduZWQ=\u{7} it\n---\nx\n",
        )
        .unwrap();
        let found = c.suggest("/rev", 4);
        let about = found[0].description.clone().unwrap();
        assert!(
            !about.contains('\u{1b}') && !about.contains('\u{7}'),
            "{about:?}"
        );
    }

    #[test]
    fn role_and_session_names() {
        use crate::session::store::FileSessionStore;
        let dir = crate::test_support::tree(&[("roles/pirate.md", "Arr.")]);
        let store = FileSessionStore::new(dir.path().join("sessions"));
        for name in ["work", "_/20261123T010101-topic"] {
            let alias = crate::session::id::SessionAlias::new(name).unwrap();
            let handle = store.create(Some(alias), Default::default()).unwrap();
            store.save(&handle).unwrap();
        }
        let data = CompletionData {
            roles_dir: dir.path().join("roles"),
            sessions: Some(Arc::new(move || {
                store
                    .list()
                    .iter()
                    .map(crate::session::store::SessionMeta::name)
                    .collect()
            })),
            ..CompletionData::default()
        };
        let c = LokiCompleter::new(Arc::new(RwLock::new(data)));
        assert_eq!(values(c.suggest(".role pir", 9)), ["pirate"]);
        assert!(values(c.suggest(".role ", 6)).contains(&"shell".to_string()));
        // Issue 26 item 14: `.delete role` offers only roles with a file.
        assert_eq!(values(c.suggest(".delete role ", 13)), ["pirate"]);
        assert_eq!(values(c.suggest(".session w", 10)), ["work"]);
        assert_eq!(
            values(c.suggest(".session _/", 11)),
            ["_/20261123T010101-topic"]
        );
        assert_eq!(values(c.suggest(".delete session wo", 18)), ["work"]);
        let s = c.suggest(".delete session wo", 18);
        assert_eq!((s[0].span.start, s[0].span.end), (16, 18));
        assert_eq!(values(c.suggest(".info s", 7)), ["session"]);
        crate::test_support::write_tree(dir.path(), &[("macros/deploy.yaml", "steps: [x]")]);
        let data = CompletionData {
            macros_dir: dir.path().join("macros"),
            ..CompletionData::default()
        };
        let c = LokiCompleter::new(Arc::new(RwLock::new(data)));
        assert_eq!(values(c.suggest(".macro dep", 10)), ["deploy"]);
        assert!(values(c.suggest(".macro ", 7)).contains(&"generate-commit-message".to_string()));
    }

    #[test]
    fn commands_models_and_settings() {
        let c = completer();
        assert_eq!(values(c.suggest(".mo", 3)), [".mode", ".model"]);
        assert!(values(c.suggest(".", 1)).len() >= 10);
        assert_eq!(values(c.suggest(".model lla", 10)), ["local:llama"]);
        let s = c.suggest(".model lla", 10);
        assert_eq!((s[0].span.start, s[0].span.end), (7, 10));
        assert!(values(c.suggest(".set tem", 8)).contains(&"temperature".to_string()));
        assert_eq!(values(c.suggest(".set stream f", 13)), ["false"]);
        // Each setting offers the values it takes, not `true false` for all.
        assert_eq!(values(c.suggest(".set theme ", 11)), ["dark", "light"]);
        assert_eq!(
            values(c.suggest(".set sandbox ", 13)),
            ["read-only", "workspace-write", "danger-full-access"]
        );
        assert_eq!(
            values(c.suggest(".set save_session ", 18)),
            ["true", "false", "null"]
        );
        assert_eq!(values(c.suggest(".set temperature ", 17)), ["null"]);
        assert!(c.suggest(".set rag_top_k ", 15).is_empty());
        assert!(c.suggest("hello", 5).is_empty());
    }

    #[test]
    fn file_paths_with_spaces_are_quoted_and_completed_inside_quotes() {
        let dir = crate::test_support::tree(&[("my dir/b c.txt", "x"), ("plain.txt", "x")]);
        let root = dir.path().display().to_string();
        let line = format!(".file {root}/my");
        assert_eq!(
            values(complete_path(&line)),
            [format!("\"{root}/my dir/\"")]
        );
        // Tab again on the quoted directory, and on an open quote.
        for line in [
            format!(".file \"{root}/my dir/\""),
            format!(".file \"{root}/my dir/b"),
        ] {
            let found = complete_path(&line);
            assert_eq!(
                values(found.clone()),
                [format!("\"{root}/my dir/b c.txt\"")]
            );
            assert_eq!(found[0].span.start, 6, "{line}");
        }
        let line = format!(".file {root}/pla");
        assert_eq!(values(complete_path(&line)), [format!("{root}/plain.txt")]);
    }

    #[test]
    fn the_mention_under_the_cursor() {
        assert_eq!(mention_at_end("explain @no"), Some((8, "no")));
        assert_eq!(mention_at_end("@src/ma"), Some((0, "src/ma")));
        assert_eq!(mention_at_end("read @\"my no"), Some((5, "\"my no")));
        assert_eq!(mention_at_end("read @\"my notes.txt\" and"), None);
        assert_eq!(mention_at_end("mail me@exa"), None);
        assert_eq!(mention_at_end("explain it"), None);
    }

    #[test]
    fn fuzzy_matching() {
        assert!(fuzzy("mdl", ".model"));
        assert!(fuzzy("", "x"));
        assert!(!fuzzy("xyz", ".model"));
    }
}
