//! HTTP transport shared by the wire modules: building the `reqwest` client from a
//! client's `extra:` settings, sending a JSON request, mapping non-success statuses to
//! [`ProviderError`], and reading a streamed body with an idle timeout.
//!
//! Text a server sends back (an error body, an HTML page from a proxy) is turned into one
//! short line here: HTML is reduced to its title, everything is cut to a few hundred
//! characters, and known secrets are redacted before the text becomes part of an error.
//!
//! TLS roots are loaded only for `https` endpoints: a local `http://` server never pays for
//! reading the system certificate store.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};

use super::error::ProviderError;
use super::patch::ClientPatches;
use super::retry::{RetryPolicy, parse_retry_after};
use super::reuse::{ConnectionCount, closed_before_response};
use crate::config::clients::ExtraConfig;

/// Why a fetched page is not usable, from its status: a redirect that was not followed
/// (to another scheme such as `file://`, or another origin) says where it pointed.
pub fn status_problem(response: &reqwest::Response) -> String {
    let status = response.status();
    let location = response
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .filter(|_| status.is_redirection());
    match location {
        Some(to) => format!(
            "HTTP {status}: a redirect to `{to}` that was not followed (only http and https redirects are)"
        ),
        None => format!("HTTP {status}"),
    }
}

/// Why a response body could not be decoded.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// The gzip stream is broken.
    #[error("cannot decompress the gzip body: {0}")]
    Gzip(std::io::Error),
    /// Decompressed, it is over the limit (bytes).
    #[error("the decompressed body is over {0} bytes")]
    TooLarge(usize),
    /// A `Content-Encoding` loki cannot decode.
    #[error("the server compressed the body with `{0}`, which loki does not read")]
    Encoding(String),
}

/// The body as sent, decompressed when the server compressed it with gzip (reqwest asks
/// for no encoding, but some servers send one anyway), at most `max` bytes. Another
/// encoding is an error naming it.
pub fn decoded_body(
    headers: &reqwest::header::HeaderMap,
    bytes: Vec<u8>,
    max: usize,
) -> Result<Vec<u8>, BodyError> {
    let encoding = headers
        .get(reqwest::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default();
    match encoding.as_str() {
        "" | "identity" => Ok(bytes),
        "gzip" | "x-gzip" => {
            use std::io::Read;
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(&bytes[..])
                .take(u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1))
                .read_to_end(&mut out)
                .map_err(BodyError::Gzip)?;
            if out.len() > max {
                return Err(BodyError::TooLarge(max));
            }
            Ok(out)
        }
        other => Err(BodyError::Encoding(other.to_string())),
    }
}

/// The media type of a response (`text/html`), lower-cased, without parameters; empty
/// when there is none.
pub fn mime_type(headers: &reqwest::header::HeaderMap) -> String {
    headers
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Default seconds to establish a connection.
const DEFAULT_CONNECT_TIMEOUT: u64 = 10;
/// Default seconds of silence tolerated while reading a response.
const DEFAULT_READ_TIMEOUT: u64 = 300;
/// The most of an error body that is read to find the provider's message.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// Limits on one model request, from the global `stream_idle_timeout`,
/// `request_timeout` and `max_stream_event_size` keys. `None` means no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestLimits {
    /// Longest time a streamed answer may go without new content (keep-alive comments
    /// and incomplete events do not count as content).
    pub idle: Option<Duration>,
    /// Longest time one request may take, from sending it to the end of the answer.
    pub total: Option<Duration>,
    /// Largest single stream event (or non-streamed body), in bytes.
    pub max_event: Option<usize>,
}

impl RequestLimits {
    /// Default `stream_idle_timeout`, seconds.
    pub const DEFAULT_IDLE_SECS: u64 = crate::config::DEFAULT_STREAM_IDLE_SECS;
    /// Default `request_timeout`, seconds.
    pub const DEFAULT_TOTAL_SECS: u64 = crate::config::DEFAULT_REQUEST_TIMEOUT_SECS;
    /// Default `max_stream_event_size`, bytes.
    pub const DEFAULT_MAX_EVENT: usize = crate::config::DEFAULT_MAX_STREAM_EVENT_SIZE;

