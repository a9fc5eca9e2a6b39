//! The `api:` block of `config.yaml`: how `loki --serve` listens, who may call it, and
//! its limits. Only `--serve` reads it.

use serde::Deserialize;

/// Default `api.listen_addr`.
pub const DEFAULT_LISTEN_ADDR: &str = "127.0.0.1:3400";

/// `api:`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ApiConfig {
    /// `false` refuses `--serve` (a switch to keep a shared config from serving).
    pub enabled: bool,
    /// `host:port`; else `serve_addr`, else 127.0.0.1:3400.
    pub listen_addr: Option<String>,
    /// Who may call it; unset: `--serve` refuses to start.
    pub auth: Option<AuthConfig>,
    /// Browsers allowed to call it.
    pub cors: CorsConfig,
    /// Sizes and rates.
    pub limits: LimitsConfig,
    /// The longest a request may run, in seconds.
    pub request_timeout_seconds: u64,
    /// How long shutdown waits for running turns before cancelling them.
    pub shutdown_grace_seconds: u64,
    /// How long a tool call waits for an HTTP approval, in seconds.
    pub approval_timeout_seconds: u64,
    /// How long a streamed run goes on after its client went away, for it (or another)
    /// to come back with `Last-Event-ID`; then it is cancelled. 0: at once.
    pub reattach_seconds: u64,
    /// With several instances on one database: how long an instance may stay silent
    /// before its running runs are marked failed.
    pub instance_timeout_seconds: u64,
    /// Tools that touch files or run commands (off unless enabled, confined to `root`).
    pub tools: ToolsConfig,
    /// `text` (default) or `json`: the log file as one JSON object per line.
    pub log_format: LogFormat,
    /// Proxies in front of the server (addresses, or networks as `10.0.0.0/8`): a
    /// request from one of them is taken to come from the last address its
    /// `X-Forwarded-For` names that is not itself one of them (rate limits and the
    /// wrong-key throttle count per client). Empty: the header is ignored.
    pub trusted_proxies: Vec<String>,
}

/// `api.log_format`.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Plain text lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            listen_addr: None,
            auth: None,
            cors: CorsConfig::default(),
            limits: LimitsConfig::default(),
            request_timeout_seconds: 300,
            shutdown_grace_seconds: 30,
            approval_timeout_seconds: 300,
            reattach_seconds: 10,
            instance_timeout_seconds: 10,
            tools: ToolsConfig::default(),
            log_format: LogFormat::Text,
            trusted_proxies: Vec::new(),
        }
    }
}

/// `api.auth`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(tag = "mode", deny_unknown_fields)]
pub enum AuthConfig {
    /// Anyone (only on a loopback address).
    Disabled,
    /// Bearer keys, checked against their argon2id hashes.
    StaticKeys {
        /// The keys.
        keys: Vec<KeyEntry>,
    },
    /// Bearer tokens (JWTs) signed by an identity provider.
    Jwt(JwtConfig),
}

/// `api.auth` with `mode: Jwt`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JwtConfig {
    /// The `iss` tokens must carry.
    pub issuer: String,
    /// The `aud` tokens must carry (or list).
    pub audience: String,
    /// Where the provider's signing keys are (`https://…/.well-known/jwks.json`).
    pub jwks_url: String,
    /// The claim naming the subject.
    #[serde(default = "default_subject_claim")]
    pub subject_claim: String,
    /// The claim holding the scopes (a space-separated string or a list).
    #[serde(default = "default_scopes_claim")]
    pub scopes_claim: String,
    /// Clock skew allowed on `exp` and `nbf`, in seconds.
    #[serde(default = "default_leeway")]
    pub leeway_seconds: u64,
    /// How often the key set is fetched again (seconds); unset: the provider's
    /// `Cache-Control: max-age` (1 minute to 1 hour), else 10 minutes.
    #[serde(default)]
    pub jwks_refresh_seconds: Option<u64>,
}

fn default_subject_claim() -> String {
    "sub".into()
}

fn default_scopes_claim() -> String {
    "scope".into()
}

fn default_leeway() -> u64 {
    60
}

/// One API key.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct KeyEntry {
    /// Who it belongs to (in logs; sessions it creates are its own).
    pub subject: String,
    /// The id a key made by `loki --api-key-hash` carries (`lk_<id>_…`): only this
    /// entry's hash is checked for such a key. Entries without one are checked for keys
    /// without one.
    #[serde(default)]
    pub id: Option<String>,
    /// `$argon2id$…` (`loki --api-key-hash` makes one).
    pub key_hash: String,
    /// What it may do ([`SCOPES`]); default `read` and `write`.
    #[serde(default = "default_scopes")]
    pub scopes: Vec<String>,
    /// Requests per minute for this key, over `limits.rate_limit_per_minute`.
    #[serde(default)]
    pub rate_limit_per_minute: Option<u32>,
}

