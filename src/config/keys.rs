//! The table of top-level config keys: their value kind, which drives `LOKI_<KEY>`
//! environment overrides, and (later) `.set` validation and completion.
//!
//! A unit test checks that every key here appears in `config.example.yaml` and that the
//! example parses without unknown-key warnings, so the table and the example cannot drift.

/// How the text of a `LOKI_<KEY>` variable becomes a YAML value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// Taken verbatim as a string.
    Str,
    /// `true`/`false`/`1`/`0`/`yes`/`no`/`on`/`off`.
    Bool,
    /// A decimal number.
    Float,
    /// A non-negative integer.
    Int,
    /// Parsed as a YAML scalar: `true`, `null`, `80`, `auto` (mixed-type keys).
    Scalar,
    /// A JSON document (maps and lists).
    Json,
}

/// Every top-level key of `config.yaml`, in the order `config.example.yaml` documents them.
/// `clients` is absent on purpose: it cannot be overridden from the environment.
pub const KEYS: &[(&str, KeyKind)] = &[
    ("model", KeyKind::Str),
    ("temperature", KeyKind::Float),
    ("top_p", KeyKind::Float),
    ("reasoning_effort", KeyKind::Str),
    ("fallback_models", KeyKind::Json),
    ("dry_run", KeyKind::Bool),
    ("stream", KeyKind::Bool),
    ("save", KeyKind::Bool),
    ("keybindings", KeyKind::Str),
    ("editor", KeyKind::Str),
    ("wrap", KeyKind::Scalar),
    ("wrap_code", KeyKind::Bool),
    ("highlight", KeyKind::Bool),
    ("theme", KeyKind::Str),
    ("light_theme", KeyKind::Bool),
    ("left_prompt", KeyKind::Str),
    ("right_prompt", KeyKind::Str),
    ("status_line", KeyKind::Json),
    ("user_agent", KeyKind::Str),
    ("stream_idle_timeout", KeyKind::Int),
    ("request_timeout", KeyKind::Int),
    ("max_stream_event_size", KeyKind::Int),
    ("save_shell_history", KeyKind::Bool),
    ("sync_models_url", KeyKind::Str),
    ("vault_password_file", KeyKind::Str),
    ("function_calling_support", KeyKind::Bool),
    ("mapping_tools", KeyKind::Json),
    ("enabled_tools", KeyKind::Str),
    ("yolo", KeyKind::Bool),
    ("auto_approve_tools", KeyKind::Json),
    ("deny_tools", KeyKind::Json),
    ("sandbox", KeyKind::Scalar),
    ("additional_directories", KeyKind::Json),
    ("tool_env_passthrough", KeyKind::Json),
    ("max_tool_rounds", KeyKind::Int),
    ("max_cost", KeyKind::Float),
    ("tool_timeout", KeyKind::Int),
    ("max_tool_output", KeyKind::Int),
    ("stale_tool_results", KeyKind::Int),
    ("load_tools_after", KeyKind::Int),
    ("lsp_servers", KeyKind::Json),
    ("lsp_diagnostics_timeout", KeyKind::Float),
    ("web_search", KeyKind::Str),
    ("web_search_url", KeyKind::Str),
    ("visible_tools", KeyKind::Json),
    ("mcp_server_support", KeyKind::Bool),
    ("mapping_mcp_servers", KeyKind::Json),
    ("enabled_mcp_servers", KeyKind::Str),
    ("mcp_tool_exposure", KeyKind::Str),
    ("mcp_pool", KeyKind::Json),
    ("mcp_max_message_size", KeyKind::Int),
    ("mcp_start_wait", KeyKind::Int),
    ("repl_prelude", KeyKind::Str),
    ("cmd_prelude", KeyKind::Str),
    ("agent_session", KeyKind::Str),
    ("save_session", KeyKind::Scalar),
    ("history", KeyKind::Bool),
    ("history_max_sessions", KeyKind::Int),
    ("history_max_mb", KeyKind::Int),
    ("compression_threshold", KeyKind::Int),
    ("summarization_prompt", KeyKind::Str),
    ("summary_context_prompt", KeyKind::Str),
    ("compaction_share", KeyKind::Int),
    ("small_model", KeyKind::Str),
    ("delegation", KeyKind::Bool),
    ("workspace_dir", KeyKind::Str),
    ("memory", KeyKind::Bool),
    ("memory_top_k", KeyKind::Int),
    ("memory_recent_days", KeyKind::Int),
    ("memory_flush", KeyKind::Str),
    ("rag_embedding_model", KeyKind::Str),
    ("rag_reranker_model", KeyKind::Str),
    ("rag_top_k", KeyKind::Int),
    ("rag_chunk_size", KeyKind::Int),
    ("rag_chunk_overlap", KeyKind::Int),
    ("rag_template", KeyKind::Str),
    ("document_loaders", KeyKind::Json),
    ("max_input_size", KeyKind::Int),
    ("allow_special_files", KeyKind::Bool),
    ("serve_addr", KeyKind::Str),
    ("session_store", KeyKind::Str),
    ("api", KeyKind::Json),
];

