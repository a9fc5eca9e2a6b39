//! `web_search`: a search through the backend the user configured — Tavily, a SearXNG
//! instance, or Perplexity's Sonar models — returned as a short Markdown list.

use serde_json::{Value, json};

use super::ToolError;

/// Where searches go.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WebSearch {
    /// `tavily`, `searxng` or `perplexity`.
    pub backend: String,
    /// Base URL (required for SearXNG; overrides the service's for the others).
    pub url: Option<String>,
    /// API key (`TAVILY_API_KEY`, `PERPLEXITY_API_KEY`).
    pub api_key: Option<String>,
}

impl WebSearch {
    /// The configured backend, with its key from the environment.
    pub fn from_config(
        config: &crate::config::AppConfig,
        env: &crate::config::Env,
    ) -> Option<Self> {
        let backend = config.web_search.clone()?;
        let key_var = match backend.as_str() {
            "tavily" => Some("TAVILY_API_KEY"),
            "perplexity" => Some("PERPLEXITY_API_KEY"),
            _ => None,
        };
        Some(Self {
            api_key: key_var.and_then(|v| env.get(v)).map(str::to_string),
            url: config.web_search_url.clone(),
            backend,
        })
    }
}

/// Runs a search.
pub async fn search(
    http: &reqwest::Client,
    settings: Option<&WebSearch>,
    query: &str,
) -> Result<String, ToolError> {
    let settings = settings.ok_or_else(|| {
        ToolError::Failed(
            "no web search backend is configured (set `web_search: tavily|searxng|perplexity`)"
                .into(),
        )
    })?;
    let key = || {
        settings.api_key.clone().ok_or_else(|| {
            ToolError::Failed(format!(
                "web_search: {} needs {}_API_KEY",
                settings.backend,
                settings.backend.to_ascii_uppercase()
            ))
        })
    };
    let base = |default: &str| {
        settings
            .url
            .clone()
            .unwrap_or_else(|| default.to_string())
            .trim_end_matches('/')
            .to_string()
    };
    let request = match settings.backend.as_str() {
        "tavily" => http
            .post(format!("{}/search", base("https://api.tavily.com")))
            .bearer_auth(key()?)
            .json(&json!({"query": query, "max_results": 5, "include_answer": true})),
        "perplexity" => http
            .post(format!(
                "{}/chat/completions",
                base("https://api.perplexity.ai")
            ))
            .bearer_auth(key()?)
            .json(&json!({"model": "sonar", "messages": [{"role": "user", "content": query}]})),
        "searxng" => {
            let url = settings.url.as_deref().ok_or_else(|| {
                ToolError::Failed("web_search: searxng needs `web_search_url`".into())
            })?;
            let url = reqwest::Url::parse_with_params(
                &format!("{}/search", url.trim_end_matches('/')),
                &[("q", query), ("format", "json")],
            )
            .map_err(|e| ToolError::Failed(format!("web_search: bad web_search_url ({e})")))?;
            http.get(url)
        }
        other => {
            return Err(ToolError::Failed(format!(
                "unknown web_search backend `{other}` (use tavily, searxng or perplexity)"
            )));
        }
    };
    let response = request.send().await.map_err(|e| {
        ToolError::Failed(format!(
            "web_search: {}",
            crate::client::http::error_chain(&e)
        ))
    })?;
    let status = response.status();
    let body: Value = response
        .json()
        .await
        .map_err(|e| ToolError::Failed(format!("web_search: unreadable reply ({e})")))?;
    if !status.is_success() {
        return Err(ToolError::Failed(format!(
            "web_search: HTTP {status}: {}",
            loki_wire::error_text::error_message(body.to_string().as_bytes())
        )));
    }
    Ok(format_results(&settings.backend, &body))
}

fn format_results(backend: &str, body: &Value) -> String {
    if backend == "perplexity" {
        let mut text = body["choices"][0]["message"]["content"]
            .as_str()
            .unwrap_or("")
            .to_string();
        if let Some(citations) = body["citations"].as_array() {
            text.push_str("\n\nSources:\n");
            for (i, url) in citations.iter().enumerate() {
                text.push_str(&format!("[{}] {}\n", i + 1, url.as_str().unwrap_or("")));
            }
        }
        return text;
    }
    let mut out = String::new();
    if let Some(answer) = body["answer"].as_str().filter(|a| !a.is_empty()) {
        out.push_str(answer);
        out.push_str("\n\n");
    }
    for result in body["results"].as_array().into_iter().flatten().take(8) {
        let snippet: String = result["content"]
            .as_str()
            .unwrap_or("")
            .chars()
            .take(500)
            .collect();
        out.push_str(&format!(
            "- [{}]({})\n  {}\n",
            result["title"].as_str().unwrap_or("untitled"),
            result["url"].as_str().unwrap_or(""),
            snippet.replace('\n', " ")
        ));
    }
    if out.is_empty() {
        "no results".into()
    } else {
        out
    }
}