fn default_scopes() -> Vec<String> {
    vec!["read".into(), "write".into()]
}

/// The scopes a key may hold: `*`/`admin` (everything, every subject's sessions),
/// `read` (every `read:…`), `write` (every `write:…` and `run:…`), and the fine ones.
pub const SCOPES: &[&str] = &[
    "*",
    "admin",
    "read",
    "write",
    "read:sessions",
    "write:sessions",
    "admin:sessions",
    "read:models",
    "read:roles",
    "read:agents",
    "read:rags",
    "read:metrics",
    "run:models",
    "admin:rags",
];

impl ApiConfig {
    /// Everything wrong with it, each a line naming the key (empty when it is fine).
    pub fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (key, value) in [
            ("api.request_timeout_seconds", self.request_timeout_seconds),
            (
                "api.approval_timeout_seconds",
                self.approval_timeout_seconds,
            ),
            (
                "api.limits.max_concurrent_requests",
                self.limits.max_concurrent_requests as u64,
            ),
            (
                "api.limits.max_body_bytes",
                self.limits.max_body_bytes as u64,
            ),
            (
                "api.limits.header_read_timeout_seconds",
                self.limits.header_read_timeout_seconds,
            ),
        ] {
            if value == 0 {
                out.push(format!("`{key}` is 0; it must be at least 1"));
            }
        }
        for (n, proxy) in self.trusted_proxies.iter().enumerate() {
            if Network::parse(proxy).is_none() {
                out.push(format!(
                    "`api.trusted_proxies[{n}]` `{proxy}` is not an address or a network (10.0.0.0/8)"
                ));
            }
        }
        // Checked at every reload too: tools turned on without a root would run unconfined.
        if self.tools.enabled && self.tools.root.is_none() {
            out.push(
                "`api.tools.enabled` needs `api.tools.root`, the directory tools are confined to"
                    .into(),
            );
        }
        if self.limits.rate_limit_per_minute == Some(0) {
            out.push(
                "`api.limits.rate_limit_per_minute` is 0 (leave it unset for no limit)".into(),
            );
        }
        if let Some(addr) = &self.listen_addr
            && addr.parse::<std::net::SocketAddr>().is_err()
        {
            out.push(format!(
                "`api.listen_addr` `{addr}` is not an address (host:port)"
            ));
        }
        if let Some(AuthConfig::StaticKeys { keys }) = &self.auth {
            if keys.is_empty() {
                out.push("`api.auth.keys` is empty".into());
            }
            let mut ids = std::collections::BTreeSet::new();
            for (n, key) in keys.iter().enumerate() {
                out.extend(key.problems(n));
                if let Some(id) = &key.id
                    && !ids.insert(id.as_str())
                {
                    out.push(format!("`api.auth.keys[{n}].id` `{id}` is used twice"));
                }
            }
        }
        if let Some(AuthConfig::Jwt(jwt)) = &self.auth {
            let url = jwt.jwks_url.as_str();
            let loopback = url
                .strip_prefix("http://")
                .and_then(|rest| rest.split('/').next())
                .is_some_and(crate::origin::is_loopback_host);
            if !url.starts_with("https://") && !loopback {
                out.push(format!(
                    "`api.auth.jwks_url` `{url}` must be https (or http on this machine)"
                ));
            }
            for (key, value) in [("issuer", &jwt.issuer), ("audience", &jwt.audience)] {
                if value.trim().is_empty() {
                    out.push(format!("`api.auth.{key}` is empty"));
                }
            }
        }
        if self.cors.allow_credentials && self.cors.allowed_origins.iter().any(|o| o == "*") {
            out.push(
                "`api.cors.allow_credentials` with `allowed_origins: [\"*\"]` would let any web page call with credentials; list the origins".into(),
            );
        }
        for origin in &self.cors.allowed_origins {
            let ok = origin == "*"
                || ((origin.starts_with("http://") || origin.starts_with("https://"))
                    && !origin.ends_with('/'));
            if !ok {
                out.push(format!(
                    "`api.cors.allowed_origins` `{origin}` is not an origin (scheme://host[:port], or *)"
                ));
            }
        }
        out
    }
}

