//! Who may call an HTTP server loki runs on this machine: which `Host` names are this
//! machine, and which web page origins may call it. Shared by `--serve` and
//! `--mcp-server`.

use std::net::IpAddr;

/// Whether `host` (a `Host` header: name or address, maybe a port) is this machine.
pub fn is_loopback_host(host: &str) -> bool {
    let name = match host.strip_prefix('[') {
        Some(rest) => rest.split(']').next().unwrap_or(""),
        None => host.rsplit_once(':').map_or(host, |(name, port)| {
            if port.chars().all(|c| c.is_ascii_digit()) {
                name
            } else {
                host
            }
        }),
    };
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    name == "localhost"
        || name.ends_with(".localhost")
        || name.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// Whether a page at `origin` may call: `listed` (`api.cors.allowed_origins`), or this
/// server itself (the playground).
pub fn origin_allowed(listed: &[String], origin: &str, host: Option<&str>) -> bool {
    let listed = listed
        .iter()
        .any(|a| a == "*" || a.eq_ignore_ascii_case(origin));
    let own = host.is_some_and(|host| {
        ["http://", "https://"]
            .iter()
            .any(|scheme| origin.eq_ignore_ascii_case(&format!("{scheme}{host}")))
    });
    listed || own
}
