//! An agent's `config.yaml`: its model and sampling, instructions, variables, starters,
//! tools and MCP servers, session, and the settings of later features (todo
//! auto-continuation, sub-agents) kept so a Loki agent directory loads unchanged.

use serde::Deserialize;

use crate::config::Env;

/// One declared variable.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Variable {
    /// Its name (`{{name}}` in instructions, `LLM_AGENT_VAR_<NAME>` for tools).
    pub name: String,
    /// What it is, shown when it is asked for.
    #[serde(default)]
    pub description: String,
    /// Used when no value is given.
    #[serde(default)]
    pub default: Option<String>,
}

/// `agents/<name>/config.yaml`.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct AgentConfig {
    /// Display name (the directory name when empty).
    pub name: String,
    /// One line about the agent.
    pub description: String,
    /// Version shown with the starters (a number or a string).
    pub version: Option<serde_yaml::Value>,
    /// `client:model`; the conversation's model when unset.
    pub model: Option<String>,
    /// Temperature.
    pub temperature: Option<f64>,
    /// Top-p.
    pub top_p: Option<f64>,
    /// The system prompt (`{{variable}}`, `{{__tools__}}` and system variables
    /// interpolated).
    pub instructions: String,
    /// Use the tools file's `_instructions` function instead of `instructions`.
    pub dynamic_instructions: bool,
    /// Declared variables.
    pub variables: Vec<Variable>,
    /// Suggested first prompts (`.starter`).
    pub conversation_starters: Vec<String>,
    /// Sources of the agent's knowledge base.
    pub documents: Vec<String>,
    /// MCP servers (names in `functions/mcp.json`).
    pub mcp_servers: Vec<String>,
    /// Global tools the agent may use (`fs_read.sh`, `web_search`, …).
    pub global_tools: Vec<String>,
    /// The permission mode the agent sets when it starts (`default`, `accept-edits`,
    /// `plan`, `yolo`); as a sub-agent it can only tighten its tree's.
    pub permission_mode: Option<String>,
    /// The sandbox mode its commands run in (`read-only`, `workspace-write`); it can only
    /// tighten the conversation's sandbox, never loosen it.
    pub sandbox: Option<String>,
    /// The session opened when none is named (`temp` for a fresh one each time).
    pub agent_session: Option<String>,
    /// Session compression threshold for this agent.
    pub compression_threshold: Option<usize>,
    /// Keep going while todo items are open.
    pub auto_continue: bool,
    /// Most automatic continuations in a row (default 10).
    pub max_auto_continues: Option<usize>,
    /// Add the todo instructions to the system prompt (default true).
    pub inject_todo_instructions: Option<bool>,
    /// The message that asks the agent to go on (the list is appended).
    pub continuation_prompt: Option<String>,
    /// May start sub-agents.
    pub can_spawn_agents: bool,
    /// Sub-agents running at once.
    pub max_concurrent_agents: Option<usize>,
    /// Deepest sub-agent nesting.
    pub max_agent_depth: Option<usize>,
    /// Most tokens (in and out) one run may spend, its sub-agents included.
    pub max_tokens: Option<u64>,
    /// Most US dollars one run may spend, its sub-agents included (needs model prices).
    pub max_cost: Option<f64>,
    /// The model that shortens a sub-agent's long answer before the parent reads it.
    pub summarization_model: Option<String>,
    /// Answers longer than this many characters are summarised (default 20000).
    pub summarization_threshold: Option<usize>,
    /// How long a sub-agent's escalated question waits for an answer, in seconds
    /// (default 300).
    pub escalation_timeout: Option<u64>,
}

/// An `<AGENT>_*` environment override whose value does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{var}: expected {expected}")]
pub struct EnvOverrideError {
    /// The variable (`MY_AGENT_TEMPERATURE`).
    pub var: String,
    /// What it should hold (`a number`).
    pub expected: &'static str,
}

