//! One running language server: starting and initialising it, requests with a timeout,
//! the documents opened in it, waiting for its diagnostics, and stopping it. The traffic
//! itself is in [`super::rpc`]; a server whose output ended counts as gone, and the pool
//! starts a new one on the next call.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::process::{Child, Command};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::convert::{Encoding, file_uri};
use super::rpc::{self, MAX_STDERR_LINE, Published, ServerPeer, Shared, lock};
use super::{LspConfig, LspError};
use crate::jsonrpc::peer::{Peer, write_all};
use crate::jsonrpc::{Closed, Framing, JsonRpc, RequestError};

/// How long a server may take to answer `initialize`.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long `lsp_diagnostics` waits for diagnostics to be published after opening or
/// changing a file (after an edit, `lsp_diagnostics_timeout` applies instead).
pub(super) const DIAGNOSTICS_TIMEOUT: Duration = Duration::from_secs(10);
/// After diagnostics arrive, how long to wait for a second batch (servers that publish
/// quick syntax errors first and the rest when the analysis is done).
const SETTLE: Duration = Duration::from_millis(250);
/// How long `shutdown` and the wait for the exit may take each.
const STOP_TIMEOUT: Duration = Duration::from_secs(2);
/// What a server said it can do.
#[derive(Debug, Clone, Copy, Default)]
struct Capabilities {
    /// Answers `textDocument/diagnostic` (pull diagnostics).
    pull_diagnostics: bool,
    /// Answers `textDocument/references`.
    references: bool,
    /// How it counts columns.
    encoding: Encoding,
}

/// A document as the server has it.
#[derive(Debug)]
struct Document {
    version: i64,
    text: String,
}

/// A running language server.
#[derive(Debug)]
pub(super) struct Server {
    /// The `lsp_servers` key.
    name: String,
    shared: Arc<Shared>,
    peer: Arc<ServerPeer>,
    child: tokio::sync::Mutex<Child>,
    capabilities: Capabilities,
    documents: tokio::sync::Mutex<HashMap<String, Document>>,
}

