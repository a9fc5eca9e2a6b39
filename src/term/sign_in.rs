//! `--authenticate [client]` and `.authenticate`: run a client's OAuth sign-in and save
//! its tokens. Anthropic shows a code to paste back; Google redirects to a one-shot
//! listener on 127.0.0.1.

use std::io::{BufRead, Write};
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::client::oauth::{CLAUDE_REDIRECT, Flavor, OAuthConfig, Pkce};
use crate::state::AppState;

/// How long to wait for the browser to come back.
const CALLBACK_TIMEOUT: Duration = Duration::from_secs(300);

/// Picks the client to sign in: the named one, the only one, or one the user selects.
pub fn choose(state: &AppState, name: Option<&str>) -> anyhow::Result<OAuthConfig> {
    let clients = state.providers.oauth_clients();
    if let Some(name) = name {
        return clients
            .into_iter()
            .find(|c| c.client == name)
            .ok_or_else(|| {
                anyhow!(
                    "Client '{name}' not found or doesn't support OAuth (set `auth: oauth` on a claude or gemini client)"
                )
            });
    }
    match clients.len() {
        0 => bail!(
            "No OAuth-capable clients configured (set `auth: oauth` on a claude or gemini client)"
        ),
        1 => Ok(clients
            .into_iter()
            .next()
            .ok_or_else(|| anyhow!("no client"))?),
        _ => {
            let names: Vec<String> = clients.iter().map(|c| c.client.clone()).collect();
            let picked = inquire::Select::new("Select a client to authenticate:", names)
                .prompt()
                .context("no client selected")?;
            clients
                .into_iter()
                .find(|c| c.client == picked)
                .ok_or_else(|| anyhow!("no client selected"))
        }
    }
}

/// Runs the flow for `config`, printing instructions to stderr; returns the success line.
pub async fn run(config: &OAuthConfig) -> anyhow::Result<String> {
    crate::client::http::install_crypto_provider();
    let http = reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(10))
        .timeout(Duration::from_secs(60))
        .build()?;
    let pkce = Pkce::new().map_err(|e| anyhow!(e))?;
    match config.flavor {
        Flavor::Claude => {
            let url = config.authorize_url(&pkce, CLAUDE_REDIRECT);
            announce(config, &url)?;
            {
                let mut err = std::io::stderr().lock();
                write!(err, "Paste the authorization code: ")?;
                err.flush()?;
            }
            let mut line = String::new();
            std::io::stdin().lock().read_line(&mut line)?;
            let (code, state) = line.trim().split_once('#').ok_or_else(|| {
                anyhow!("Invalid authorization code format. Expected format: <code>#<state>")
            })?;
            if state != pkce.state {
                bail!("the state in the pasted code does not match this sign-in; run it again");
            }
            config
                .exchange(&http, code, &pkce, CLAUDE_REDIRECT)
                .await
                .map_err(|e| anyhow!(e))?;
        }
        Flavor::Gemini => {
            if config.client_id.is_empty() {
                bail!(
                    "set `oauth_client_id` (and `oauth_client_secret`) for client '{}' to a Google OAuth desktop client",
                    config.client
                );
            }
            let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
            let redirect = format!(
                "http://127.0.0.1:{}/callback",
                listener.local_addr()?.port()
            );
            let url = config.authorize_url(&pkce, &redirect);
            announce(config, &url)?;
            writeln!(
                std::io::stderr().lock(),
                "Waiting for the browser to return to {redirect} …"
            )?;
            let code = tokio::time::timeout(CALLBACK_TIMEOUT, callback(&listener, &pkce.state))
                .await
                .map_err(|_| anyhow!("no answer from the browser within 5 minutes"))??;
            config
                .exchange(&http, &code, &pkce, &redirect)
                .await
                .map_err(|e| anyhow!(e))?;
        }
    }
    Ok(format!(
        "Successfully authenticated client '{}' with {} via OAuth. Tokens saved.",
        config.client,
        config.flavor.provider()
    ))
}

fn announce(config: &OAuthConfig, url: &str) -> anyhow::Result<()> {
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "Open this URL to authenticate with {} (client '{}'):\n{}",
        config.flavor.provider(),
        config.client,
        loki_wire::sanitize::display(url)
    )?;
    open_url(url);
    Ok(())
}

