//! What a request must look like before its key is even looked at, what it then needs,
//! and the headers every answer carries.
//!
//! A web page the user visits can send requests to a server on their machine. Browsers
//! always name the page's `Origin` on such requests, so one from an origin that is
//! neither this server's own nor listed in `api.cors.allowed_origins` is refused; a
//! body must be `application/json` (which a page cannot send without a preflight); and
//! with auth disabled only loopback `Host` names are served, so a DNS name rebound to
//! 127.0.0.1 gets nothing.

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};

use super::reply::ApiError;
use crate::config::api::ApiConfig;
use crate::origin::{is_loopback_host, origin_allowed};

/// Refuses a request from a foreign origin, to a foreign host name (auth disabled), or
/// with a body that is not JSON.
pub(super) fn screen(
    api: &ApiConfig,
    auth_disabled: bool,
    request: &Request,
) -> Result<(), ApiError> {
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| request.uri().authority().map(ToString::to_string));
    if auth_disabled && !host.as_deref().is_some_and(is_loopback_host) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden_host",
            format!(
                "auth is disabled, so only loopback host names are served (localhost, 127.0.0.1, [::1]), not `{}`",
                host.as_deref().unwrap_or("")
            ),
        ));
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        if !origin_allowed(&api.cors.allowed_origins, origin, host.as_deref()) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden_origin",
                format!(
                    "requests from the web page at `{origin}` are refused (add it to api.cors.allowed_origins to allow it)"
                ),
            ));
        }
    }
    if has_body(request.method(), headers) && !is_json(headers) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported_media_type",
            "request bodies must be JSON (Content-Type: application/json)",
        ));
    }
    Ok(())
}

fn has_body(method: &Method, headers: &HeaderMap) -> bool {
    if matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS) {
        return false;
    }
    let length = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    length.is_some_and(|n| n > 0) || headers.contains_key(header::TRANSFER_ENCODING)
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|kind| {
            let kind = kind.trim().to_ascii_lowercase();
            kind == "application/json"
                || (kind.starts_with("application/") && kind.ends_with("+json"))
        })
}

/// The scopes of which a request needs one; none for the public paths (the playground
/// and health checks).
pub(super) fn required_scopes(method: &Method, path: &str) -> Option<&'static [&'static str]> {
    let read = *method == Method::GET;
    Some(match path {
        "/" | "/app.js" => return None,
        p if p.starts_with("/healthz/") => return None,
        "/metrics" => &["read:metrics"],
        // Any valid key: it says whose it is and what it may do.
        "/v1/auth/check" => &[],
        p if p.starts_with("/v1/sessions") && read => &["read:sessions"],
        p if p.starts_with("/v1/sessions") => &["write:sessions"],
        p if p.starts_with("/v1/approvals/") || p.starts_with("/v1/runs/") => {
            &["run:models", "write:sessions"]
        }
        p if p.starts_with("/v1/roles") => &["read:roles"],
        p if p.starts_with("/v1/agents") => &["read:agents"],
        p if p.starts_with("/v1/rags") && read => &["read:rags"],
        p if p.starts_with("/v1/rags") => &["admin:rags"],
        _ if read => &["read:models"],
        _ => &["run:models"],
    })
}

/// Headers every answer carries.
pub(super) fn harden(headers: &mut HeaderMap) {
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_host_names() {
        for host in [
            "localhost",
            "localhost:3400",
            "127.0.0.1:80",
            "127.1.2.3",
            "[::1]:3400",
            "[::1]",
            "app.localhost:1",
            "LOCALHOST.",
        ] {
            assert!(is_loopback_host(host), "{host}");
        }
        for host in [
            "attacker.example",
            "attacker.example:3400",
            "127.0.0.1.attacker.example",
            "10.0.0.1:3400",
            "[::2]:1",
            "",
            "localhost.attacker.example",
        ] {
            assert!(!is_loopback_host(host), "{host}");
        }
    }

    #[test]
    fn scopes_per_route() {
        assert_eq!(required_scopes(&Method::GET, "/healthz/live"), None);
        assert_eq!(
            required_scopes(&Method::GET, "/v1/sessions/x"),
            Some(&["read:sessions"][..])
        );
        assert_eq!(
            required_scopes(&Method::POST, "/v1/chat/completions"),
            Some(&["run:models"][..])
        );
        assert_eq!(
            required_scopes(&Method::GET, "/v1/models"),
            Some(&["read:models"][..])
        );
    }
}