impl KeyEntry {
    fn problems(&self, n: usize) -> Vec<String> {
        let at = format!("`api.auth.keys[{n}]`");
        let mut out = Vec::new();
        if self.subject.trim().is_empty() {
            out.push(format!("{at}.subject is empty"));
        }
        if !self.key_hash.starts_with("$argon2") {
            out.push(format!(
                "{at}.key_hash is not an argon2 hash (a plaintext key can never match; `loki --api-key-hash` makes an entry)"
            ));
        }
        if let Some(id) = &self.id
            && (id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric()))
        {
            out.push(format!("{at}.id `{id}` must be letters and digits"));
        }
        if self.scopes.is_empty() {
            out.push(format!("{at}.scopes is empty; the key could do nothing"));
        }
        for scope in &self.scopes {
            if !SCOPES.contains(&scope.as_str()) {
                out.push(format!(
                    "{at}.scopes: unknown scope `{scope}` (known: {})",
                    SCOPES.join(", ")
                ));
            }
        }
        if self.rate_limit_per_minute == Some(0) {
            out.push(format!("{at}.rate_limit_per_minute is 0"));
        }
        out
    }
}

/// `api.cors`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct CorsConfig {
    /// Origins allowed (`*` for any); empty: no CORS headers.
    pub allowed_origins: Vec<String>,
    /// Allow credentials.
    pub allow_credentials: bool,
}

/// `api.limits`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsConfig {
    /// The largest request body, in bytes.
    pub max_body_bytes: usize,
    /// Requests served at once; more wait.
    pub max_concurrent_requests: usize,
    /// Requests per minute per key (unset: no limit).
    pub rate_limit_per_minute: Option<u32>,
    /// Seconds a new connection has to send its first request's headers.
    pub header_read_timeout_seconds: u64,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        Self {
            max_body_bytes: 1024 * 1024,
            max_concurrent_requests: 64,
            rate_limit_per_minute: None,
            header_read_timeout_seconds: 10,
        }
    }
}

/// `api.tools`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields)]
pub struct ToolsConfig {
    /// Offer tools at all.
    pub enabled: bool,
    /// The directory they work in (and are confined to); required when enabled.
    pub root: Option<std::path::PathBuf>,
    /// Run `execute_command` under the kernel's confinement (Landlock): it can change
    /// only `root` and read only the system's directories besides (default true). Where
    /// that is not possible, the command is refused; `false` runs it as loki's user.
    pub confine_commands: bool,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            root: None,
            confine_commands: true,
        }
    }
}

/// An address or a network of `api.trusted_proxies`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    base: std::net::IpAddr,
    prefix: u8,
}

impl Network {
    /// `192.0.2.1`, `10.0.0.0/8`, `::1`, `fd00::/8`; `None` when it is none of these.
    pub fn parse(text: &str) -> Option<Self> {
        let (addr, prefix) = match text.trim().split_once('/') {
            Some((addr, prefix)) => (addr, Some(prefix.parse::<u8>().ok()?)),
            None => (text.trim(), None),
        };
        let base: std::net::IpAddr = addr.parse().ok()?;
        let bits = if base.is_ipv4() { 32 } else { 128 };
        let prefix = prefix.unwrap_or(bits);
        (prefix <= bits).then_some(Self { base, prefix })
    }

    /// Whether `addr` lies in it (an IPv4 address written as IPv6 counts as IPv4).
    pub fn contains(&self, addr: std::net::IpAddr) -> bool {
        let addr = match addr {
            std::net::IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(addr, std::net::IpAddr::V4),
            v4 => v4,
        };
        let (base, addr, bits) = match (self.base, addr) {
            (std::net::IpAddr::V4(b), std::net::IpAddr::V4(a)) => {
                (u128::from(u32::from(b)), u128::from(u32::from(a)), 32)
            }
            (std::net::IpAddr::V6(b), std::net::IpAddr::V6(a)) => {
                (u128::from(b), u128::from(a), 128)
            }
            _ => return false,
        };
        let shift = bits - u32::from(self.prefix);
        if shift >= 128 {
            return true;
        }
        (base >> shift) == (addr >> shift)
    }
}

#[cfg(test)]
mod network_tests {
    use super::Network;

    #[test]
    fn networks_hold_their_addresses() {
        let net = Network::parse("10.0.0.0/8").unwrap();
        assert!(net.contains("10.2.3.4".parse().unwrap()));
        assert!(!net.contains("11.0.0.1".parse().unwrap()));
        assert!(net.contains("::ffff:10.9.9.9".parse().unwrap()));
        let one = Network::parse("192.0.2.7").unwrap();
        assert!(one.contains("192.0.2.7".parse().unwrap()));
        assert!(!one.contains("192.0.2.8".parse().unwrap()));
        assert!(
            Network::parse("0.0.0.0/0")
                .unwrap()
                .contains("8.8.8.8".parse().unwrap())
        );
        assert!(
            Network::parse("fd00::/8")
                .unwrap()
                .contains("fd12::1".parse().unwrap())
        );
        for bad in ["10.0.0.0/33", "nope", "10.0.0.0/x", ""] {
            assert!(Network::parse(bad).is_none(), "{bad}");
        }
    }
}
