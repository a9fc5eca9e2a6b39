//! `functions/mcp.json`, in Claude Desktop's format: `{"mcpServers": {name: server}}`
//! where a server is `{"type": "stdio", "command", "args", "env", "cwd"}` or
//! `{"type": "http" | "sse", "url", "headers"}`. `{{NAME}}` in any string value is
//! replaced by that environment variable; a server naming a variable that is not set
//! cannot start, and says which.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::error::McpError;
use crate::config::Env;

/// How to reach one server.
#[derive(Clone, PartialEq, Eq, Hash)]
pub enum Transport {
    /// A child process speaking JSON-RPC over stdin/stdout.
    Stdio {
        /// Executable.
        command: String,
        /// Arguments.
        args: Vec<String>,
        /// Extra environment, sorted.
        env: BTreeMap<String, String>,
        /// Working directory.
        cwd: Option<String>,
    },
    /// Streamable HTTP.
    Http {
        /// Endpoint.
        url: String,
        /// Headers sent with every request, sorted.
        headers: BTreeMap<String, String>,
    },
    /// The legacy HTTP+SSE transport.
    Sse {
        /// The SSE endpoint.
        url: String,
        /// Headers sent with every request, sorted.
        headers: BTreeMap<String, String>,
    },
    /// A server living in the client, its messages carried by it (the Claude Agent
    /// SDK's `"type": "sdk"` servers).
    Carried(super::carried::Carrier),
}

impl std::fmt::Debug for Transport {
    // Env values and headers often hold tokens: only their names are shown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stdio {
                command, args, env, ..
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", &args.len())
                .field("env", &env.keys().collect::<Vec<_>>())
                .finish_non_exhaustive(),
            Self::Http { url, headers } | Self::Sse { url, headers } => f
                .debug_struct("Remote")
                .field("url", &url.split('?').next().unwrap_or_default())
                .field("headers", &headers.keys().collect::<Vec<_>>())
                .finish(),
            Self::Carried(_) => f.write_str("Carried"),
        }
    }
}

impl Transport {
    /// `stdio`, `http` or `sse`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Stdio { .. } => "stdio",
            Self::Http { .. } => "http",
            Self::Sse { .. } => "sse",
            Self::Carried(_) => "sdk",
        }
    }
}

/// One configured server.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ServerSpec {
    /// Its name in `mcpServers`.
    pub name: String,
    /// How to reach it; the pair (name, transport) is the sharing key.
    pub transport: Transport,
    /// `protocolVersion`: the revision to speak (`None`: the newest the server offers,
    /// see `server::lifecycle`).
    pub protocol_version: Option<String>,
    /// How loki signs in to a remote server that asks (`None`: it does not — a stdio
    /// server, `"oauth": false`, or an `Authorization` header in `headers`).
    pub oauth: Option<super::oauth::OAuthSettings>,
}

/// The protocol revisions loki speaks, oldest first.
pub const KNOWN_VERSIONS: &[&str] = &[
    "2024-11-05",
    "2025-03-26",
    "2025-06-18",
    "2025-11-25",
    "2026-07-28",
];

/// Why a server entry cannot be used; each is one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// The entry is not an object of the expected shape.
    #[error("{0}")]
    Shape(String),
    /// No `type` and no `command`.
    #[error("needs \"type\": \"stdio\", \"http\" or \"sse\"")]
    NoType,
    /// A stdio server without `command`.
    #[error("a stdio server needs \"command\"")]
    NoCommand,
    /// A remote server with process settings.
    #[error("a {0} server takes \"url\" and \"headers\", not command/args/cwd")]
    RemoteWithCommand(String),
    /// A remote server without `url`.
    #[error("a remote server needs \"url\"")]
    NoUrl,
    /// A `type` loki does not know.
    #[error("unknown type \"{0}\" (use stdio, http or sse)")]
    UnknownType(String),
    /// `{{NAME}}` placeholders naming variables that are not set (sorted, unique).
    #[error("references variables that are not set: {}", .0.join(", "))]
    Unset(Vec<String>),
    /// A `protocolVersion` loki does not speak.
    #[error(
        "unknown protocolVersion \"{}\" (use \"auto\" or one of {})",
        .0.escape_debug(),
        KNOWN_VERSIONS.join(", ")
    )]
    UnknownVersion(String),
    /// `oauth` on a stdio server.
    #[error("\"oauth\" is for http and sse servers")]
    OAuthOnStdio,
    /// `oauth` settings that do not parse.
    #[error("\"oauth\": {0}")]
    OAuth(String),
}

