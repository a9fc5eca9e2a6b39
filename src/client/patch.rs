//! Request patches: a model's own `patch:` (always applied), then the first client patch
//! whose regex matches the model (`patch: {chat_completions|embeddings|rerank: {regex:
//! patch}}`, replaced per API by `LOKI_PATCH_<CLIENT>_<API>` when that variable is set).
//!
//! A patch may replace the URL, JSON-merge the body (`null` removes a key) and set or
//! remove headers.

use regex::Regex;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::Model;
use super::wire::Outgoing;
use crate::config::Env;
use crate::config::vendors::client_env_var;

/// Which API a request is for; each has its own client patch section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ApiKind {
    /// Chat completions.
    Chat,
    /// Embeddings.
    Embeddings,
    /// Reranking.
    Rerank,
}

impl ApiKind {
    const ALL: [ApiKind; 3] = [Self::Chat, Self::Embeddings, Self::Rerank];

    /// The section name in `patch:` and the env-var suffix.
    pub fn section(self) -> &'static str {
        match self {
            Self::Chat => "chat_completions",
            Self::Embeddings => "embeddings",
            Self::Rerank => "rerank",
        }
    }
}

/// One patch: any of url, body, headers.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RequestPatch {
    /// Replaces the endpoint.
    pub url: Option<String>,
    /// Merged into the body.
    pub body: Option<Value>,
    /// Header values to set (strings) or remove (`null`).
    pub headers: Option<Map<String, Value>>,
}

impl RequestPatch {
    /// Applies the patch to a request.
    pub fn apply(&self, request: &mut Outgoing) {
        if let Some(url) = &self.url {
            request.url.clone_from(url);
        }
        if let Some(body) = &self.body {
            if body.get("messages").is_some() {
                request.merge_messages();
            }
            merge(&mut request.body, body);
        }
        for (name, value) in self.headers.iter().flatten() {
            request
                .headers
                .retain(|(n, _)| !n.eq_ignore_ascii_case(name));
            match value {
                Value::Null => {}
                Value::String(s) => request.headers.push((name.clone(), s.clone())),
                other => request.headers.push((name.clone(), other.to_string())),
            }
        }
    }
}

