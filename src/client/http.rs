//! HTTP transport shared by the wire modules: building the `reqwest` client from a
//! client's `extra:` settings, sending a JSON request, mapping non-success statuses to
//! [`ProviderError`], and reading a streamed body with an idle timeout.
//!
//! TLS roots are loaded only for `https` endpoints: a local `http://` server never pays for
//! reading the system certificate store.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures_util::StreamExt;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::config::ExtraConfig;
use super::error::ProviderError;
use super::patch::ClientPatches;
use super::retry::{RetryPolicy, parse_retry_after};

/// Default seconds to establish a connection.
const DEFAULT_CONNECT_TIMEOUT: u64 = 10;
/// Default seconds of silence tolerated while reading a response.
const DEFAULT_READ_TIMEOUT: u64 = 300;

/// Transport settings of one client, resolved from config.
#[derive(Debug, Clone)]
pub struct HttpSettings {
    /// Client name, for messages.
    pub client: String,
    /// Connection timeout.
    pub connect_timeout: Duration,
    /// Idle timeout while waiting for bytes.
    pub read_timeout: Duration,
    /// `None`: environment proxies; `Some("-")`: none; else that proxy.
    pub proxy: Option<String>,
    /// `User-Agent` header.
    pub user_agent: Option<String>,
    /// Retry behaviour.
    pub retry: RetryPolicy,
    /// Request patches of the client.
    pub patches: Arc<ClientPatches>,
    /// A configuration problem found when the client was built, reported on first use.
    pub broken: Option<String>,
}

impl HttpSettings {
    /// Resolves settings from a client's `extra:` block.
    pub fn new(client: &str, extra: Option<&ExtraConfig>, user_agent: Option<String>) -> Self {
        let extra = extra.cloned().unwrap_or_default();
        let default_retry = RetryPolicy::default();
        Self {
            client: client.to_string(),
            connect_timeout: Duration::from_secs(
                extra.connect_timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT),
            ),
            read_timeout: Duration::from_secs(extra.read_timeout.unwrap_or(DEFAULT_READ_TIMEOUT)),
            proxy: extra.proxy,
            user_agent,
            retry: RetryPolicy {
                max_retries: extra.max_retries.unwrap_or(default_retry.max_retries),
                base_delay: extra
                    .retry_base_delay_ms
                    .map(Duration::from_millis)
                    .unwrap_or(default_retry.base_delay),
                ..default_retry
            },
            patches: Arc::default(),
            broken: None,
        }
    }
}

/// A lazily built `reqwest::Client`: nothing is allocated until the first request.
#[derive(Debug, Default)]
pub struct LazyHttp {
    cell: OnceLock<reqwest::Client>,
}

impl LazyHttp {
    /// The client for `base_url`, built on first use.
    pub fn get(
        &self,
        settings: &HttpSettings,
        base_url: &str,
    ) -> Result<&reqwest::Client, ProviderError> {
        if let Some(client) = self.cell.get() {
            return Ok(client);
        }
        let client = build_client(settings, base_url.starts_with("https:"))?;
        Ok(self.cell.get_or_init(|| client))
    }
}

fn build_client(settings: &HttpSettings, https: bool) -> Result<reqwest::Client, ProviderError> {
    let setup = |message: String| ProviderError::Setup {
        client: settings.client.clone(),
        message,
    };
    let mut builder = reqwest::Client::builder()
        .connect_timeout(settings.connect_timeout)
        .read_timeout(settings.read_timeout);
    install_crypto_provider();
    if !https {
        // Plain HTTP never verifies certificates; skip loading the system roots.
        builder = builder.tls_certs_only([]);
    }
    if let Some(agent) = &settings.user_agent {
        builder = builder.user_agent(agent.clone());
    }
    match settings.proxy.as_deref() {
        None => {}
        Some("" | "-") => builder = builder.no_proxy(),
        Some(url) => {
            let proxy = reqwest::Proxy::all(url)
                .map_err(|e| setup(format!("invalid proxy `{url}`: {e}")))?;
            builder = builder.proxy(proxy);
        }
    }
    builder
        .build()
        .map_err(|e| setup(format!("cannot build the HTTP client: {e}")))
}