impl AgentConfig {
    /// Applies the `<AGENT>_*` environment overrides (`<AGENT>` is the agent's name in
    /// capitals, `-` as `_`): `_MODEL`, `_TEMPERATURE`, `_TOP_P`, `_AGENT_SESSION`,
    /// `_INSTRUCTIONS`, and JSON lists for `_GLOBAL_TOOLS`, `_MCP_SERVERS` and
    /// `_VARIABLES`. A value that does not parse is an error naming the variable.
    pub fn apply_env(&mut self, agent: &str, env: &Env) -> Result<(), EnvOverrideError> {
        let prefix = env_prefix(agent);
        let get = |key: &str| env.get(&format!("{prefix}_{key}")).map(str::to_string);
        let bad = |key: &str, expected: &'static str| EnvOverrideError {
            var: format!("{prefix}_{key}"),
            expected,
        };
        if let Some(model) = get("MODEL") {
            self.model = Some(model);
        }
        for (key, slot) in [
            ("TEMPERATURE", &mut self.temperature),
            ("TOP_P", &mut self.top_p),
        ] {
            if let Some(value) = get(key) {
                *slot = Some(value.parse().map_err(|_| bad(key, "a number"))?);
            }
        }
        if let Some(session) = get("AGENT_SESSION") {
            self.agent_session = Some(session);
        }
        if let Some(instructions) = get("INSTRUCTIONS") {
            self.instructions = instructions;
        }
        for (key, slot) in [
            ("GLOBAL_TOOLS", &mut self.global_tools),
            ("MCP_SERVERS", &mut self.mcp_servers),
        ] {
            if let Some(value) = get(key) {
                *slot =
                    serde_json::from_str(&value).map_err(|_| bad(key, "a JSON list of names"))?;
            }
        }
        if let Some(value) = get("VARIABLES") {
            #[derive(Deserialize)]
            struct Given {
                name: String,
                #[serde(default)]
                description: String,
                #[serde(default, alias = "value")]
                default: Option<String>,
            }
            let given: Vec<Given> = serde_json::from_str(&value)
                .map_err(|_| bad("VARIABLES", "a JSON list of {name, description, default}"))?;
            self.variables = given
                .into_iter()
                .map(|g| Variable {
                    name: g.name,
                    description: g.description,
                    default: g.default,
                })
                .collect();
        }
        Ok(())
    }
}

/// `my-agent` → `MY_AGENT`: the prefix of an agent's environment overrides.
pub fn env_prefix(agent: &str) -> String {
    crate::config::env::env_name(agent)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn environment_overrides_replace_the_file_s_values() {
        let mut config: AgentConfig = serde_yaml::from_str(
            "model: a:b\ntemperature: 0.5\nglobal_tools: [fs_read.sh]\nvariables:\n  - name: x\n    description: X\n",
        )
        .unwrap();
        let env = Env::from_pairs([
            ("MY_AGENT_MODEL", "c:d"),
            ("MY_AGENT_TOP_P", "0.9"),
            ("MY_AGENT_GLOBAL_TOOLS", r#"["web_search"]"#),
            ("MY_AGENT_VARIABLES", r#"[{"name":"y","value":"1"}]"#),
        ]);
        config.apply_env("my-agent", &env).unwrap();
        assert_eq!(config.model.as_deref(), Some("c:d"));
        assert_eq!(config.temperature, Some(0.5));
        assert_eq!(config.top_p, Some(0.9));
        assert_eq!(config.global_tools, ["web_search"]);
        assert_eq!(config.variables[0].name, "y");
        assert_eq!(config.variables[0].default.as_deref(), Some("1"));
        let broken = Env::from_pairs([("MY_AGENT_TEMPERATURE", "hot")]);
        let error = config.apply_env("my-agent", &broken).unwrap_err();
        assert_eq!(error.to_string(), "MY_AGENT_TEMPERATURE: expected a number");
    }
}