/// Best effort; the URL is printed either way.
fn open_browser(url: &str) {
    use std::io::IsTerminal;
    let graphical = std::env::var_os("DISPLAY").is_some()
        || std::env::var_os("WAYLAND_DISPLAY").is_some()
        || cfg!(target_os = "macos");
    if !graphical || !std::io::stderr().is_terminal() {
        return;
    }
    let opener = if cfg!(target_os = "macos") {
        "open"
    } else {
        "xdg-open"
    };
    let _ = std::process::Command::new(opener)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

/// Accepts the redirect, answers the browser, and returns the code after checking state.
async fn callback(listener: &tokio::net::TcpListener, state: &str) -> anyhow::Result<String> {
    let query = callback_query(listener, state).await?;
    let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    get("code").ok_or_else(|| anyhow!("the sign-in answer had no code"))
}

/// Accepts the redirect to `/callback` carrying `state`, answers the browser, and returns
/// the redirect's query (an `error` in it is the error). Connections that stall, fail or
/// carry another state (a stale tab) are answered and skipped; the wait goes on.
async fn callback_query(listener: &tokio::net::TcpListener, state: &str) -> anyhow::Result<String> {
    loop {
        let Ok((mut socket, _)) = listener.accept().await else {
            continue;
        };
        let Ok(Ok(head)) =
            tokio::time::timeout(Duration::from_secs(5), read_head(&mut socket)).await
        else {
            continue;
        };
        let target = head
            .lines()
            .next()
            .and_then(|l| l.split_whitespace().nth(1))
            .unwrap_or("");
        let Some(query) = target.strip_prefix("/callback?").map(str::to_string) else {
            // Favicon requests and the like.
            let _ = socket
                .write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                .await;
            continue;
        };
        let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let get = |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
        if get("state").as_deref() != Some(state) {
            respond(
                &mut socket,
                "This sign-in link is stale; use the one loki printed last.",
            )
            .await;
            continue;
        }
        let outcome = match (get("error"), get("code")) {
            (Some(error), _) => Err(anyhow!(
                "the sign-in was refused: {}",
                loki_wire::sanitize::display(&error)
            )),
            (None, Some(_)) => Ok(query),
            (None, None) => Err(anyhow!("the sign-in answer had no code")),
        };
        let page = if outcome.is_ok() {
            "Signed in to loki. You can close this tab."
        } else {
            "Sign-in failed; see the terminal."
        };
        respond(&mut socket, page).await;
        return outcome;
    }
}

/// Whether a sign-in URL may be handed to a browser: `https:`, or `http:` to this
/// machine. An authorization server announcing `file:`, `javascript:` or plain `http:`
/// elsewhere is not followed.
fn openable(url: &str) -> bool {
    match reqwest::Url::parse(url) {
        Ok(parsed) => match parsed.scheme() {
            "https" => true,
            "http" => parsed
                .host_str()
                .is_some_and(crate::origin::is_loopback_host),
            _ => false,
        },
        Err(_) => false,
    }
}

/// Opens `url` with `LOKI_BROWSER` (a command; the URL is its last argument) when set,
/// else the desktop's browser when there is one. The URL is printed either way; one that
/// is not `https:` (or `http:` to this machine) is not opened, and that is said.
fn open_url(url: &str) {
    if !openable(url) {
        let _ = writeln!(
            std::io::stderr().lock(),
            "warning: not opening that address in a browser: only https: (and http: to this machine) sign-in pages are opened"
        );
        return;
    }
    let Some(command) = std::env::var("LOKI_BROWSER")
        .ok()
        .filter(|c| !c.trim().is_empty())
    else {
        open_browser(url);
        return;
    };
    let mut words = crate::shell_words::split(&command);
    if words.is_empty() {
        return;
    }
    let program = words.remove(0);
    let _ = std::process::Command::new(program)
        .args(words)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn();
}

/// `loki --mcp-login NAME`: signs in to remote MCP server `name` with the browser and
/// keeps its tokens; returns the line to show.
pub async fn mcp_login(state: &AppState, name: &str) -> anyhow::Result<String> {
    use crate::mcp::config::Transport;
    let spec = state.mcp.spec(name).await.map_err(|e| anyhow!(e))?;
    let (url, sse) = match &spec.transport {
        Transport::Http { url, .. } => (url.clone(), false),
        Transport::Sse { url, .. } => (url.clone(), true),
        Transport::Stdio { .. } | Transport::Carried(_) => {
            bail!("MCP server `{name}` is not a remote server; it does not sign in")
        }
    };
    let Some(settings) = spec.oauth.clone() else {
        bail!(
            "MCP server `{name}` does not sign in (it has an Authorization header or \"oauth\": false in mcp.json)"
        );
    };
    let tokens = state
        .mcp
        .tokens()
        .ok_or_else(|| anyhow!("no place to keep the sign-in in"))?
        .clone();
    crate::client::http::install_crypto_provider();
    let challenge = probe(&url, sse).await;
    if challenge.is_none() {
        trial_start(&spec, &tokens).await?;
    }
    let listener =
        tokio::net::TcpListener::bind(("127.0.0.1", settings.redirect_port.unwrap_or(0)))
            .await
            .context("cannot listen on 127.0.0.1 for the browser's redirect")?;
    let redirect = format!(
        "http://127.0.0.1:{}/callback",
        listener.local_addr()?.port()
    );
    let session = crate::mcp::oauth::begin(
        name,
        &url,
        &tokens,
        &settings,
        challenge.as_deref(),
        &redirect,
    )
    .await?;
    let auth_url = session.get_authorization_url().to_string();
    let expected = state_of(&auth_url)?;
    if !openable(&auth_url) {
        bail!(
            "MCP server `{name}`: its authorization server sent a sign-in address loki will not open (only https:, or http: to this machine): {}",
            loki_wire::sanitize::display(&auth_url)
        );
    }
    tell_where_to_sign_in(name, &auth_url, &redirect)?;
    open_url(&auth_url);
    let query = tokio::select! {
        waited = tokio::time::timeout(CALLBACK_TIMEOUT, callback_query(&listener, &expected)) => {
            waited.map_err(|_| anyhow!("no answer from the browser within 5 minutes"))??
        }
        pasted = pasted_redirect() => pasted?,
    };
    let callback = format!("{redirect}?{query}");
    session
        .handle_callback_url(&callback)
        .await
        .map_err(|e| anyhow!("MCP server `{name}`: sign-in failed: {e}"))?;
    crate::mcp::oauth::forget_wanted(&tokens.dir, name);
    let status = crate::mcp::oauth::status(&tokens, name);
    Ok(format!(
        "✓ MCP server `{name}`: {status} (kept in {})",
        tokens.place(name)
    ))
}

/// A server that lets `initialize` through challenges later requests: a trial start
/// meets that challenge and notes the scope it names. Only an unreachable server stops
/// the sign-in.
async fn trial_start(
    spec: &crate::mcp::config::ServerSpec,
    tokens: &crate::mcp::oauth::Tokens,
) -> anyhow::Result<()> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .build()?;
    let trial = crate::mcp::server::McpServer::start(spec.clone(), http, 1 << 20, Some(tokens));
    match tokio::time::timeout(Duration::from_secs(30), trial).await {
        Ok(Err(crate::mcp::McpError::Start(why))) if why.starts_with("cannot reach") => {
            bail!("MCP server `{}`: {why}", spec.name);
        }
        Ok(Ok(server)) => drop(server),
        _ => {}
    }
    Ok(())
}

