//! The stdio transport: newline-delimited JSON-RPC over a server process's stdin and
//! stdout, with every incoming message bounded by `mcp_max_message_size`.
//!
//! rmcp's own stdio transport drops a line over its fixed 16 MiB limit and carries on, so
//! the request it answered waits for `tool_timeout`. Here an oversized line is never
//! buffered whole: it is skipped while a small scanner looks for its top-level `id`, and
//! the request it answers fails at once with an error that names the limit and the key.
//! A line that is not a valid message but carries an `id` fails its request the same way.

use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{ClientJsonRpcMessage, ErrorData, RequestId, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};

/// How long a server may take to exit after its stdin is closed.
const EXIT_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

/// A failure to talk to the server process.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct StdioError(String);

/// A running server process and its pipes.
pub struct StdioTransport {
    server: String,
    limit: usize,
    /// The process, shared with writes: a failed write notes how it ended too.
    child: Arc<tokio::sync::Mutex<Option<Child>>>,
    pid: Option<u32>,
    reader: BufReader<ChildStdout>,
    /// The line being read (never longer than `limit`).
    line: Vec<u8>,
    /// Set while the rest of an oversized line is skipped.
    skipping: Option<Skipped>,
    writer: Arc<tokio::sync::Mutex<Option<ChildStdin>>>,
    /// How the process ended, once its stdout closed and it was reaped.
    exited: Exited,
}

/// How a server process ended, noted by its transport for whoever started it.
pub type Exited = Arc<std::sync::Mutex<Option<std::process::ExitStatus>>>;

/// How long to wait for a process whose stdout closed to be reaped.
const REAP_WAIT: std::time::Duration = std::time::Duration::from_millis(500);

/// What reading one line gave.
enum Next {
    /// A whole line is in `line`.
    Line,
    /// A line over the limit was skipped.
    Oversized(Skipped),
    /// The server closed its stdout (or reading failed).
    Closed,
}

/// An oversized line being skipped.
#[derive(Default)]
struct Skipped {
    bytes: usize,
    id: IdScanner,
}

impl Skipped {
    fn feed(&mut self, bytes: &[u8]) {
        self.bytes += bytes.len();
        self.id.feed(bytes);
    }
}

impl StdioTransport {
    /// Starts `cmd` with piped stdio; returns the transport and the server's stderr.
    pub fn spawn(
        mut cmd: tokio::process::Command,
        server: &str,
        limit: usize,
    ) -> std::io::Result<(Self, Option<ChildStderr>)> {
        cmd.stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        let mut child = cmd.spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(std::io::Error::other(
                "the server's stdio could not be piped",
            ));
        };
        let stderr = child.stderr.take();
        Ok((
            Self {
                server: server.to_string(),
                limit,
                pid: child.id(),
                child: Arc::new(tokio::sync::Mutex::new(Some(child))),
                reader: BufReader::with_capacity(64 * 1024, stdout),
                line: Vec::new(),
                skipping: None,
                writer: Arc::new(tokio::sync::Mutex::new(Some(stdin))),
                exited: Exited::default(),
            },
            stderr,
        ))
    }

    /// Where the process's exit status is noted when its stdout closes.
    pub fn exited(&self) -> Exited {
        Arc::clone(&self.exited)
    }

    /// The server's process id.
    pub fn id(&self) -> Option<u32> {
        self.pid
    }

    /// Reads up to the next newline without holding more than `limit` bytes. Cancel-safe:
    /// every byte taken from the reader is recorded in `self` before the next await.
    async fn next_line(&mut self) -> Next {
        loop {
            let (used, ended) = {
                let available = match self.reader.fill_buf().await {
                    Ok(available) => available,
                    Err(e) => {
                        tracing::warn!(server = %self.server, "reading from the MCP server failed: {e}");
                        return Next::Closed;
                    }
                };
                if available.is_empty() {
                    return Next::Closed;
                }
                let newline = available.iter().position(|&b| b == b'\n');
                let used = newline.map_or(available.len(), |i| i + 1);
                let chunk = &available[..newline.unwrap_or(available.len())];
                if let Some(skipped) = &mut self.skipping {
                    skipped.feed(chunk);
                } else if self.line.len() + chunk.len() > self.limit {
                    let mut skipped = Skipped::default();
                    skipped.feed(&self.line);
                    skipped.feed(chunk);
                    self.line = Vec::new();
                    self.skipping = Some(skipped);
                } else {
                    self.line.extend_from_slice(chunk);
                }
                (used, newline.is_some())
            };
            self.reader.consume(used);
            if ended {
                return match self.skipping.take() {
                    Some(skipped) => Next::Oversized(skipped),
                    None => Next::Line,
                };
            }
        }
    }

    /// An error answer to request `id` (when the request is known).
    fn fail(&self, id: Option<RequestId>, message: String) -> Option<ServerJsonRpcMessage> {
        tracing::warn!(server = %self.server, "{message}");
        id.map(|id| ServerJsonRpcMessage::error(ErrorData::internal_error(message, None), Some(id)))
    }
}

