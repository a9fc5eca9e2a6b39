//! One running language server: its process, the JSON-RPC traffic over its stdio, the
//! documents opened in it and the diagnostics it published.
//!
//! A reader task takes every message off the server's stdout: responses go to the request
//! waiting for them, published diagnostics are kept by document, and the server's own
//! requests (`workspace/configuration`, `client/registerCapability`, …) are answered at
//! once so it never waits on loki. A writer task owns stdin. When stdout ends, or a
//! message breaks the framing, the server counts as gone: pending requests fail, and the
//! pool starts a new one on the next call.

use std::collections::HashMap;
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::convert::{Encoding, file_uri};
use super::framing::{self, MAX_MESSAGE};
use super::{LspConfig, LspError};

/// How long a server may take to answer `initialize`.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// How long to wait for diagnostics to be published after opening or changing a file.
const DIAGNOSTICS_TIMEOUT: Duration = Duration::from_secs(10);
/// After diagnostics arrive, how long to wait for a second batch (servers that publish
/// quick syntax errors first and the rest when the analysis is done).
const SETTLE: Duration = Duration::from_millis(250);
/// How long `shutdown` and the wait for the exit may take each.
const STOP_TIMEOUT: Duration = Duration::from_secs(2);
/// Diagnostics kept per document.
const MAX_DIAGNOSTICS: usize = 2_000;
/// The longest stderr line kept for error messages.
const MAX_STDERR_LINE: usize = 300;

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

/// Diagnostics a server published for one document.
#[derive(Debug, Clone)]
struct Published {
    /// Increases with every publication (of any document).
    seq: u64,
    /// The document version they are for, when the server said.
    version: Option<i64>,
    items: Vec<Value>,
}

/// A document as the server has it.
#[derive(Debug)]
struct Document {
    version: i64,
    text: String,
}