/// The `state` the authorization URL carries, which the browser's redirect must bring
/// back.
fn state_of(auth_url: &str) -> anyhow::Result<String> {
    reqwest::Url::parse(auth_url)
        .ok()
        .and_then(|u| {
            u.query_pairs()
                .find(|(k, _)| k == "state")
                .map(|(_, v)| v.into_owned())
        })
        .ok_or_else(|| anyhow!("the authorization URL has no state"))
}

/// Tells the user (on stderr) the address to open, and how the sign-in comes back.
fn tell_where_to_sign_in(name: &str, auth_url: &str, redirect: &str) -> std::io::Result<()> {
    let mut err = std::io::stderr().lock();
    writeln!(
        err,
        "Open this URL to sign in to MCP server `{name}`:\n{}",
        loki_wire::sanitize::display(auth_url)
    )?;
    if std::env::var_os("SSH_CONNECTION").is_some() {
        writeln!(
            err,
            "Over SSH the browser cannot reach this machine: after signing in, paste the address the browser ends on here."
        )?;
    }
    writeln!(err, "Waiting for the browser to return to {redirect} …")
}

/// A redirect address pasted on a terminal's stdin (sign-in over SSH): its query. Waits
/// forever when stdin is not a terminal.
async fn pasted_redirect() -> anyhow::Result<String> {
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        return std::future::pending().await;
    }
    let line = tokio::task::spawn_blocking(|| {
        let mut line = String::new();
        std::io::stdin().lock().read_line(&mut line).map(|_| line)
    })
    .await??;
    let url = reqwest::Url::parse(line.trim())
        .map_err(|_| anyhow!("that is not the address the browser ended on"))?;
    url.query()
        .map(str::to_string)
        .ok_or_else(|| anyhow!("that address has no sign-in answer in it"))
}

/// The `WWW-Authenticate` challenge of an unauthenticated `initialize` POST (the SSE
/// stream's GET for `sse` servers), if the server answers 401 or 403 with one.
async fn probe(url: &str, sse: bool) -> Option<String> {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(20))
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .ok()?;
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "loki", "version": env!("CARGO_PKG_VERSION")}}
    });
    let request = if sse {
        http.get(url).header("accept", "text/event-stream")
    } else {
        http.post(url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-method", "initialize")
            .json(&body)
    };
    let response = request.send().await.ok()?;
    if !matches!(response.status().as_u16(), 401 | 403) {
        return None;
    }
    response
        .headers()
        .get("www-authenticate")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
}

/// Reads an HTTP request head (it may arrive in pieces), at most 16 KiB.
async fn read_head(socket: &mut tokio::net::TcpStream) -> std::io::Result<String> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !buf.windows(4).any(|w| w == b"\r\n\r\n") && buf.len() < 16 * 1024 {
        let n = socket.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

async fn respond(socket: &mut tokio::net::TcpStream, page: &str) {
    let reply = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
        page.len()
    );
    let _ = socket.write_all(reply.as_bytes()).await;
}

#[cfg(test)]
mod url_tests {
    use super::openable;

    #[test]
    fn only_https_and_loopback_http_are_opened() {
        assert!(openable("https://auth.example.com/authorize?x=1"));
        assert!(openable("http://127.0.0.1:8080/authorize"));
        assert!(openable("http://localhost/authorize"));
        assert!(!openable("http://auth.example.com/authorize"));
        assert!(!openable("file:///etc/passwd"));
        assert!(!openable("javascript:alert(1)"));
        assert!(!openable("not a url"));
    }
}
