//! Agents: a directory `agents/<name>/` with a `config.yaml` (model, instructions,
//! variables, starters, the global tools and MCP servers it may use), an optional tools
//! file (`tools.sh` with `# @cmd` functions, `tools.py` with public functions or `tools.ts`
//! with exported functions) and an
//! optional `.env`. An active agent is the conversation's system prompt, model and tool
//! scope: it sees only its own tools, its `global_tools` and its `mcp_servers`. Its tools
//! run with `LLM_AGENT_*` variables (its name, directory, cache, the function called) and
//! one `LLM_AGENT_VAR_<NAME>` per variable. Its sessions live under its directory.
//!
//! Built-in agents are embedded and written to the agents directory on first run, never
//! over a user's file.

mod claude;
pub mod config;
pub mod task_types;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use config::{AgentConfig, Variable};

use crate::config::{Env, Paths};
use crate::tool::script::{ScriptError, ScriptTool};

/// Why an agent cannot be used; each is one line for the user.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    /// No such agent directory.
    #[error("no agent named `{name}` (see --list-agents)")]
    Unknown {
        /// The name asked for.
        name: String,
    },
    /// The name would leave the agents directory.
    #[error("invalid agent name `{name}`: use letters, digits, `-` and `_`")]
    InvalidName {
        /// The name.
        name: String,
    },
    /// `config.yaml` cannot be read or parsed, or an override is malformed.
    #[error("{path}: {message}")]
    Config {
        /// The file (or the environment variable).
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The tools file declares something that cannot be offered.
    #[error("{0}")]
    Tools(String),
    /// A variable's default names secrets found in neither the vault nor the environment.
    #[error(
        "agent `{agent}`: variable `{variable}` defaults to the secret(s) {names}, in neither the vault nor the environment (add with `loki --add-secret NAME`)"
    )]
    MissingSecrets {
        /// The agent.
        agent: String,
        /// The variable.
        variable: String,
        /// Comma-separated names.
        names: String,
    },
    /// The vault holding a variable default's secrets could not be opened.
    #[error("agent `{agent}`: {message}")]
    Vault {
        /// The agent.
        agent: String,
        /// Why.
        message: String,
    },
    /// Variables without a value and nobody to ask.
    #[error(
        "agent `{agent}` needs values for: {}; give them with --agent-variable NAME VALUE (or `.agent {agent} NAME=VALUE`)",
        shown(missing)
    )]
    MissingVariables {
        /// The agent.
        agent: String,
        /// Each missing variable: its name and description.
        missing: Vec<(String, String)>,
    },
    /// A value given for a variable the agent does not declare.
    #[error("agent `{agent}` has no variable `{name}` (it declares: {declared})")]
    UnknownVariable {
        /// The agent.
        agent: String,
        /// The name given.
        name: String,
        /// What it declares, comma-separated.
        declared: String,
    },
}