/// A server entry that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broken {
    /// Server name.
    pub name: String,
    /// Why.
    pub reason: SpecError,
}

/// The parsed file.
#[derive(Debug, Clone, Default)]
pub struct McpConfig {
    /// Usable servers by name.
    pub servers: BTreeMap<String, ServerSpec>,
    /// Entries that cannot be used.
    pub broken: Vec<Broken>,
    /// Entries with `{{NAME}}` placeholders left for later (see [`McpConfig::parse_deferred`]):
    /// resolved with [`McpConfig::resolve`] when the server is first started.
    pub deferred: BTreeMap<String, Value>,
}

#[derive(Deserialize)]
struct File {
    #[serde(rename = "mcpServers", default)]
    servers: BTreeMap<String, Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, Value>,
    cwd: Option<String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(rename = "protocolVersion")]
    protocol_version: Option<String>,
    oauth: Option<Value>,
    /// Accepted for compatibility; loki decides exposure itself.
    #[serde(default)]
    #[allow(dead_code)]
    disabled: bool,
}

impl McpConfig {
    /// Parses the file's text; `Err` when it is not JSON in the expected shape at all.
    pub fn parse(text: &str, env: &Env) -> Result<Self, McpError> {
        Self::parse_with(text, env, false)
    }

    /// As [`McpConfig::parse`], but the entries that use `{{NAME}}` placeholders are kept
    /// aside in `deferred`, unresolved: their values may come from the vault, which is
    /// opened only when such a server is started.
    pub fn parse_deferred(text: &str, env: &Env) -> Result<Self, McpError> {
        Self::parse_with(text, env, true)
    }

    /// The server spec of deferred entry `name` with its placeholders taken from `env`;
    /// `Err` with the reason it cannot be used.
    pub fn resolve(&self, name: &str, env: &Env) -> Option<Result<ServerSpec, SpecError>> {
        let value = self.deferred.get(name)?;
        Some(spec_of(name, value.clone(), env))
    }

    fn parse_with(text: &str, env: &Env, defer: bool) -> Result<Self, McpError> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        let file: File = serde_json::from_str(text).map_err(|e| McpError::Config(e.to_string()))?;
        let mut out = Self::default();
        for (name, value) in file.servers {
            if defer && value.to_string().contains("{{") {
                out.deferred.insert(name, value);
                continue;
            }
            match spec_of(&name, value, env) {
                Ok(spec) => {
                    out.servers.insert(name, spec);
                }
                Err(reason) => out.broken.push(Broken { name, reason }),
            }
        }
        Ok(out)
    }
}

/// One server as an ACP client (an editor) describes it in `session/new`: `name`, and
/// either `command`/`args`/`env` (a list of `{name, value}`), or `type` `http`/`sse` with
/// `url` and `headers` (a list of `{name, value}`). Returns its name too, for messages.
pub fn from_acp(server: &Value, env: &Env) -> Result<ServerSpec, (String, SpecError)> {
    let name = server["name"].as_str().unwrap_or_default().to_string();
    let shape = |why: &str| (name.clone(), SpecError::Shape(why.to_string()));
    if name.trim().is_empty() {
        return Err(shape("an MCP server needs a \"name\""));
    }
    let pairs = |field: &str| -> serde_json::Map<String, Value> {
        server[field]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| Some((p["name"].as_str()?.to_string(), p["value"].clone())))
            .collect()
    };
    let mut claude = serde_json::Map::new();
    match server["type"].as_str() {
        None | Some("stdio") => {
            claude.insert("type".into(), "stdio".into());
            claude.insert("command".into(), server["command"].clone());
            claude.insert(
                "args".into(),
                server
                    .get("args")
                    .cloned()
                    .unwrap_or_else(|| Value::Array(Vec::new())),
            );
            claude.insert("env".into(), Value::Object(pairs("env")));
        }
        Some(kind @ ("http" | "sse")) => {
            claude.insert("type".into(), kind.into());
            claude.insert("url".into(), server["url"].clone());
            claude.insert("headers".into(), Value::Object(pairs("headers")));
        }
        Some(other) => return Err((name, SpecError::UnknownType(other.to_string()))),
    }
    spec_of(&name, Value::Object(claude), env).map_err(|e| (name.clone(), e))
}