impl Server {
    /// Starts the server `name` for the workspace `root` and initialises it.
    pub(super) async fn start(
        name: &str,
        config: &LspConfig,
        root: &Path,
        cancel: &CancellationToken,
    ) -> Result<Self, LspError> {
        let failed = |reason: String| LspError::Server {
            server: name.to_string(),
            problem: format!("could not start (`{}`): {reason}", config.command),
        };
        let mut command = Command::new(&config.command);
        command
            .args(&config.args)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        withhold_secrets(&mut command);
        // Its own process group: Ctrl-C at the terminal does not reach it, and what it
        // starts (build scripts, checkers) is stopped with it.
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn().map_err(|e| failed(e.to_string()))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(failed("its stdio could not be connected".into()));
        };
        let root_uri = file_uri(root);
        let folder_name = root
            .file_name()
            .map_or_else(|| "root".into(), |n| n.to_string_lossy().into_owned());
        let shared = Arc::new(Shared::new(json!([{"uri": root_uri, "name": folder_name}])));
        let (peer, outbox) = Peer::new(JsonRpc, Framing::ContentLength);
        let peer = Arc::new(peer);
        tokio::spawn(write_all(stdin, outbox));
        tokio::spawn(rpc::read_loop(
            stdout,
            Arc::clone(&shared),
            Arc::clone(&peer),
        ));
        tokio::spawn(rpc::stderr_loop(
            stderr,
            Arc::clone(&shared),
            name.to_string(),
        ));
        let mut server = Self {
            name: name.to_string(),
            shared,
            peer,
            child: tokio::sync::Mutex::new(child),
            capabilities: Capabilities::default(),
            documents: tokio::sync::Mutex::default(),
        };
        let params = json!({
            "processId": std::process::id(),
            "clientInfo": {"name": "loki", "version": env!("CARGO_PKG_VERSION")},
            "rootUri": root_uri,
            "rootPath": root.to_string_lossy(),
            "workspaceFolders": server.shared.folders,
            "capabilities": {
                "general": {"positionEncodings": ["utf-8", "utf-16"]},
                "workspace": {"configuration": true, "workspaceFolders": true},
                "textDocument": {
                    "synchronization": {"dynamicRegistration": false, "didSave": false},
                    "publishDiagnostics": {"versionSupport": true},
                    "diagnostic": {"dynamicRegistration": false},
                    "references": {"dynamicRegistration": false},
                },
            },
        });
        let answer = match server
            .request("initialize", params, START_TIMEOUT, cancel)
            .await
        {
            Ok(answer) => answer,
            Err(LspError::Server { problem, .. }) => return Err(failed(problem)),
            Err(e) => return Err(e),
        };
        let capabilities = &answer["capabilities"];
        server.capabilities = Capabilities {
            pull_diagnostics: is_offered(&capabilities["diagnosticProvider"]),
            references: is_offered(&capabilities["referencesProvider"]),
            encoding: Encoding::from_capability(capabilities["positionEncoding"].as_str()),
        };
        server
            .notify("initialized", json!({}))
            .map_err(|_| failed("it closed its input".into()))?;
        tracing::debug!(server = %name, root = %root.display(), "language server started");
        Ok(server)
    }

    /// Whether it is still running (as far as its output says).
    pub(super) fn alive(&self) -> bool {
        self.shared.alive.load(Ordering::SeqCst)
    }

    /// How it counts columns.
    pub(super) fn encoding(&self) -> Encoding {
        self.capabilities.encoding
    }

    fn fail(&self, problem: String) -> LspError {
        LspError::Server {
            server: self.name.clone(),
            problem,
        }
    }

    /// The error for a server that went away: its exit status and last stderr line.
    async fn gone(&self) -> LspError {
        let failure = lock(&self.shared.failure).clone();
        let mut problem = match failure {
            Some(failure) => format!("stopped: {failure}"),
            None => {
                let mut child = self.child.lock().await;
                match tokio::time::timeout(Duration::from_millis(200), child.wait()).await {
                    Ok(Ok(status)) => format!("exited ({status})"),
                    _ => "closed its output".into(),
                }
            }
        };
        // Its last words may still be on their way.
        let mut stderr_done = self.shared.stderr_done.subscribe();
        let _ = tokio::time::timeout(
            Duration::from_millis(200),
            stderr_done.wait_for(|done| *done),
        )
        .await;
        let stderr = lock(&self.shared.stderr).clone();
        if !stderr.is_empty() {
            problem.push_str(&format!("; its last stderr line: {stderr}"));
        }
        self.fail(problem)
    }

    fn notify(&self, method: &str, params: Value) -> Result<(), Closed> {
        self.peer.notify(method, params)
    }

    /// Sends a request and waits for its answer (`timeout`, `cancel`).
    async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<Value, LspError> {
        let call = match self.peer.call(method, params) {
            Ok(call) if self.alive() => call,
            _ => return Err(self.gone().await),
        };
        let id = call.id.clone();
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(LspError::Cancelled),
            answer = tokio::time::timeout(timeout, call.answer()) => match answer {
                Err(_) => Err(self.fail(format!(
                    "did not answer {method} within {} s",
                    timeout.as_secs()
                ))),
                Ok(Err(RequestError::Closed)) => return Err(self.gone().await),
                Ok(Ok(result)) => Ok(result),
                Ok(Err(RequestError::Refused { code, message })) => Err(self.fail(format!(
                    "answered {method} with an error: {}",
                    error_text(&message, code)
                ))),
            },
        };
        if matches!(
            outcome,
            Err(LspError::Cancelled) | Err(LspError::Server { .. })
        ) && self.peer.forget(&id)
        {
            let _ = self.notify("$/cancelRequest", json!({"id": id}));
        }
        outcome
    }

    /// Makes the server's copy of `uri` hold `text`: opened the first time, changed (a new
    /// version) when it differs. Returns the version and whether anything was sent.
    async fn sync(&self, uri: &str, language: &str, text: &str) -> Result<(i64, bool), LspError> {
        let mut documents = self.documents.lock().await;
        let (version, message) = match documents.get_mut(uri) {
            Some(doc) if doc.text == text => return Ok((doc.version, false)),
            Some(doc) => {
                doc.version += 1;
                doc.text = text.to_string();
                let params = json!({
                    "textDocument": {"uri": uri, "version": doc.version},
                    "contentChanges": [{"text": text}],
                });
                (doc.version, ("textDocument/didChange", params))
            }
            None => {
                documents.insert(
                    uri.to_string(),
                    Document {
                        version: 1,
                        text: text.to_string(),
                    },
                );
                let params = json!({"textDocument": {
                    "uri": uri, "languageId": language, "version": 1, "text": text,
                }});
                (1, ("textDocument/didOpen", params))
            }
        };
        if self.notify(message.0, message.1).is_err() {
            documents.remove(uri);
            return Err(self.gone().await);
        }
        Ok((version, true))
    }

    /// The diagnostics last published for `uri` and the text the server was last given
    /// (before a change: what the edit is compared with).
    pub(super) async fn published(&self, uri: &str) -> Option<(Vec<Value>, String)> {
        let items = self.shared.latest(uri)?.items;
        let text = self.documents.lock().await.get(uri)?.text.clone();
        Some((items, text))
    }

    /// The diagnostics of `uri` once it holds `text`; `None` when the server published
    /// none by `deadline`.
    pub(super) async fn diagnostics(
        &self,
        uri: &str,
        language: &str,
        text: &str,
        deadline: Instant,
        cancel: &CancellationToken,
    ) -> Result<Option<Vec<Value>>, LspError> {
        let mut changes = self.shared.changes.subscribe();
        let before = self.shared.latest(uri);
        let (version, sent) = self.sync(uri, language, text).await?;
        if self.capabilities.pull_diagnostics {
            let params = json!({"textDocument": {"uri": uri}});
            match self
                .request(
                    "textDocument/diagnostic",
                    params,
                    deadline.saturating_duration_since(Instant::now()),
                    cancel,
                )
                .await
            {
                Ok(report) if report["kind"] == "full" => {
                    let items = report["items"].as_array().cloned().unwrap_or_default();
                    return Ok(Some(items));
                }
                Err(LspError::Cancelled) => return Err(LspError::Cancelled),
                _ if !self.alive() => return Err(self.gone().await),
                // Fall back on what it publishes.
                _ => {}
            }
        }
        if !sent && let Some(known) = &before {
            return Ok(Some(known.items.clone()));
        }
        let seen = before.map_or(0, |p| p.seq);
        let fresh = |p: &Published| p.seq > seen && p.version.is_none_or(|v| v >= version);
        let mut settle: Option<Instant> = None;
        loop {
            if !self.alive() {
                return Err(self.gone().await);
            }
            let latest = self.shared.latest(uri).filter(|p| fresh(p));
            if latest.is_some() && settle.is_none() {
                settle = Some((Instant::now() + SETTLE).min(deadline));
            }
            let until = settle.unwrap_or(deadline);
            let waited = tokio::select! {
                biased;
                () = cancel.cancelled() => return Err(LspError::Cancelled),
                changed = tokio::time::timeout_at(until, changes.changed()) => changed,
            };
            if !matches!(waited, Ok(Ok(()))) {
                // Timed out (or the server is gone: checked above on the next round).
                if !self.alive() {
                    return Err(self.gone().await);
                }
                return Ok(self
                    .shared
                    .latest(uri)
                    .filter(|p| fresh(p))
                    .map(|p| p.items));
            }
        }
    }

    /// The locations (raw LSP `Location`s) where the symbol at `line`:`character`
    /// (0-based, in the server's units) of `uri` is used, the declaration included.
    pub(super) async fn references(
        &self,
        uri: &str,
        language: &str,
        text: &str,
        line: usize,
        character: usize,
        cancel: &CancellationToken,
    ) -> Result<Vec<Value>, LspError> {
        if !self.capabilities.references {
            return Err(self.fail("does not answer references (no referencesProvider)".into()));
        }
        self.sync(uri, language, text).await?;
        let params = json!({
            "textDocument": {"uri": uri},
            "position": {"line": line, "character": character},
            "context": {"includeDeclaration": true},
        });
        let answer = self
            .request("textDocument/references", params, REQUEST_TIMEOUT, cancel)
            .await?;
        Ok(answer.as_array().cloned().unwrap_or_default())
    }

    /// Asks the server to stop (`shutdown`, `exit`) and waits briefly for it to close its
    /// output, then kills its process group (the server if it is still there, and what it
    /// started) and reaps it.
    pub(super) async fn stop(&self) {
        if self.alive() {
            let cancel = CancellationToken::new();
            let _ = self
                .request("shutdown", Value::Null, STOP_TIMEOUT, &cancel)
                .await;
            let _ = self.notify("exit", Value::Null);
            let mut changes = self.shared.changes.subscribe();
            let _ = tokio::time::timeout(STOP_TIMEOUT, changes.wait_for(|_| !self.alive())).await;
        }
        let mut child = self.child.lock().await;
        crate::process_group::kill_led_by(&child);
        let _ = child.start_kill();
        let _ = tokio::time::timeout(STOP_TIMEOUT, child.wait()).await;
        tracing::debug!(server = %self.name, "language server stopped");
    }
}

