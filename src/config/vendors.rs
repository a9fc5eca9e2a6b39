//! Vendors that speak the OpenAI chat-completions format, as a table: name, base URL,
//! where the API key comes from, and a sensible default model.
//!
//! A client `type: openai-compatible` whose `name` matches a row needs no `api_base`.
//! The zero-config start walks this table looking for API keys in the environment.

/// One vendor reachable through the OpenAI wire format.
#[derive(Debug, Clone, Copy)]
pub struct Vendor {
    /// Client name (also the model prefix).
    pub name: &'static str,
    /// Base URL, up to the version segment.
    pub api_base: &'static str,
    /// Environment variables holding the API key, in order of preference; empty for
    /// local servers that need none.
    pub key_envs: &'static [&'static str],
    /// Model used when the user has not picked one.
    pub default_model: &'static str,
    /// Runs on this machine (probed at start, no key needed).
    pub local: bool,
}

const fn remote(
    name: &'static str,
    api_base: &'static str,
    key_envs: &'static [&'static str],
    default_model: &'static str,
) -> Vendor {
    Vendor {
        name,
        api_base,
        key_envs,
        default_model,
        local: false,
    }
}

const fn local(name: &'static str, api_base: &'static str) -> Vendor {
    Vendor {
        name,
        api_base,
        key_envs: &[],
        default_model: "",
        local: true,
    }
}

/// Known vendors. Order matters for the zero-config start: the first vendor with a key in
/// the environment provides the default model.
pub const VENDORS: &[Vendor] = &[
    remote(
        "openai",
        "https://api.openai.com/v1",
        &["OPENAI_API_KEY"],
        "gpt-4.1-mini",
    ),
    // Anthropic's key starts the native `claude` client; Google's still goes through its
    // OpenAI-compatible endpoint.
    remote(
        "claude",
        "https://api.anthropic.com/v1",
        &["ANTHROPIC_API_KEY", "CLAUDE_API_KEY"],
        "claude-sonnet-4-5",
    ),
    remote(
        "gemini",
        "https://generativelanguage.googleapis.com/v1beta/openai",
        &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        "gemini-2.5-flash",
    ),
    remote(
        "deepseek",
        "https://api.deepseek.com/v1",
        &["DEEPSEEK_API_KEY"],
        "deepseek-chat",
    ),
    remote(
        "mistral",
        "https://api.mistral.ai/v1",
        &["MISTRAL_API_KEY"],
        "mistral-medium-latest",
    ),
    remote(
        "groq",
        "https://api.groq.com/openai/v1",
        &["GROQ_API_KEY"],
        "llama-3.3-70b-versatile",
    ),
    remote("xai", "https://api.x.ai/v1", &["XAI_API_KEY"], "grok-4"),
    remote(
        "openrouter",
        "https://openrouter.ai/api/v1",
        &["OPENROUTER_API_KEY"],
        "openai/gpt-4.1-mini",
    ),
    remote(
        "perplexity",
        "https://api.perplexity.ai",
        &["PERPLEXITY_API_KEY"],
        "sonar",
    ),
    remote(
        "together",
        "https://api.together.xyz/v1",
        &["TOGETHER_API_KEY"],
        "meta-llama/Llama-3.3-70B-Instruct-Turbo",
    ),
    remote(
        "fireworks",
        "https://api.fireworks.ai/inference/v1",
        &["FIREWORKS_API_KEY"],
        "accounts/fireworks/models/llama-v3p3-70b-instruct",
    ),
    remote(
        "deepinfra",
        "https://api.deepinfra.com/v1/openai",
        &["DEEPINFRA_API_KEY"],
        "meta-llama/Llama-3.3-70B-Instruct",
    ),
    remote(
        "cerebras",
        "https://api.cerebras.ai/v1",
        &["CEREBRAS_API_KEY"],
        "llama-3.3-70b",
    ),
    remote(
        "moonshot",
        "https://api.moonshot.ai/v1",
        &["MOONSHOT_API_KEY"],
        "kimi-k2-0905-preview",
    ),
    remote(
        "zhipuai",
        "https://open.bigmodel.cn/api/paas/v4",
        &["ZHIPUAI_API_KEY"],
        "glm-4.6",
    ),
    remote(
        "qianwen",
        "https://dashscope.aliyuncs.com/compatible-mode/v1",
        &["QIANWEN_API_KEY", "DASHSCOPE_API_KEY"],
        "qwen-plus",
    ),
    remote(
        "minimax",
        "https://api.minimax.io/v1",
        &["MINIMAX_API_KEY"],
        "MiniMax-M2",
    ),
    remote(
        "github",
        "https://models.github.ai/inference",
        &["GITHUB_API_KEY", "GITHUB_TOKEN"],
        "openai/gpt-4.1-mini",
    ),
    remote(
        "ai21",
        "https://api.ai21.com/studio/v1",
        &["AI21_API_KEY"],
        "jamba-large",
    ),
    remote("jina", "https://api.jina.ai/v1", &["JINA_API_KEY"], ""),
    remote(
        "voyageai",
        "https://api.voyageai.com/v1",
        &["VOYAGE_API_KEY", "VOYAGEAI_API_KEY"],
        "",
    ),
    local("ollama", "http://127.0.0.1:11434/v1"),
    local("llamacpp", "http://127.0.0.1:8080/v1"),
    local("lmstudio", "http://127.0.0.1:1234/v1"),
    local("vllm", "http://127.0.0.1:8000/v1"),
];

/// Looks a vendor up by client name; `llama.cpp` and `llama-server` are aliases of
/// `llamacpp`, `lm-studio` of `lmstudio`, `anthropic` of `claude`.
pub fn find(name: &str) -> Option<&'static Vendor> {
    let canonical = match name {
        "llama.cpp" | "llama-server" | "llama-cpp" => "llamacpp",
        "lm-studio" => "lmstudio",
        "anthropic" => "claude",
        "google" => "gemini",
        other => other,
    };
    VENDORS.iter().find(|v| v.name == canonical)
}

/// The conventional `<NAME>_<FIELD>` environment variable of a client: upper case, with
/// `-` and `.` turned into `_`.
pub fn client_env_var(client: &str, field: &str) -> String {
    let prefix: String = client
        .chars()
        .map(|c| match c {
            '-' | '.' | ' ' => '_',
            c => c.to_ascii_uppercase(),
        })
        .collect();
    format!("{prefix}_{field}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aliases_and_env_names() {
        assert_eq!(find("llama.cpp").map(|v| v.name), Some("llamacpp"));
        assert_eq!(find("anthropic").map(|v| v.name), Some("claude"));
        assert!(find("nope").is_none());
        assert_eq!(
            client_env_var("my-local.ai", "API_KEY"),
            "MY_LOCAL_AI_API_KEY"
        );
    }

    #[test]
    fn names_are_unique() {
        for (i, a) in VENDORS.iter().enumerate() {
            for b in &VENDORS[i + 1..] {
                assert_ne!(a.name, b.name);
            }
        }
    }
}