fn spec_of(name: &str, value: Value, env: &Env) -> Result<ServerSpec, SpecError> {
    let raw: RawServer =
        serde_json::from_value(value).map_err(|e| SpecError::Shape(e.to_string()))?;
    let mut missing = Vec::new();
    let transport = transport_of(&raw, env, &mut missing)?;
    all_set(missing)?;
    let protocol_version = match raw.protocol_version.as_deref() {
        None | Some("auto") => None,
        Some(v) if KNOWN_VERSIONS.contains(&v) => Some(v.to_string()),
        Some(v) => return Err(SpecError::UnknownVersion(v.to_string())),
    };
    let mut missing = Vec::new();
    let oauth = oauth_of(&transport, raw.oauth, env, &mut missing)?;
    all_set(missing)?;
    Ok(ServerSpec {
        name: name.to_string(),
        transport,
        protocol_version,
        oauth,
    })
}

/// `Unset` with the placeholders no variable was found for, sorted, each once.
fn all_set(mut missing: Vec<String>) -> Result<(), SpecError> {
    if missing.is_empty() {
        return Ok(());
    }
    missing.sort();
    missing.dedup();
    Err(SpecError::Unset(missing))
}

/// The transport an entry describes (`type`, or `stdio` when it has a `command`), its
/// placeholders filled from `env`; the names not set go to `missing`.
fn transport_of(
    raw: &RawServer,
    env: &Env,
    missing: &mut Vec<String>,
) -> Result<Transport, SpecError> {
    let mut sub = |s: &str| substitute(s, env, missing);
    let kind = raw
        .kind
        .as_deref()
        .or(raw.command.is_some().then_some("stdio"))
        .ok_or(SpecError::NoType)?;
    match kind {
        "stdio" => {
            let command = raw.command.as_deref().ok_or(SpecError::NoCommand)?;
            Ok(Transport::Stdio {
                command: sub(command),
                args: raw.args.iter().map(|a| sub(a)).collect(),
                env: raw
                    .env
                    .iter()
                    .map(|(k, v)| {
                        let text = match v {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        (k.clone(), sub(&text))
                    })
                    .collect(),
                cwd: raw.cwd.as_deref().map(&mut sub),
            })
        }
        "http" | "sse" | "streamable-http" | "streamable_http" => {
            if raw.command.is_some() || !raw.args.is_empty() || raw.cwd.is_some() {
                return Err(SpecError::RemoteWithCommand(kind.to_string()));
            }
            let url = sub(raw.url.as_deref().ok_or(SpecError::NoUrl)?);
            let headers = raw
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), sub(v)))
                .collect();
            Ok(if kind == "sse" {
                Transport::Sse { url, headers }
            } else {
                Transport::Http { url, headers }
            })
        }
        other => Err(SpecError::UnknownType(other.to_string())),
    }
}

/// The sign-in settings of a remote server: on by default, off with `"oauth": false` or
/// when its headers already carry an `Authorization`; a stdio server cannot have any.
fn oauth_of(
    transport: &Transport,
    oauth: Option<Value>,
    env: &Env,
    missing: &mut Vec<String>,
) -> Result<Option<super::oauth::OAuthSettings>, SpecError> {
    Ok(match (transport, oauth) {
        (Transport::Stdio { .. }, None) => None,
        (Transport::Stdio { .. }, Some(_)) => {
            return Err(SpecError::OAuthOnStdio);
        }
        (_, Some(Value::Bool(false))) => None,
        (Transport::Http { headers, .. } | Transport::Sse { headers, .. }, _)
            if headers
                .keys()
                .any(|k| k.eq_ignore_ascii_case("authorization")) =>
        {
            None
        }
        (_, None | Some(Value::Bool(true))) => Some(super::oauth::OAuthSettings::default()),
        (_, Some(value)) => {
            let mut settings: super::oauth::OAuthSettings =
                serde_json::from_value(value).map_err(|e| SpecError::OAuth(e.to_string()))?;
            for field in [
                &mut settings.client_id,
                &mut settings.client_secret,
                &mut settings.client_metadata_url,
            ]
            .into_iter()
            .flatten()
            {
                *field = substitute(field, env, missing);
            }
            Some(settings)
        }
    })
}