/// Whether a capability is offered: present, and not `false`.
fn is_offered(capability: &Value) -> bool {
    !matches!(capability, Value::Null | Value::Bool(false))
}

/// A JSON-RPC error's message on one line, shortened, with its code.
fn error_text(message: &str, code: Option<i64>) -> String {
    let mut text: String = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.len() > MAX_STDERR_LINE {
        text = text.chars().take(MAX_STDERR_LINE).collect::<String>() + "…";
    }
    match code {
        Some(code) => format!("{text} ({code})"),
        None => text,
    }
}

/// Removes loki's known secrets (API keys, vault entries) from the server's environment:
/// by name, and any variable holding one of their values.
fn withhold_secrets(command: &mut Command) {
    let secrets = loki_wire::secrets::known();
    let names = secrets.names();
    for (name, value) in std::env::vars_os() {
        let by_name = name.to_str().is_some_and(|n| names.iter().any(|s| s == n));
        let by_value = value.to_str().is_some_and(|v| secrets.contains_value(v));
        if by_name || by_value {
            command.env_remove(name);
        }
    }
}

impl Drop for Server {
    /// Kills the server's process group (the server itself dies by `kill_on_drop`; this
    /// takes what it started along).
    fn drop(&mut self) {
        crate::process_group::kill_led_by(self.child.get_mut());
    }
}