/// Makes `ring` the process-wide rustls crypto provider (reqwest needs one even for
/// plain HTTP clients). Idempotent and cheap.
pub fn install_crypto_provider() {
    // Errors only when a provider is already installed, which is what we want anyway.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// Sends a POST with a JSON body and the given headers. Non-success statuses become
/// classified errors (the body is read for the provider's message).
pub async fn post_json(
    http: &reqwest::Client,
    settings: &HttpSettings,
    url: &str,
    headers: &[(HeaderName, String)],
    body: Vec<u8>,
    model: &str,
) -> Result<reqwest::Response, ProviderError> {
    let mut map = HeaderMap::with_capacity(headers.len() + 1);
    map.insert(
        reqwest::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    for (name, value) in headers {
        let value = HeaderValue::from_str(value).map_err(|_| ProviderError::Setup {
            client: settings.client.clone(),
            message: format!("header `{name}` has characters that are not allowed"),
        })?;
        map.insert(name.clone(), value);
    }
    let response = http
        .post(url)
        .headers(map)
        .body(body)
        .send()
        .await
        .map_err(|e| connect_error(settings, url, &e))?;
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    Err(status_error(settings, response, model).await)
}

fn connect_error(settings: &HttpSettings, url: &str, e: &reqwest::Error) -> ProviderError {
    if e.is_connect() {
        let message = if e.is_timeout() {
            format!(
                "no connection within {}s (extra.connect_timeout)",
                settings.connect_timeout.as_secs()
            )
        } else {
            error_chain(e)
        };
        return ProviderError::Connect {
            client: settings.client.clone(),
            url: url.to_string(),
            message,
        };
    }
    if e.is_timeout() {
        return ProviderError::Timeout {
            client: settings.client.clone(),
            after: settings.read_timeout,
        };
    }
    ProviderError::Connect {
        client: settings.client.clone(),
        url: url.to_string(),
        message: error_chain(e),
    }
}

/// The innermost causes of a reqwest error, joined, without the URL reqwest repeats.
pub fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = Vec::new();
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = current {
        let text = err.to_string();
        if !parts.iter().any(|p: &String| p.contains(&text)) {
            parts.push(text);
        }
        current = err.source();
    }
    let last = parts.pop().unwrap_or_default();
    match parts.last() {
        Some(prev) if !prev.starts_with("error sending request") => format!("{prev}: {last}"),
        _ => last,
    }
}

async fn status_error(
    settings: &HttpSettings,
    response: reqwest::Response,
    model: &str,
) -> ProviderError {
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let retry_after = parse_retry_after(header("retry-after"), header("retry-after-ms"));
    let body = tokio::time::timeout(settings.read_timeout, response.bytes())
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default();
    let message = error_message(&body);
    let client = settings.client.clone();
    match status {
        401 | 403 => ProviderError::Auth {
            client,
            status,
            message,
        },
        404 => ProviderError::NotFound {
            client,
            model: model.to_string(),
            message,
        },
        429 => ProviderError::RateLimited {
            client,
            message,
            retry_after,
        },
        500..=599 => ProviderError::Server {
            client,
            status,
            message,
            retry_after,
        },
        _ => ProviderError::Rejected {
            client,
            status,
            message,
        },
    }
}

/// Extracts a human message from an error body in any of the shapes providers use.
pub fn error_message(body: &[u8]) -> String {
    let text = String::from_utf8_lossy(body);
    let Ok(json) = serde_json::from_slice::<serde_json::Value>(body) else {
        let trimmed = text.trim();
        return if trimmed.is_empty() {
            "no details in the response".into()
        } else {
            truncate(trimmed, 300)
        };
    };
    let json = match &json {
        serde_json::Value::Array(items) => items.first().cloned().unwrap_or_default(),
        _ => json,
    };
    let str_at =
        |v: &serde_json::Value, key: &str| v.get(key).and_then(|x| x.as_str()).map(str::to_string);
    if let Some(err) = json.get("error") {
        if let Some(s) = err.as_str() {
            return s.to_string();
        }
        let message = str_at(err, "message").unwrap_or_else(|| err.to_string());
        let kind = str_at(err, "type")
            .or_else(|| str_at(err, "code"))
            .or_else(|| str_at(err, "status"));
        return match kind {
            Some(kind) => format!("{message} ({kind})"),
            None => message,
        };
    }
    for key in ["message", "Message", "detail", "error_message"] {
        if let Some(s) = str_at(&json, key) {
            return s;
        }
    }
    truncate(&json.to_string(), 300)
}

fn truncate(s: &str, max: usize) -> String {
    // One line: HTML error pages from proxies come with newlines.
    let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let s = s.as_str();
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_string(),
    }
}

/// Reads the next piece of a streamed body, failing after `settings.read_timeout` of
/// silence. `Ok(None)` is a clean end of body.
pub async fn next_chunk<S>(
    body: &mut S,
    settings: &HttpSettings,
) -> Result<Option<Bytes>, ProviderError>
where
    S: futures_util::Stream<Item = reqwest::Result<Bytes>> + Unpin,
{
    match tokio::time::timeout(settings.read_timeout, body.next()).await {
        Err(_) => Err(ProviderError::Timeout {
            client: settings.client.clone(),
            after: settings.read_timeout,
        }),
        Ok(None) => Ok(None),
        Ok(Some(Ok(bytes))) => Ok(Some(bytes)),
        Ok(Some(Err(e))) if e.is_timeout() => Err(ProviderError::Timeout {
            client: settings.client.clone(),
            after: settings.read_timeout,
        }),
        Ok(Some(Err(e))) => Err(ProviderError::StreamCut {
            client: settings.client.clone(),
            message: error_chain(&e),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_bodies_in_every_shape() {
        assert_eq!(
            error_message(
                br#"{"error":{"message":"Incorrect API key","type":"invalid_request_error"}}"#
            ),
            "Incorrect API key (invalid_request_error)"
        );
        assert_eq!(
            error_message(br#"{"error":{"message":"m","code":"x"}}"#),
            "m (x)"
        );
        assert_eq!(error_message(br#"{"error":"plain"}"#), "plain");
        assert_eq!(
            error_message(
                br#"{"error":{"code":400,"message":"bad key","status":"INVALID_ARGUMENT"}}"#
            ),
            "bad key (INVALID_ARGUMENT)"
        );
        assert_eq!(error_message(br#"{"Message":"denied"}"#), "denied");
        assert_eq!(error_message(br#"[{"error":{"message":"arr"}}]"#), "arr");
        assert_eq!(error_message(br#"{"detail":"Not Found"}"#), "Not Found");
        assert_eq!(error_message(b"Bad Gateway"), "Bad Gateway");
        assert_eq!(error_message(b""), "no details in the response");
    }
}