/// Replaces `{{NAME}}` with the variable's value, recording names that are not set.
fn substitute(text: &str, env: &Env, missing: &mut Vec<String>) -> String {
    crate::config::env::replace_placeholders(text, move |name| {
        let value = env.get(name);
        if value.is_none() {
            missing.push(name.to_string());
        }
        value
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn servers_of_every_type_with_placeholders() {
        let env = Env::from_pairs([("GH_TOKEN", "ghp_x"), ("PORT", "8080")]);
        let text = r#"{"mcpServers": {
            "gh": {"type": "stdio", "command": "docker", "args": ["run", "-i"], "env": {"GITHUB_TOKEN": "{{GH_TOKEN}}", "DEBUG": true}},
            "web": {"type": "http", "url": "http://127.0.0.1:{{PORT}}/mcp", "headers": {"Authorization": "Bearer {{GH_TOKEN}}"}},
            "old": {"type": "sse", "url": "http://127.0.0.1:1/sse"},
            "nokey": {"type": "stdio", "command": "x", "env": {"K": "{{NOPE}}"}},
            "bad": {"type": "http", "command": "x", "url": "u"},
            "odd": {"type": "ftp", "url": "u"}
        }}"#;
        let c = McpConfig::parse(text, &env).unwrap();
        assert_eq!(c.servers.len(), 3);
        match &c.servers["gh"].transport {
            Transport::Stdio { env, .. } => {
                assert_eq!(env["GITHUB_TOKEN"], "ghp_x");
                assert_eq!(env["DEBUG"], "true");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            c.servers["web"].transport,
            Transport::Http {
                url: "http://127.0.0.1:8080/mcp".into(),
                headers: [("Authorization".to_string(), "Bearer ghp_x".to_string())].into()
            }
        );
        assert_eq!(c.servers["old"].transport.kind(), "sse");
        let reasons: Vec<String> = c
            .broken
            .iter()
            .map(|b| format!("{}: {}", b.name, b.reason))
            .collect();
        assert!(
            reasons
                .iter()
                .any(|r| r.contains("nokey") && r.contains("NOPE")),
            "{reasons:?}"
        );
        assert!(reasons.iter().any(|r| r.starts_with("bad:")), "{reasons:?}");
        assert!(
            reasons.iter().any(|r| r.contains("unknown type")),
            "{reasons:?}"
        );
        // Secrets never show in Debug output.
        assert!(!format!("{:?}", c.servers["gh"]).contains("ghp_x"));
        assert!(McpConfig::parse("{oops", &env).is_err());
        assert!(McpConfig::parse("", &env).unwrap().servers.is_empty());
    }

    #[test]
    fn entries_with_placeholders_can_wait_for_their_secrets() {
        let text = r#"{"mcpServers": {
            "gh": {"type": "stdio", "command": "x", "env": {"T": "{{GH_TOKEN}}"}},
            "plain": {"type": "stdio", "command": "y"}
        }}"#;
        let c = McpConfig::parse_deferred(text, &Env::default()).unwrap();
        assert_eq!(c.servers.keys().collect::<Vec<_>>(), ["plain"]);
        assert!(c.broken.is_empty());
        assert!(c.deferred.contains_key("gh"));
        let with = Env::from_pairs([("GH_TOKEN", "ghp_y")]);
        match c.resolve("gh", &with).unwrap().unwrap().transport {
            Transport::Stdio { env, .. } => assert_eq!(env["T"], "ghp_y"),
            other => panic!("{other:?}"),
        }
        let missing = c.resolve("gh", &Env::default()).unwrap().unwrap_err();
        assert_eq!(missing, SpecError::Unset(vec!["GH_TOKEN".into()]));
        assert!(missing.to_string().contains("GH_TOKEN"), "{missing}");
        assert!(c.resolve("plain", &with).is_none());
    }
}