/// What the reader task and the callers share.
#[derive(Debug)]
struct Shared {
    pending: Mutex<HashMap<i64, oneshot::Sender<Result<Value, Value>>>>,
    published: Mutex<HashMap<String, Published>>,
    seq: AtomicU64,
    /// Bumped on every publication and when the server goes away.
    changes: watch::Sender<u64>,
    alive: AtomicBool,
    /// Why reading stopped, if it was not a clean end of stream.
    failure: Mutex<Option<String>>,
    /// The last line the server wrote to stderr.
    stderr: Mutex<String>,
    /// Set once its stderr ended.
    stderr_done: watch::Sender<bool>,
    /// The workspace folders (answer to `workspace/workspaceFolders`).
    folders: Value,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Shared {
    fn publish(&self, params: Option<&Value>) {
        let Some(uri) = params.and_then(|p| p["uri"].as_str()) else {
            return;
        };
        let items = params
            .and_then(|p| p["diagnostics"].as_array())
            .map(|items| items.iter().take(MAX_DIAGNOSTICS).cloned().collect())
            .unwrap_or_default();
        let published = Published {
            seq: self.seq.fetch_add(1, Ordering::SeqCst) + 1,
            version: params.and_then(|p| p["version"].as_i64()),
            items,
        };
        lock(&self.published).insert(uri.to_string(), published);
        self.changes.send_modify(|n| *n += 1);
    }

    fn latest(&self, uri: &str) -> Option<Published> {
        lock(&self.published).get(uri).cloned()
    }

    fn close(&self, failure: Option<String>) {
        self.alive.store(false, Ordering::SeqCst);
        if failure.is_some() {
            *lock(&self.failure) = failure;
        }
        lock(&self.pending).clear();
        self.changes.send_modify(|n| *n += 1);
    }
}

/// A running language server.
#[derive(Debug)]
pub(super) struct Server {
    /// The `lsp_servers` key.
    name: String,
    shared: Arc<Shared>,
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
    next_id: AtomicI64,
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
        let shared = Arc::new(Shared {
            pending: Mutex::default(),
            published: Mutex::default(),
            seq: AtomicU64::new(0),
            changes: watch::channel(0).0,
            alive: AtomicBool::new(true),
            failure: Mutex::default(),
            stderr: Mutex::default(),
            stderr_done: watch::channel(false).0,
            folders: json!([{"uri": root_uri, "name": folder_name}]),
        });
        let (outgoing, queue) = mpsc::unbounded_channel();
        tokio::spawn(write_loop(stdin, queue));
        tokio::spawn(read_loop(stdout, Arc::clone(&shared), outgoing.clone()));
        tokio::spawn(stderr_loop(stderr, Arc::clone(&shared), name.to_string()));
        let mut server = Self {
            name: name.to_string(),
            shared,
            outgoing,
            next_id: AtomicI64::new(1),
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

    fn send(&self, message: &Value) -> Result<(), ()> {
        self.outgoing.send(framing::encode(message)).map_err(|_| ())
    }

    fn notify(&self, method: &str, params: Value) -> Result<(), ()> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// Sends a request and waits for its answer (`timeout`, `cancel`).
    async fn request(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> Result<Value, LspError> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (reply, answer) = oneshot::channel();
        lock(&self.shared.pending).insert(id, reply);
        let message = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if !self.alive() || self.send(&message).is_err() {
            lock(&self.shared.pending).remove(&id);
            return Err(self.gone().await);
        }
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => Err(LspError::Cancelled),
            answer = tokio::time::timeout(timeout, answer) => match answer {
                Err(_) => Err(self.fail(format!(
                    "did not answer {method} within {} s",
                    timeout.as_secs()
                ))),
                Ok(Err(_)) => return Err(self.gone().await),
                Ok(Ok(Ok(result))) => Ok(result),
                Ok(Ok(Err(error))) => Err(self.fail(format!(
                    "answered {method} with an error: {}",
                    error_text(&error)
                ))),
            },
        };
        if matches!(
            outcome,
            Err(LspError::Cancelled) | Err(LspError::Server { .. })
        ) && lock(&self.shared.pending).remove(&id).is_some()
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

    /// The diagnostics of `uri` once it holds `text`; `None` when the server published
    /// none in time.
    pub(super) async fn diagnostics(
        &self,
        uri: &str,
        language: &str,
        text: &str,
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
                    DIAGNOSTICS_TIMEOUT,
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
        let deadline = Instant::now() + DIAGNOSTICS_TIMEOUT;
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

    /// Asks the server to stop (`shutdown`, `exit`), waits briefly, then kills it.
    pub(super) async fn stop(&self) {
        if self.alive() {
            let cancel = CancellationToken::new();
            let _ = self
                .request("shutdown", Value::Null, STOP_TIMEOUT, &cancel)
                .await;
            let _ = self.notify("exit", Value::Null);
        }
        let mut child = self.child.lock().await;
        if tokio::time::timeout(STOP_TIMEOUT, child.wait())
            .await
            .is_err()
        {
            let _ = child.start_kill();
            let _ = tokio::time::timeout(STOP_TIMEOUT, child.wait()).await;
        }
        tracing::debug!(server = %self.name, "language server stopped");
    }
}

/// Whether a capability is offered: present, and not `false`.
fn is_offered(capability: &Value) -> bool {
    !matches!(capability, Value::Null | Value::Bool(false))
}

/// The message of a JSON-RPC error object.
fn error_text(error: &Value) -> String {
    let message = error["message"]
        .as_str()
        .map_or_else(|| error.to_string(), ToString::to_string);
    let mut text: String = message.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.len() > MAX_STDERR_LINE {
        text = text.chars().take(MAX_STDERR_LINE).collect::<String>() + "…";
    }
    match error["code"].as_i64() {
        Some(code) => format!("{text} ({code})"),
        None => text,
    }
}

/// Takes the server's messages off its stdout until it ends.
async fn read_loop(
    stdout: ChildStdout,
    shared: Arc<Shared>,
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
) {
    let mut reader = BufReader::new(stdout);
    let failure = loop {
        match framing::read_message(&mut reader).await {
            Ok(Some(message)) => dispatch(&message, &shared, &outgoing),
            Ok(None) => break None,
            Err(e) => break Some(e.to_string()),
        }
    };
    shared.close(failure);
}

/// Routes one message from the server.
fn dispatch(message: &Value, shared: &Shared, outgoing: &mpsc::UnboundedSender<Vec<u8>>) {
    let method = message["method"].as_str();
    let id = message.get("id").filter(|id| !id.is_null());
    match (method, id) {
        (Some(method), Some(id)) => {
            let reply = match answer(method, message.get("params"), shared) {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err(error) => json!({"jsonrpc": "2.0", "id": id, "error": error}),
            };
            let _ = outgoing.send(framing::encode(&reply));
        }
        (Some("textDocument/publishDiagnostics"), None) => shared.publish(message.get("params")),
        (Some(_), None) => {}
        (None, Some(id)) => {
            let waiting = id.as_i64().and_then(|id| lock(&shared.pending).remove(&id));
            if let Some(waiting) = waiting {
                let outcome = match message.get("error") {
                    Some(error) if !error.is_null() => Err(error.clone()),
                    _ => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
                };
                let _ = waiting.send(outcome);
            }
        }
        (None, None) => {}
    }
}

/// The answer to a request from the server: nothing is configured, nothing is edited.
fn answer(method: &str, params: Option<&Value>, shared: &Shared) -> Result<Value, Value> {
    match method {
        "workspace/configuration" => {
            let items = params
                .and_then(|p| p["items"].as_array())
                .map_or(0, Vec::len)
                .min(1_000);
            Ok(Value::Array(vec![Value::Null; items]))
        }
        "workspace/workspaceFolders" => Ok(shared.folders.clone()),
        "workspace/applyEdit" => Ok(json!({"applied": false, "failureReason": "read-only client"})),
        "window/showDocument" => Ok(json!({"success": false})),
        "window/workDoneProgress/create"
        | "window/showMessageRequest"
        | "client/registerCapability"
        | "client/unregisterCapability"
        | "workspace/codeLens/refresh"
        | "workspace/semanticTokens/refresh"
        | "workspace/inlayHint/refresh"
        | "workspace/inlineValue/refresh"
        | "workspace/diagnostic/refresh" => Ok(Value::Null),
        _ => Err(json!({"code": -32601, "message": format!("loki does not handle {method}")})),
    }
}

/// Feeds queued messages to the server's stdin.
async fn write_loop(mut stdin: ChildStdin, mut queue: mpsc::UnboundedReceiver<Vec<u8>>) {
    while let Some(bytes) = queue.recv().await {
        if stdin.write_all(&bytes).await.is_err() || stdin.flush().await.is_err() {
            break;
        }
    }
}

/// Keeps the server's last stderr line (for error messages) and logs every line.
async fn stderr_loop(stderr: tokio::process::ChildStderr, shared: Arc<Shared>, name: String) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        // Bounded: a line without an end is taken in pieces.
        match (&mut reader)
            .take(MAX_MESSAGE as u64)
            .read_until(b'\n', &mut line)
            .await
        {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        tracing::debug!(target: "loki::lsp::stderr", server = %name, "{text}");
        let mut kept: String = text.chars().take(MAX_STDERR_LINE).collect();
        if kept.len() < text.len() {
            kept.push('…');
        }
        *lock(&shared.stderr) = crate::secrets::redact(&kept).into_owned();
    }
    shared.stderr_done.send_replace(true);
}

/// Removes loki's known secrets (API keys, vault entries) from the server's environment:
/// by name, and any variable holding one of their values.
fn withhold_secrets(command: &mut Command) {
    let secrets = crate::secrets::known();
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
    /// takes what it started along). Only while the server is not reaped: until then its
    /// process id, which names the group, cannot have been reused.
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self
            .child
            .get_mut()
            .id()
            .and_then(|pid| i32::try_from(pid).ok())
            && let Some(pid) = rustix::process::Pid::from_raw(pid)
        {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
}