/// `name (description), name` for the missing-variables message.
fn shown(missing: &[(String, String)]) -> String {
    missing
        .iter()
        .map(|(name, description)| {
            if description.is_empty() {
                name.clone()
            } else {
                format!("{name} ({description})")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// An agent as defined on disk.
#[derive(Debug, Clone)]
pub struct AgentDef {
    /// Its name (the directory's).
    pub name: String,
    /// Its directory.
    pub dir: PathBuf,
    /// `config.yaml`, with the environment's overrides applied.
    pub config: AgentConfig,
    /// The functions of its tools file.
    pub tools: Vec<Arc<ScriptTool>>,
}

/// An agent in use by a conversation: its definition, the values of its variables, and
/// the environment its tools run in.
#[derive(Debug, Clone)]
pub struct ActiveAgent {
    /// The definition.
    pub def: Arc<AgentDef>,
    /// A value for each declared variable.
    pub variables: BTreeMap<String, String>,
    /// The conversation's environment before the agent was activated.
    pub base_env: Arc<Env>,
    /// Variables whose value came from secrets (their defaults' `{{NAME}}`): never
    /// written to the session, looked up again when it is resumed.
    pub from_secrets: Vec<String>,
}

impl ActiveAgent {
    /// The variables a session keeps: all but those that came from secrets.
    pub fn saved_variables(&self) -> BTreeMap<String, String> {
        self.variables
            .iter()
            .filter(|(name, _)| !self.from_secrets.contains(name))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect()
    }
}

/// Agent names: directories of `agents_dir` with a `config.yaml`, sorted; hidden ones
/// (`.shared`) left out.
pub fn list(agents_dir: &Path) -> Vec<String> {
    list_in(agents_dir, None)
}

/// [`list`] with a trusted project's Claude Code agents and the user's
/// (`~/.claude/agents`).
pub fn list_in(agents_dir: &Path, project: Option<&Path>) -> Vec<String> {
    let mut names = own(agents_dir);
    // The built-in ones are there from the first run that uses agents (information
    // commands write nothing, so they may not be installed yet).
    let builtins = BUILTIN.iter().map(|(agent, _, _)| (*agent).to_string());
    let user = user_agents()
        .map(|dir| claude::names(&dir))
        .unwrap_or_default();
    for name in builtins
        .chain(project.map(claude::names).unwrap_or_default())
        .chain(user)
    {
        if !names.contains(&name) {
            names.push(name);
        }
    }
    names.sort();
    names
}

/// The user's Claude Code agents (`~/.claude/agents`), when there are any: the user's
/// own, so they need no trust; a project's agent of the same name wins.
fn user_agents() -> Option<std::path::PathBuf> {
    let dir = dirs::home_dir()?.join(".claude").join("agents");
    dir.is_dir().then_some(dir)
}

fn own(agents_dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(agents_dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter(|e| e.path().join("config.yaml").is_file())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

impl AgentDef {
    /// Reads `agents/<name>/`: the config (with `env`'s overrides) and the tools file.
    pub fn load(paths: &Paths, name: &str, env: &Env) -> Result<Self, AgentError> {
        if !valid_name(name) {
            return Err(AgentError::InvalidName { name: name.into() });
        }
        let dir = paths.agents_dir.join(name);
        let file = dir.join("config.yaml");
        let text =
            match crate::atomic_file::read_regular_text(&file, crate::atomic_file::MAX_CONFIG_FILE)
            {
                Ok(text) => text,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    return match paths
                        .project_agents
                        .as_deref()
                        .and_then(|project| claude::load(project, name))
                        .or_else(|| user_agents().and_then(|user| claude::load(&user, name)))
                    {
                        Some(config) => Ok(Self {
                            name: name.to_string(),
                            dir,
                            config,
                            tools: Vec::new(),
                        }),
                        None => Err(AgentError::Unknown { name: name.into() }),
                    };
                }
                Err(e) => {
                    return Err(AgentError::Config {
                        path: file.display().to_string(),
                        message: e.to_string(),
                    });
                }
            };
        let config_error = |message: String| AgentError::Config {
            path: file.display().to_string(),
            message,
        };
        let text = crate::config::yaml::strip_bom(&text);
        let mut config: AgentConfig = if text.trim().is_empty() {
            AgentConfig::default()
        } else {
            serde_yaml::from_str(text).map_err(|e| config_error(e.to_string()))?
        };
        config
            .apply_env(name, env)
            .map_err(|e| AgentError::Config {
                path: "environment".into(),
                message: e.to_string(),
            })?;
        let tools = match tools_file(&dir) {
            Some(path) => crate::tool::script::parse_agent_tools(&path)
                .map_err(|e: ScriptError| AgentError::Tools(e.to_string()))?,
            None => Vec::new(),
        };
        Ok(Self {
            name: name.to_string(),
            dir,
            config,
            tools: tools.into_iter().map(Arc::new).collect(),
        })
    }

    /// Where its sessions are stored.
    pub fn sessions_dir(&self) -> PathBuf {
        self.dir.join("sessions")
    }

    /// A value for every declared variable: `given` first, then defaults. Missing ones
    /// are [`AgentError::MissingVariables`] (the front end may ask for them and retry);
    /// names it does not declare are refused.
    pub fn resolve_variables(
        &self,
        given: &[(String, String)],
    ) -> Result<BTreeMap<String, String>, AgentError> {
        let declared = &self.config.variables;
        if let Some((name, _)) = given
            .iter()
            .find(|(n, _)| !declared.iter().any(|v| &v.name == n))
        {
            return Err(AgentError::UnknownVariable {
                agent: self.name.clone(),
                name: name.clone(),
                declared: if declared.is_empty() {
                    "none".into()
                } else {
                    declared
                        .iter()
                        .map(|v| v.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            });
        }
        let mut values = BTreeMap::new();
        let mut missing = Vec::new();
        for variable in declared {
            let value = given
                .iter()
                .rev()
                .find(|(n, _)| n == &variable.name)
                .map(|(_, v)| v.clone())
                .or_else(|| variable.default.clone());
            match value {
                Some(value) => {
                    values.insert(variable.name.clone(), value);
                }
                None => missing.push((variable.name.clone(), variable.description.clone())),
            }
        }
        if !missing.is_empty() {
            return Err(AgentError::MissingVariables {
                agent: self.name.clone(),
                missing,
            });
        }
        Ok(values)
    }

    /// `values` with each default that names secrets (`default: '{{MY_USERNAME}}'`)
    /// filled in from the vault, else the environment, and the names of the variables
    /// filled so; a value the user `given` is taken as it is. A name found in neither is
    /// an error naming it.
    pub fn resolve_secrets(
        &self,
        mut values: BTreeMap<String, String>,
        given: &[(String, String)],
        keyring: &crate::vault::Keyring,
        env: &Env,
    ) -> Result<(BTreeMap<String, String>, Vec<String>), AgentError> {
        let mut from_secrets = Vec::new();
        for variable in &self.config.variables {
            if given.iter().any(|(n, _)| n == &variable.name) {
                continue;
            }
            let Some(value) = values.get_mut(&variable.name) else {
                continue;
            };
            if crate::vault::placeholder_names(value, false).is_empty() {
                continue;
            }
            let from_vault =
                crate::vault::substitute(keyring, value).map_err(|e| AgentError::Vault {
                    agent: self.name.clone(),
                    message: e.to_string(),
                })?;
            let filled = crate::config::env::replace_placeholders(&from_vault, |n| env.get(n));
            let missing = crate::vault::placeholder_names(&filled, false);
            if !missing.is_empty() {
                return Err(AgentError::MissingSecrets {
                    agent: self.name.clone(),
                    variable: variable.name.clone(),
                    names: missing.join(", "),
                });
            }
            *value = filled;
            from_secrets.push(variable.name.clone());
        }
        Ok((values, from_secrets))
    }

    /// The system prompt: `instructions` (or, with `dynamic_instructions`, `dynamic`: what
    /// the tools file's `_instructions` printed) with `{{variable}}`, the system variables
    /// and `{{__tools__}}` (a numbered list of `tools`' names and first description lines)
    /// filled in.
    pub fn instructions(
        &self,
        dynamic: Option<&str>,
        variables: &BTreeMap<String, String>,
        system: &crate::role::SystemVars,
        tools: &[(String, String)],
    ) -> String {
        let mut text = dynamic.map_or_else(|| self.config.instructions.clone(), str::to_string);
        if text.contains("{{__tools__}}") {
            let list: Vec<String> = tools
                .iter()
                .enumerate()
                .map(|(i, (name, description))| {
                    let first = description.lines().next().unwrap_or_default();
                    format!("{}. {name}: {first}", i + 1)
                })
                .collect();
            text = text.replace("{{__tools__}}", &list.join("\n"));
        }
        for (name, value) in variables {
            text = text.replace(&format!("{{{{{name}}}}}"), value);
        }
        system.interpolate(&text)
    }

    /// Runs the tools file's `_instructions` function (bash, Python or TypeScript) in the tools'
    /// environment `env` and working directory `cwd`; what it wrote to `$LLM_OUTPUT` (or
    /// printed) is the agent's instructions.
    pub async fn dynamic_instructions(&self, env: &Env, cwd: &Path) -> Result<String, AgentError> {
        let failed =
            |message: String| AgentError::Tools(format!("{}: _instructions: {message}", self.name));
        let Some(file) = tools_file(&self.dir) else {
            return Err(failed("the agent has no tools file".into()));
        };
        let output = OutputFile::create().map_err(|e| failed(e.to_string()))?;
        let extension = file.extension().and_then(|e| e.to_str()).unwrap_or("");
        let mut command = if extension == "ts" {
            let text =
                crate::atomic_file::read_regular_text(&file, crate::atomic_file::MAX_CONFIG_FILE)
                    .unwrap_or_default();
            let mut words = crate::tool::script::interpreter_of(&text)
                .unwrap_or_else(|| vec!["npx".into(), "tsx".into()]);
            let program = words.remove(0);
            let mut command = tokio::process::Command::new(program);
            command.args(words).arg("-e").arg(concat!(
                "(async () => {\n",
                "const { pathToFileURL } = await import('node:url');\n",
                "const m = await import(pathToFileURL(process.env.LLM_TOOL_PATH).href);\n",
                "const result = await m._instructions();\n",
                "if (result !== undefined && result !== null) process.stdout.write(String(result));\n",
                "})().catch((e) => { console.error(String(e && e.stack || e)); process.exit(1); });\n",
            ));
            command.env("LLM_TOOL_PATH", &file);
            command
        } else if extension == "py" {
            let mut command = tokio::process::Command::new("python3");
            command.arg("-c").arg(concat!(
                "import importlib.util, sys\n",
                "spec = importlib.util.spec_from_file_location('tools', sys.argv[1])\n",
                "module = importlib.util.module_from_spec(spec)\n",
                "spec.loader.exec_module(module)\n",
                "result = module._instructions()\n",
                "if result is not None:\n",
                "    print(result, end='')\n",
            ));
            command.arg(&file);
            command
        } else {
            let mut command = tokio::process::Command::new("bash");
            command
                .arg("-c")
                .arg("argc() { :; }\nsource \"$1\"\n_instructions\n")
                .arg("_instructions")
                .arg(&file);
            command
        };
        command
            .env_clear()
            .envs(env.pairs())
            .env("LLM_OUTPUT", output.path())
            .env("LLM_AGENT_FUNC", "_instructions")
            .current_dir(cwd)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        let run = tokio::time::timeout(std::time::Duration::from_secs(30), command.output());
        let done = match run.await {
            Ok(Ok(done)) => done,
            Ok(Err(e)) => return Err(failed(e.to_string())),
            Err(_) => return Err(failed("no answer within 30 s".into())),
        };
        if !done.status.success() {
            let stderr = String::from_utf8_lossy(&done.stderr);
            return Err(failed(format!("{} {}", done.status, stderr.trim())));
        }
        let written = std::fs::read_to_string(output.path()).unwrap_or_default();
        let text = if written.trim().is_empty() {
            String::from_utf8_lossy(&done.stdout).into_owned()
        } else {
            written
        };
        if text.trim().is_empty() {
            return Err(failed("it returned nothing".into()));
        }
        Ok(text)
    }

    /// The environment its tools run in: `base`, its `.env` (not overriding), and the
    /// `LLM_AGENT_*` variables.
    pub fn tool_env(
        &self,
        base: &Env,
        variables: &BTreeMap<String, String>,
        cache_dir: &Path,
    ) -> Result<Env, AgentError> {
        let mut pairs: Vec<(String, String)> = base
            .pairs()
            .filter(|(k, _)| !k.starts_with("LLM_AGENT_"))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut dotenv = Env::default();
        dotenv
            .load_dotenv(&self.dir.join(".env"))
            .map_err(|e| AgentError::Config {
                path: self.dir.join(".env").display().to_string(),
                message: e.to_string(),
            })?;
        for (k, v) in dotenv.pairs() {
            if base.get(k).is_none() {
                pairs.push((k.to_string(), v.to_string()));
            }
        }
        let cache = cache_dir.join("agents").join(&self.name);
        pairs.push(("LLM_AGENT_NAME".into(), self.name.clone()));
        pairs.push(("LLM_AGENT_ROOT_DIR".into(), self.dir.display().to_string()));
        pairs.push(("LLM_AGENT_CACHE_DIR".into(), cache.display().to_string()));
        for (name, value) in variables {
            pairs.push((
                format!("LLM_AGENT_VAR_{}", config::env_prefix(name)),
                value.clone(),
            ));
        }
        Ok(Env::from_pairs(pairs))
    }
}

/// A private temporary file for `$LLM_OUTPUT`, removed when dropped.
struct OutputFile(PathBuf);

impl OutputFile {
    fn create() -> std::io::Result<Self> {
        let path = std::env::temp_dir().join(format!(
            "loki-instructions.{}.{:08x}",
            std::process::id(),
            fastrand::u32(..)
        ));
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        options.open(&path)?;
        Ok(Self(path))
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The knowledge base an agent with `documents` uses: `agent-<name>`.
pub fn knowledge_base_name(agent: &str) -> String {
    format!("agent-{agent}")
}

/// The tools file of an agent directory: `tools.sh`, else `tools.py`, else `tools.ts`.
/// The agent's tools file: whatever is there under one of the names (anything but a
/// regular file is then refused when it is read, naming it).
fn tools_file(dir: &Path) -> Option<PathBuf> {
    ["tools.sh", "tools.py", "tools.ts"]
        .iter()
        .map(|name| dir.join(name))
        .find(|path| std::fs::symlink_metadata(path).is_ok())
}

/// The built-in agents: `(agent, file, contents)`.
const BUILTIN: &[(&str, &str, &str)] = &[
    (
        "coder",
        "config.yaml",
        include_str!("../../assets/agents/coder/config.yaml"),
    ),
    (
        "explore",
        "config.yaml",
        include_str!("../../assets/agents/explore/config.yaml"),
    ),
    (
        "explore",
        "tools.sh",
        include_str!("../../assets/agents/explore/tools.sh"),
    ),
    (
        "oracle",
        "config.yaml",
        include_str!("../../assets/agents/oracle/config.yaml"),
    ),
    (
        "sisyphus",
        "config.yaml",
        include_str!("../../assets/agents/sisyphus/config.yaml"),
    ),
    (
        "code-reviewer",
        "config.yaml",
        include_str!("../../assets/agents/code-reviewer/config.yaml"),
    ),
    (
        "code-reviewer",
        "tools.sh",
        include_str!("../../assets/agents/code-reviewer/tools.sh"),
    ),
    (
        "file-reviewer",
        "config.yaml",
        include_str!("../../assets/agents/file-reviewer/config.yaml"),
    ),
    (
        "file-reviewer",
        "tools.sh",
        include_str!("../../assets/agents/file-reviewer/tools.sh"),
    ),
    (
        "sql",
        "config.yaml",
        include_str!("../../assets/agents/sql/config.yaml"),
    ),
    (
        "sql",
        "tools.sh",
        include_str!("../../assets/agents/sql/tools.sh"),
    ),
    (
        "demo",
        "config.yaml",
        include_str!("../../assets/agents/demo/config.yaml"),
    ),
    (
        "demo",
        "tools.py",
        include_str!("../../assets/agents/demo/tools.py"),
    ),
];

/// Writes the built-in agents into `agents_dir`; an agent whose directory exists is left
/// alone (a user's edits, or a user's own agent of that name, stay whole).
pub fn install_builtins(agents_dir: &Path) -> std::io::Result<()> {
    let existing: Vec<&str> = BUILTIN
        .iter()
        .map(|(agent, _, _)| *agent)
        .filter(|agent| agents_dir.join(agent).exists())
        .collect();
    for (agent, file, text) in BUILTIN {
        if existing.contains(agent) {
            continue;
        }
        let path = agents_dir.join(agent).join(file);
        crate::atomic_file::write_atomic(&path, text.as_bytes(), false)?;
        #[cfg(unix)]
        if file.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(variables: &str) -> AgentDef {
        AgentDef {
            name: "demo".into(),
            dir: PathBuf::from("/nowhere"),
            config: serde_yaml::from_str(&format!(
                "instructions: 'Hi {{{{user}}}} on {{{{__os__}}}}.\n{{{{__tools__}}}}'\nvariables:\n{variables}"
            ))
            .unwrap(),
            tools: Vec::new(),
        }
    }

    #[test]
    fn variables_come_from_flags_then_defaults_and_missing_ones_are_listed() {
        let agent =
            def("  - name: user\n    description: Who\n  - name: tone\n    default: calm\n");
        let given = vec![("user".to_string(), "Ada".to_string())];
        let values = agent.resolve_variables(&given).unwrap();
        assert_eq!(values["user"], "Ada");
        assert_eq!(values["tone"], "calm");
        let missing = agent.resolve_variables(&[]).unwrap_err();
        assert_eq!(
            missing.to_string(),
            "agent `demo` needs values for: user (Who); give them with --agent-variable NAME VALUE (or `.agent demo NAME=VALUE`)"
        );
        let unknown = agent
            .resolve_variables(&[("nope".into(), "1".into())])
            .unwrap_err();
        assert!(
            matches!(unknown, AgentError::UnknownVariable { .. }),
            "{unknown}"
        );
    }

    #[test]
    fn instructions_fill_variables_system_variables_and_the_tool_list() {
        let agent = def("  - name: user\n");
        let values = BTreeMap::from([("user".to_string(), "Ada".to_string())]);
        let system = crate::role::SystemVars::detect(&Env::default(), Path::new("/tmp"));
        let tools = vec![("fs_cat".to_string(), "Read a file.\nMore.".to_string())];
        let text = agent.instructions(None, &values, &system, &tools);
        assert!(text.starts_with("Hi Ada on "), "{text}");
        assert!(!text.contains("{{"), "{text}");
        assert!(text.ends_with("1. fs_cat: Read a file."), "{text}");
    }
}