    /// Limits from the config values, where `0` disables a limit.
    pub fn new(idle_secs: u64, total_secs: u64, max_event: usize) -> Self {
        Self {
            idle: (idle_secs > 0).then(|| Duration::from_secs(idle_secs)),
            total: (total_secs > 0).then(|| Duration::from_secs(total_secs)),
            max_event: (max_event > 0).then_some(max_event),
        }
    }
}

impl Default for RequestLimits {
    fn default() -> Self {
        Self::new(
            Self::DEFAULT_IDLE_SECS,
            Self::DEFAULT_TOTAL_SECS,
            Self::DEFAULT_MAX_EVENT,
        )
    }
}

/// When a request was sent; stored in the response's extensions by [`post_json`] so the
/// streaming code can hold the whole request to [`RequestLimits::total`].
#[derive(Debug, Clone, Copy)]
pub struct RequestStarted(pub Instant);

/// `16 MiB`, `512 KiB`, `100 bytes`.
pub fn human_size(bytes: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= KIB && bytes.is_multiple_of(KIB) {
        format!("{} KiB", bytes / KIB)
    } else {
        format!("{bytes} bytes")
    }
}

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
    /// Idle, total-time and size limits of one request.
    pub limits: RequestLimits,
    /// Request patches of the client.
    pub patches: Arc<ClientPatches>,
    /// A configuration problem found when the client was built, reported on first use.
    pub broken: Option<String>,
    /// Connections the client has opened: tells a request sent on a pooled keep-alive
    /// connection from one that opened its own (see [`super::reuse`]).
    pub connections: ConnectionCount,
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
            limits: RequestLimits::default(),
            patches: Arc::default(),
            broken: None,
            connections: ConnectionCount::default(),
        }
    }
}