/// Legacy AIChat spellings accepted in `config.yaml`, with their current names.
pub const LEGACY_KEYS: &[(&str, &str)] = &[
    ("function_calling", "function_calling_support"),
    ("use_tools", "enabled_tools"),
    ("agent_prelude", "agent_session"),
    ("compress_threshold", "compression_threshold"),
    ("summarize_prompt", "summarization_prompt"),
    ("summary_prompt", "summary_context_prompt"),
];

/// The environment variable that overrides `key`.
pub fn env_var_for(key: &str) -> String {
    format!("LOKI_{}", key.to_ascii_uppercase())
}

/// An override variable whose text is not a value of its key's kind.
#[derive(Debug, thiserror::Error)]
pub enum OverrideError {
    /// Not a boolean word.
    #[error("expected true or false, got `{0}`")]
    Bool(String),
    /// Not a number.
    #[error("expected a number, got `{0}`")]
    Float(String),
    /// Not a whole number.
    #[error("expected a whole number, got `{0}`")]
    Int(String),
    /// Not JSON.
    #[error("expected JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// Not a YAML scalar (or JSON without a YAML equivalent).
    #[error(transparent)]
    Yaml(#[from] serde_yaml::Error),
}

/// Converts the text of an override variable into a YAML value of the key's kind.
pub fn parse_override(kind: KeyKind, raw: &str) -> Result<serde_yaml::Value, OverrideError> {
    use serde_yaml::Value;
    let trimmed = raw.trim();
    match kind {
        KeyKind::Str => Ok(Value::String(raw.to_string())),
        KeyKind::Bool => match trimmed.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(Value::Bool(true)),
            "0" | "false" | "no" | "off" => Ok(Value::Bool(false)),
            _ => Err(OverrideError::Bool(raw.to_string())),
        },
        KeyKind::Float => trimmed
            .parse::<f64>()
            .map(|n| Value::Number(n.into()))
            .map_err(|_| OverrideError::Float(raw.to_string())),
        KeyKind::Int => trimmed
            .parse::<u64>()
            .map(|n| Value::Number(n.into()))
            .map_err(|_| OverrideError::Int(raw.to_string())),
        KeyKind::Scalar => Ok(serde_yaml::from_str(trimmed)?),
        KeyKind::Json => {
            let json: serde_json::Value = serde_json::from_str(trimmed)?;
            Ok(serde_yaml::to_value(json)?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_parse_by_kind() {
        assert_eq!(
            parse_override(KeyKind::Bool, "off").unwrap(),
            serde_yaml::Value::Bool(false)
        );
        assert!(parse_override(KeyKind::Bool, "maybe").is_err());
        assert!(parse_override(KeyKind::Float, "0.5").is_ok());
        assert!(parse_override(KeyKind::Int, "-1").is_err());
        assert_eq!(
            parse_override(KeyKind::Str, "openai:gpt-4o").unwrap(),
            serde_yaml::Value::String("openai:gpt-4o".into())
        );
        assert_eq!(
            parse_override(KeyKind::Scalar, "null").unwrap(),
            serde_yaml::Value::Null
        );
        assert!(
            parse_override(KeyKind::Json, "{\"a\": \"b\"}")
                .unwrap()
                .is_mapping()
        );
    }

    #[test]
    fn env_names() {
        assert_eq!(env_var_for("top_p"), "LOKI_TOP_P");
    }
}