impl Transport<RoleClient> for StdioTransport {
    type Error = StdioError;

    fn name() -> std::borrow::Cow<'static, str> {
        "stdio".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        let (child, exited) = (Arc::clone(&self.child), Arc::clone(&self.exited));
        async move {
            let mut line = serde_json::to_vec(&item).map_err(|e| StdioError(e.to_string()))?;
            line.push(b'\n');
            let mut guard = writer.lock().await;
            let stdin = guard
                .as_mut()
                .ok_or_else(|| StdioError("the connection to the server is closed".into()))?;
            let written = match stdin.write_all(&line).await {
                Ok(()) => stdin.flush().await,
                Err(e) => Err(e),
            };
            if let Err(e) = written {
                // A write fails when the process has gone: note how it ended.
                drop(guard);
                reap(&child, &exited).await;
                return Err(StdioError(format!("cannot write to the server: {e}")));
            }
            Ok(())
        }
    }

    async fn receive(&mut self) -> Option<ServerJsonRpcMessage> {
        loop {
            match self.next_line().await {
                Next::Closed => {
                    reap(&self.child, &self.exited).await;
                    return None;
                }
                Next::Oversized(skipped) => {
                    let message = format!(
                        "MCP server `{}` sent a message larger than {} bytes ({} bytes); \
                         raise `mcp_max_message_size` in config.yaml to accept it",
                        self.server, self.limit, skipped.bytes
                    );
                    if let Some(answer) = self.fail(skipped.id.found(), message) {
                        return Some(answer);
                    }
                }
                Next::Line => {
                    let line = std::mem::take(&mut self.line);
                    let text = line.strip_suffix(b"\r").unwrap_or(&line);
                    let text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
                    if text.iter().all(u8::is_ascii_whitespace) {
                        continue;
                    }
                    match serde_json::from_slice::<ServerJsonRpcMessage>(text) {
                        Ok(message) => {
                            if line.capacity() <= 1024 * 1024 {
                                self.line = line;
                                self.line.clear();
                            }
                            return Some(message);
                        }
                        Err(e) => {
                            let mut scanner = IdScanner::default();
                            scanner.feed(text);
                            let message = format!(
                                "MCP server `{}` sent a message loki cannot read: {e}",
                                self.server
                            );
                            if let Some(answer) = self.fail(scanner.found(), message) {
                                return Some(answer);
                            }
                        }
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing stdin asks the server to exit; it gets a moment before being killed.
        drop(self.writer.lock().await.take());
        let taken = self.child.lock().await.take();
        if let Some(mut child) = taken
            && tokio::time::timeout(EXIT_GRACE, child.wait())
                .await
                .is_err()
        {
            let _ = child.kill().await;
        }
        Ok(())
    }
}

/// Notes the exit status of a server process whose pipes closed, if it ends soon.
async fn reap(child: &tokio::sync::Mutex<Option<Child>>, exited: &Exited) {
    let mut child = child.lock().await;
    let Some(child) = child.as_mut() else {
        return;
    };
    if let Ok(Ok(status)) = tokio::time::timeout(REAP_WAIT, child.wait()).await
        && let Ok(mut exited) = exited.lock()
    {
        *exited = Some(status);
    }
}

/// Finds the top-level `"id"` of a JSON object fed to it in pieces, in constant memory
/// (its value is kept only if short, as ids are).
#[derive(Default)]
struct IdScanner {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// Between `{`/`,` and `:` of the top-level object.
    expect_key: bool,
    /// Reading a top-level key (its first bytes are kept).
    in_key: bool,
    key: Vec<u8>,
    /// Reading the value of the top-level `id`.
    value: Option<Vec<u8>>,
    id: Option<Vec<u8>>,
}

/// Longest id value kept.
const MAX_ID_LEN: usize = 256;

impl IdScanner {
    fn feed(&mut self, bytes: &[u8]) {
        for &b in bytes {
            if self.id.is_some() {
                return;
            }
            self.step(b);
        }
    }

    fn keep(&mut self, b: u8) {
        // Three bytes of a key are enough to tell `id` from longer keys.
        if self.in_key && self.key.len() < 3 {
            self.key.push(b);
        }
        if let Some(value) = &mut self.value {
            if value.len() < MAX_ID_LEN {
                value.push(b);
            } else {
                self.value = None;
            }
        }
    }

    fn finish_value(&mut self) {
        if let Some(value) = self.value.take() {
            self.id = Some(value);
        }
    }

    fn step(&mut self, b: u8) {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                self.in_key = false;
                if let Some(value) = &mut self.value {
                    value.push(b);
                }
                return;
            }
            self.keep(b);
            return;
        }
        match b {
            b'"' => {
                self.in_string = true;
                if self.depth == 1 && self.expect_key {
                    self.in_key = true;
                    self.key.clear();
                }
                if let Some(value) = &mut self.value {
                    value.push(b);
                }
            }
            b'{' | b'[' => {
                if self.depth == 1 && self.value.is_some() {
                    // An object or list is not an id.
                    self.value = None;
                }
                self.depth += 1;
                if self.depth == 1 {
                    self.expect_key = b == b'{';
                }
            }
            b'}' | b']' => {
                if self.depth == 1 {
                    self.finish_value();
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b':' if self.depth == 1 && self.expect_key => {
                self.expect_key = false;
                if self.key == b"id" {
                    self.value = Some(Vec::new());
                }
            }
            b',' if self.depth == 1 => {
                self.finish_value();
                self.expect_key = true;
            }
            b' ' | b'\t' | b'\r' | b'\n' => {}
            _ => self.keep(b),
        }
    }

    /// The id, if one was found and is a number or a string.
    fn found(&self) -> Option<RequestId> {
        serde_json::from_slice(self.id.as_deref()?).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(pieces: &[&str]) -> Option<RequestId> {
        let mut s = IdScanner::default();
        for p in pieces {
            s.feed(p.as_bytes());
        }
        s.found()
    }

    #[test]
    fn finds_the_top_level_id_wherever_it_is() {
        assert_eq!(
            scan(&[r#"{"jsonrpc":"2.0","id":7,"result":{"id":"inner"}}"#]),
            Some(RequestId::Number(7))
        );
        // Key order of the TypeScript SDK: the result first, the id last.
        assert_eq!(
            scan(&[
                r#"{"result":{"content":[{"type":"text","text":"a \"id\": 3, {"#,
                r#"}"}],"id":9},"jsonrpc":"2.0", "id" : "abc"}"#
            ]),
            Some(RequestId::String("abc".into()))
        );
        // Split anywhere.
        let line = r#"{"jsonrpc":"2.0","id":12345,"result":{}}"#;
        for cut in 0..line.len() {
            assert_eq!(
                scan(&[&line[..cut], &line[cut..]]),
                Some(RequestId::Number(12345)),
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn no_id_in_notifications_or_nested_objects() {
        assert_eq!(
            scan(&[r#"{"jsonrpc":"2.0","method":"x","params":{"id":1}}"#]),
            None
        );
        assert_eq!(scan(&[r#"{"ids":1,"i":2}"#]), None);
        assert_eq!(scan(&[r#"{"id":{"a":1}}"#]), None);
        assert_eq!(scan(&["not json at all"]), None);
    }
}