/// A lazily built `reqwest::Client`: nothing is allocated until the first request.
#[derive(Debug, Default)]
pub struct LazyHttp {
    cell: OnceLock<reqwest::Client>,
    /// Held while the client is built: concurrent first requests (a server's cold burst)
    /// wait for one client instead of each building (and loading the trust store for)
    /// their own.
    building: std::sync::Mutex<()>,
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
        let _building = self
            .building
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
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
        .read_timeout(settings.read_timeout)
        .redirect(same_origin_redirects())
        .connector_layer(settings.connections.clone());
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

/// Most redirects followed.
const MAX_REDIRECTS: usize = 10;

/// The redirect policy of every client that sends credentials (API keys, MCP headers):
/// redirects are followed within the origin the request went to, and a redirect to
/// another origin is an error naming it. reqwest drops `Authorization` on such a
/// redirect but forwards other headers (`x-api-key`, `x-goog-api-key`, `api-key`, custom
/// ones), which would hand the key to a server the user never configured.
pub fn same_origin_redirects() -> reqwest::redirect::Policy {
    reqwest::redirect::Policy::custom(|attempt| {
        let from = attempt.previous().first().map(reqwest::Url::origin);
        let to = attempt.url().origin();
        if from.as_ref().is_some_and(|from| *from != to) {
            let target = to.ascii_serialization();
            attempt.error(format!(
                "the server redirected to another origin ({}); not followed, so that \
                 credentials go only where they were configured",
                loki_wire::secrets::redact(&target)
            ))
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error(format!("more than {MAX_REDIRECTS} redirects"))
        } else {
            attempt.follow()
        }
    })
}

/// Makes `ring` the process-wide rustls crypto provider (reqwest needs one even for
/// plain HTTP clients). Idempotent and cheap.
pub fn install_crypto_provider() {
    // Errors only when a provider is already installed, which is what we want anyway.
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// `loki/<version>`, the `User-Agent` of requests a user did not name one for.
pub const USER_AGENT: &str = concat!("loki/", env!("CARGO_PKG_VERSION"));

/// The client that fetches web pages for `-f` and knowledge bases: `user_agent` (or
/// [`USER_AGENT`]), 10 s to connect, 60 s for the whole page.
pub fn web_client(user_agent: Option<&str>) -> reqwest::Result<reqwest::Client> {
    install_crypto_provider();
    reqwest::Client::builder()
        .user_agent(user_agent.unwrap_or(USER_AGENT))
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(60))
        .build()
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
    let started = Instant::now();
    let send = send_reusing(http, settings, url, map, bytes::Bytes::from(body));
    let sent =
        match settings.limits.total {
            Some(limit) => tokio::time::timeout(limit, send).await.map_err(|_| {
                ProviderError::RequestTimeout {
                    client: settings.client.clone(),
                    after: limit,
                }
            })?,
            None => send.await,
        };
    let mut response = sent.map_err(|e| connect_error(settings, url, &e))?;
    response.extensions_mut().insert(RequestStarted(started));
    let status = response.status();
    if status.is_success() {
        return Ok(response);
    }
    Err(status_error(settings, response, model).await)
}

/// Sends the request; when it went out on a pooled keep-alive connection that the server
/// had closed (it failed at once, before any response byte, and opened no connection of
/// its own), sends it once more at once, without a word: a fresh connection is what the
/// server expects. `max_retries: 0` sends everything once.
async fn send_reusing(
    http: &reqwest::Client,
    settings: &HttpSettings,
    url: &str,
    headers: HeaderMap,
    body: bytes::Bytes,
) -> Result<reqwest::Response, reqwest::Error> {
    let sent_at = Instant::now();
    let (first, opened) = super::reuse::count_opened(
        http.post(url)
            .headers(headers.clone())
            .body(body.clone())
            .send(),
    )
    .await;
    match first {
        Err(e)
            if opened == 0
                && settings.retry.max_retries > 0
                && sent_at.elapsed() < super::reuse::STALE_WITHIN
                && closed_before_response(&e) =>
        {
            tracing::debug!(
                client = %settings.client,
                error = %error_chain(&e),
                "a reused connection was closed before the response; sending again"
            );
            http.post(url).headers(headers).body(body).send().await
        }
        other => other,
    }
}

/// How long may still be spent on `response` before [`RequestLimits::total`] runs out
/// (`None`: no limit).
pub fn time_left(response_started: Option<Instant>, limits: &RequestLimits) -> Option<Duration> {
    let total = limits.total?;
    let started = response_started?;
    Some(total.saturating_sub(started.elapsed()))
}

fn connect_error(settings: &HttpSettings, url: &str, e: &reqwest::Error) -> ProviderError {
    if e.is_redirect() {
        // Retrying would be redirected again.
        return ProviderError::Setup {
            client: settings.client.clone(),
            message: error_chain(e),
        };
    }
    if e.is_builder() {
        // A URL reqwest cannot use (a bad `api_base` or patched `url`): retrying cannot
        // help, so this is a configuration error.
        return ProviderError::Setup {
            client: settings.client.clone(),
            message: format!(
                "cannot send a request to `{}`: {} — check the client's api_base",
                loki_wire::secrets::redact(url),
                error_chain(e)
            ),
        };
    }
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
    if closed_before_response(e) {
        return ProviderError::Closed {
            client: settings.client.clone(),
            url: url.to_string(),
            message: error_chain(e),
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
    let text = match parts.last() {
        Some(prev) if !prev.starts_with("error sending request") => format!("{prev}: {last}"),
        _ => last,
    };
    loki_wire::secrets::redact(&text).into_owned()
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
    let is_html = content_type_of(&response).contains("html");
    let body = tokio::time::timeout(settings.read_timeout, read_prefix(response, MAX_ERROR_BODY))
        .await
        .unwrap_or_default();
    let message = if is_html {
        html_summary(&body).unwrap_or_else(|| format!("an HTML page ({} bytes)", body.len()))
    } else {
        error_message(&body)
    };
    // A redirect that was not followed (another scheme, such as file://): say where.
    let message = match header("location").filter(|_| (300..400).contains(&status)) {
        Some(to) => format!(
            "a redirect to `{}` that was not followed (only http and https redirects within the origin are)",
            to.chars().take(200).collect::<String>()
        ),
        None => message,
    };
    let message = loki_wire::secrets::redact(&message).into_owned();
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

/// The `Content-Type` of a response, lower-cased, `none` when absent.
pub fn content_type_of(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map_or_else(|| "none".to_string(), str::to_ascii_lowercase)
}

/// Reads at most `max` bytes of a body (the rest is never downloaded).
pub async fn read_prefix(mut response: reqwest::Response, max: usize) -> Vec<u8> {
    let mut out = Vec::new();
    while out.len() < max {
        match response.chunk().await {
            Ok(Some(chunk)) => {
                let take = chunk.len().min(max - out.len());
                out.extend_from_slice(&chunk[..take]);
            }
            _ => break,
        }
    }
    out
}

use loki_wire::body_stream::Waited;
use loki_wire::error_text::{error_message, html_summary};

/// The shortest of the waits that apply, and which limit it is.
pub fn next_wait(
    settings: &HttpSettings,
    idle_left: Option<Duration>,
    total_left: Option<Duration>,
) -> (Duration, Waited) {
    loki_wire::body_stream::next_wait(settings.read_timeout, idle_left, total_left)
}

/// The error for a wait that ran out.
pub fn waited_error(settings: &HttpSettings, waited: Waited) -> ProviderError {
    let client = settings.client.clone();
    match waited {
        Waited::Silence => ProviderError::Timeout {
            client,
            after: settings.read_timeout,
        },
        Waited::Idle => ProviderError::IdleTimeout {
            client,
            after: settings.limits.idle.unwrap_or_default(),
        },
        Waited::Total => ProviderError::RequestTimeout {
            client,
            after: settings.limits.total.unwrap_or_default(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use loki_wire::error_text::body_snippet;

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

    const NGINX_502: &[u8] = b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n";

    #[test]
    fn html_pages_are_reduced_to_their_title() {
        assert_eq!(error_message(NGINX_502), "502 Bad Gateway (an HTML page)");
        assert_eq!(
            html_summary(b"<!DOCTYPE html><body><h1>Sign in &amp; continue</h1><p>x</p></body>")
                .as_deref(),
            Some("Sign in & continue (an HTML page)")
        );
        assert_eq!(
            html_summary(b"<html><body><p>Just   some\n text</p></body></html>").as_deref(),
            Some("Just some text (an HTML page)")
        );
        assert_eq!(html_summary(b"plain words"), None);
        assert_eq!(
            body_snippet(b"Service\tunavailable\x1b[2J"),
            "`Service unavailable [2J`"
        );
        assert_eq!(body_snippet(b"  "), "an empty body");
    }

    #[test]
    fn sizes_read_well() {
        assert_eq!(human_size(16 * 1024 * 1024), "16 MiB");
        assert_eq!(human_size(4096), "4 KiB");
        assert_eq!(human_size(1000), "1000 bytes");
    }

    #[test]
    fn the_shortest_wait_wins_and_is_named() {
        let settings = HttpSettings::new("c", None, None);
        let secs = Duration::from_secs;
        // (idle left, total left) → the wait and what it stands for.
        let cases = [
            (None, None, (secs(300), Waited::Silence)),
            (Some(secs(5)), Some(secs(9)), (secs(5), Waited::Idle)),
            (Some(secs(5)), Some(secs(2)), (secs(2), Waited::Total)),
        ];
        for (idle, total, wait) in cases {
            assert_eq!(
                next_wait(&settings, idle, total),
                wait,
                "{idle:?} {total:?}"
            );
        }
    }
}