/// RFC 7386 JSON merge patch.
pub fn merge(target: &mut Value, patch: &Value) {
    let Value::Object(fields) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(map) = target else {
        return;
    };
    for (key, value) in fields {
        if value.is_null() {
            map.remove(key);
        } else {
            merge(map.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

/// A client's compiled patches, per API, in config order.
#[derive(Debug, Clone, Default)]
pub struct ClientPatches {
    sections: [Vec<(Regex, RequestPatch)>; 3],
}

/// A patch that cannot be used.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid patch for client `{client}` ({origin}): {message}")]
pub struct PatchError {
    /// Client name.
    pub client: String,
    /// `config.yaml` or the variable name.
    pub origin: String,
    /// What is wrong.
    pub message: String,
}

impl ClientPatches {
    /// Compiles the client's `patch:` value, with `LOKI_PATCH_<CLIENT>_<API>` (or the
    /// documented `LLM_PATCH_…` spelling) replacing a section when set.
    pub fn build(client: &str, configured: Option<&Value>, env: &Env) -> Result<Self, PatchError> {
        let mut out = Self::default();
        for (slot, api) in ApiKind::ALL.into_iter().enumerate() {
            let field = client_env_var(client, &api.section().to_ascii_uppercase());
            let from_env = [format!("LOKI_PATCH_{field}"), format!("LLM_PATCH_{field}")]
                .into_iter()
                .find_map(|var| env.get(&var).map(|text| (var, text.to_string())));
            let (origin, section) = match from_env {
                Some((var, text)) => {
                    let value: Value = serde_json::from_str(&text).map_err(|e| PatchError {
                        client: client.to_string(),
                        origin: var.clone(),
                        message: format!("not JSON: {e}"),
                    })?;
                    (var, Some(value))
                }
                None => (
                    "config.yaml".to_string(),
                    configured.and_then(|p| p.get(api.section())).cloned(),
                ),
            };
            let err = |message: String| PatchError {
                client: client.to_string(),
                origin: origin.clone(),
                message,
            };
            let Some(section) = section else { continue };
            let Value::Object(patterns) = section else {
                return Err(err(format!(
                    "`{}` must map model regexes to patches",
                    api.section()
                )));
            };
            for (pattern, patch) in patterns {
                let regex = Regex::new(&format!("^({pattern})$"))
                    .map_err(|e| err(format!("bad regex `{pattern}`: {e}")))?;
                let patch: RequestPatch = serde_json::from_value(patch)
                    .map_err(|e| err(format!("patch for `{pattern}`: {e}")))?;
                out.sections[slot].push((regex, patch));
            }
        }
        Ok(out)
    }

    /// Applies the model's patch, then the first matching client patch for `api`.
    pub fn apply(&self, model: &Model, api: ApiKind, request: &mut Outgoing) {
        if let Some(value) = &model.config.patch {
            match serde_json::from_value::<RequestPatch>(value.clone()) {
                Ok(patch) => patch.apply(request),
                Err(e) => tracing::warn!(model = %model.id(), "model patch ignored: {e}"),
            }
        }
        let slot = ApiKind::ALL.iter().position(|a| *a == api).unwrap_or(0);
        let name = &model.config.name;
        if let Some((_, patch)) = self.sections[slot]
            .iter()
            .find(|(re, _)| re.is_match(name) || re.is_match(model.real_name()))
        {
            patch.apply(request);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::clients::ModelConfig;
    use serde_json::json;

    fn model(name: &str, patch: Option<Value>) -> Model {
        Model {
            client: "openai".into(),
            config: ModelConfig {
                name: name.into(),
                patch,
                ..ModelConfig::default()
            },
        }
    }

    fn request() -> Outgoing {
        Outgoing::new(
            "https://x/v1/chat",
            json!({"model": "m", "temperature": 1, "n": {"a": 1}}),
        )
        .header("Authorization", "Bearer k")
    }

    #[test]
    fn merge_patch_follows_rfc_7386() {
        let mut v = json!({"a": "b", "c": {"d": "e", "f": "g"}});
        merge(&mut v, &json!({"a": "z", "c": {"f": null}, "h": [1]}));
        assert_eq!(v, json!({"a": "z", "c": {"d": "e"}, "h": [1]}));
    }

    #[test]
    fn model_patch_then_first_matching_client_patch() {
        let client = json!({"chat_completions": {
            "gpt-4.*": {"body": {"temperature": 0.5}, "headers": {"authorization": null, "X-A": "1"}},
            ".*": {"body": {"never": true}}
        }});
        let patches = ClientPatches::build("openai", Some(&client), &Env::default()).unwrap();
        let m = model(
            "gpt-4o",
            Some(json!({"url": "https://y/chat", "body": {"temperature": null, "n": {"b": 2}}})),
        );
        let mut r = request();
        patches.apply(&m, ApiKind::Chat, &mut r);
        assert_eq!(r.url, "https://y/chat");
        assert_eq!(
            r.body,
            json!({"model": "m", "temperature": 0.5, "n": {"a": 1, "b": 2}})
        );
        assert_eq!(r.headers, vec![("X-A".to_string(), "1".to_string())]);
        // Regexes are anchored: `gpt-4.*` does not match `my-gpt-4`.
        let mut r = request();
        patches.apply(&model("my-gpt-4", None), ApiKind::Chat, &mut r);
        assert_eq!(r.body["never"], true);
        // Other APIs are untouched.
        let mut r = request();
        patches.apply(&model("gpt-4o", None), ApiKind::Embeddings, &mut r);
        assert_eq!(r, request());
    }

    #[test]
    fn env_replaces_a_section_and_bad_patches_are_named() {
        let client = json!({"chat_completions": {".*": {"body": {"from": "config"}}}});
        let env = Env::from_pairs([(
            "LOKI_PATCH_MY_LOCAL_CHAT_COMPLETIONS",
            r#"{"m.*":{"body":{"from":"env"}}}"#,
        )]);
        let patches = ClientPatches::build("my-local", Some(&client), &env).unwrap();
        let mut r = request();
        patches.apply(&model("mini", None), ApiKind::Chat, &mut r);
        assert_eq!(r.body["from"], "env");
        let bad = Env::from_pairs([("LLM_PATCH_OPENAI_EMBEDDINGS", "{nope")]);
        let e = ClientPatches::build("openai", None, &bad)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("LLM_PATCH_OPENAI_EMBEDDINGS") && e.contains("not JSON"),
            "{e}"
        );
        let e = ClientPatches::build(
            "openai",
            Some(&json!({"rerank": {"(": {}}})),
            &Env::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("bad regex"), "{e}");
        let e = ClientPatches::build(
            "openai",
            Some(&json!({"chat_completions": {".*": {"bogus": 1}}})),
            &Env::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown field"), "{e}");
    }
}
