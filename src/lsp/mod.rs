//! Language servers for the `lsp_diagnostics` and `lsp_references` tools, and for the
//! diagnostics `fs_write`, `fs_edit` and `fs_patch` add to their results
//! ([`LspPool::after_edit`]).
//!
//! The servers come from `lsp_servers` (keyed by language, each with the file extensions
//! it handles). None starts with loki: the first call for a file starts the server of its
//! extension for that workspace root, and later calls reuse it — one server per language
//! and root, however many calls race to start it. A server that exits is started again by
//! the next call. [`LspPool::shutdown`] stops them all (and dropping the pool kills any
//! left).
//!
//! Files are read from disk on every call and sent to the server when they changed, so the
//! answers follow edits the model made meanwhile. Output is plain text, one line per
//! diagnostic or location, paths relative to the root, capped at [`MAX_LINES`] lines.

mod after_edit;
mod client;
pub(crate) mod convert;
mod rpc;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use client::{DIAGNOSTICS_TIMEOUT, Server};
use convert::{Encoding, file_uri, line_of, to_chars, to_units, uri_path};

pub use crate::config::LspServer as LspConfig;

/// The most lines a call returns (the rest are counted).
pub const MAX_LINES: usize = 200;
/// The largest file sent to a server.
pub const MAX_FILE: u64 = 8 * 1024 * 1024;
/// The longest message or source line shown, in characters.
const MAX_TEXT: usize = 300;
/// The longest `lsp_diagnostics_timeout` honoured, in seconds.
const MAX_EDIT_TIMEOUT_SECS: f64 = 600.0;

/// Why a language server could not answer.
#[derive(Debug, thiserror::Error)]
pub enum LspError {
    /// No configured server handles the file.
    #[error("no language server handles `{0}` (lsp_servers in config.yaml)")]
    NoServer(PathBuf),
    /// The server failed: it did not start, exited, timed out or answered with an error.
    #[error("language server `{server}` (lsp_servers.{server}) {problem}")]
    Server {
        /// Its `lsp_servers` key.
        server: String,
        /// What went wrong, e.g. `could not start (`x`): No such file or directory`.
        problem: String,
    },
    /// Anything else (the file could not be read, …).
    #[error("{0}")]
    Failed(String),
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
}

/// One server's place in the pool: empty until started; the lock is held while starting,
/// so concurrent first calls start it once.
type Slot = Arc<tokio::sync::Mutex<Option<Arc<Server>>>>;

/// The configured language servers, started lazily (one per language and root), stopped
/// with loki.
pub struct LspPool {
    configs: BTreeMap<String, LspConfig>,
    servers: Mutex<HashMap<(String, PathBuf), Slot>>,
    /// How long an edit waits for diagnostics (`lsp_diagnostics_timeout`; zero: not at all).
    edit_timeout: Duration,
    /// Cancelled by [`LspPool::shutdown`]: stops servers still starting (their start runs
    /// in its own task, see [`LspPool::server`]). Replaced afterwards, so the pool can be
    /// used again.
    stopping: Mutex<CancellationToken>,
}

impl Default for LspPool {
    fn default() -> Self {
        Self::new(BTreeMap::new())
    }
}

impl std::fmt::Debug for LspPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LspPool")
            .field("configs", &self.configs)
            .field("running", &self.slots().len())
            .finish()
    }
}

/// A file inside a root that a configured server handles.
struct Located<'a> {
    /// Canonical.
    root: PathBuf,
    /// Canonical.
    file: PathBuf,
    /// The file relative to the root, as shown.
    relative: String,
    /// Its `lsp_servers` key and entry.
    language: &'a str,
    config: &'a LspConfig,
}

/// A file ready to be asked about.
struct Target {
    /// Its `lsp_servers` key.
    language: String,
    server: Arc<Server>,
    uri: String,
    /// The `languageId` sent with it.
    language_id: String,
    text: String,
    /// The canonical root and the file relative to it.
    root: PathBuf,
    relative: String,
}

impl Target {
    /// The server's diagnostics once it holds this text; `None` when it published none
    /// by `deadline`.
    async fn diagnostics(
        &self,
        deadline: tokio::time::Instant,
        cancel: &CancellationToken,
    ) -> Result<Option<Vec<Value>>, LspError> {
        self.server
            .diagnostics(&self.uri, &self.language_id, &self.text, deadline, cancel)
            .await
    }
}

impl LspPool {
    /// A pool of the configured servers; nothing starts yet.
    pub fn new(servers: BTreeMap<String, LspConfig>) -> Self {
        Self {
            configs: servers,
            servers: Mutex::default(),
            edit_timeout: Duration::from_secs_f64(
                crate::config::DEFAULT_LSP_DIAGNOSTICS_TIMEOUT_SECS,
            ),
            stopping: Mutex::default(),
        }
    }

    /// The pool with `seconds` as `lsp_diagnostics_timeout` (0, negative or not a number:
    /// edits do not wait for diagnostics).
    pub fn with_edit_timeout(mut self, seconds: f64) -> Self {
        let seconds = if seconds.is_nan() { 0.0 } else { seconds };
        self.edit_timeout = Duration::from_secs_f64(seconds.clamp(0.0, MAX_EDIT_TIMEOUT_SECS));
        self
    }

    /// Whether no server is configured.
    pub fn is_empty(&self) -> bool {
        self.configs.is_empty()
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<(String, PathBuf), Slot>> {
        lock(&self.servers)
    }

    /// The configured server for `file`, by extension (first match in key order).
    fn language_of(&self, file: &Path) -> Option<(&str, &LspConfig)> {
        let extension = file.extension()?.to_str()?;
        self.configs
            .iter()
            .find(|(_, config)| {
                config
                    .extensions
                    .iter()
                    .any(|e| e.trim_start_matches('.').eq_ignore_ascii_case(extension))
            })
            .map(|(name, config)| (name.as_str(), config))
    }

    /// The running server of `language` for `root`, started if needed.
    ///
    /// The start runs in its own task: a caller that stops waiting (cancelled, or an edit
    /// out of time) leaves the server starting for the next call instead of killing it
    /// half-way, so a server slower to start than `lsp_diagnostics_timeout` is still
    /// ready for later edits. Only [`LspPool::shutdown`] stops a start.
    async fn server(
        &self,
        language: &str,
        config: &LspConfig,
        root: &Path,
        cancel: &CancellationToken,
    ) -> Result<Arc<Server>, LspError> {
        if cancel.is_cancelled() {
            return Err(LspError::Cancelled);
        }
        let slot = Arc::clone(
            self.slots()
                .entry((language.to_string(), root.to_path_buf()))
                .or_default(),
        );
        let stopping = lock(&self.stopping).clone();
        let (language, config, root) = (language.to_string(), config.clone(), root.to_owned());
        let starting = tokio::spawn(async move {
            let mut slot = slot.lock_owned().await;
            if let Some(server) = slot.as_ref().filter(|s| s.alive()) {
                return Ok(Arc::clone(server));
            }
            // A server that went away is dropped (and killed) before its successor starts.
            *slot = None;
            let server = Arc::new(Server::start(&language, &config, &root, &stopping).await?);
            *slot = Some(Arc::clone(&server));
            Ok(server)
        });
        tokio::select! {
            biased;
            () = cancel.cancelled() => Err(LspError::Cancelled),
            started = starting => started
                .map_err(|e| LspError::Failed(format!("the language server's start failed: {e}")))?,
        }
    }

    /// Where `file` is (inside `root`, both canonical), and which server handles it.
    fn locate(&self, root: &Path, file: &Path) -> Result<Located<'_>, LspError> {
        let root = canonical(root)?;
        let file = canonical(file)?;
        let relative = match file.strip_prefix(&root) {
            Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
            _ => {
                return Err(LspError::Failed(format!(
                    "{} is not a file inside {}",
                    file.display(),
                    root.display()
                )));
            }
        };
        let (language, config) = self
            .language_of(&file)
            .ok_or_else(|| LspError::NoServer(PathBuf::from(&relative)))?;
        Ok(Located {
            root,
            file,
            relative,
            language,
            config,
        })
    }

    /// Finds the server of a located file that holds `text` (read from disk when `None`),
    /// starting it if needed.
    async fn target(
        &self,
        located: Located<'_>,
        text: Option<String>,
        cancel: &CancellationToken,
    ) -> Result<Target, LspError> {
        let Located {
            root,
            file,
            relative,
            language,
            config,
        } = located;
        let text = match text {
            Some(text) => text,
            None => read_text(&file, &relative).await?,
        };
        let server = self.server(language, config, &root, cancel).await?;
        Ok(Target {
            language: language.to_string(),
            server,
            uri: file_uri(&file),
            language_id: language_id(&file, language),
            text,
            root,
            relative,
        })
    }

    /// Diagnostics of `file` (inside `root`): `path:line:col: severity: message` per line,
    /// 1-based, or `no diagnostics`.
    pub async fn diagnostics(
        &self,
        root: &Path,
        file: &Path,
        cancel: &CancellationToken,
    ) -> Result<String, LspError> {
        let target = self.target(self.locate(root, file)?, None, cancel).await?;
        let deadline = tokio::time::Instant::now() + DIAGNOSTICS_TIMEOUT;
        let published = target.diagnostics(deadline, cancel).await?;
        let Some(items) = published else {
            return Ok(format!(
                "no diagnostics (the {} server reported none for {} in time)",
                target.language, target.relative
            ));
        };
        Ok(format_diagnostics(
            &items,
            &target.relative,
            &target.text,
            target.server.encoding(),
        ))
    }

    /// References of the symbol at `line`:`column` (1-based; the column counts
    /// characters) of `file` (inside `root`): `path:line:col: source line` per location.
    pub async fn references(
        &self,
        root: &Path,
        file: &Path,
        line: u32,
        column: u32,
        cancel: &CancellationToken,
    ) -> Result<String, LspError> {
        let target = self.target(self.locate(root, file)?, None, cancel).await?;
        let index = line.saturating_sub(1) as usize;
        let Some(source) = line_of(&target.text, index) else {
            return Err(LspError::Failed(format!(
                "{} has no line {line}",
                target.relative
            )));
        };
        let character = to_units(
            source,
            column.saturating_sub(1) as usize,
            target.server.encoding(),
        );
        let locations = target
            .server
            .references(
                &target.uri,
                &target.language_id,
                &target.text,
                index,
                character,
                cancel,
            )
            .await?;
        Ok(format_references(&locations, &target.root, target.server.encoding()).await)
    }

    /// Stops every running server: `shutdown` and `exit`, a short wait, then a kill.
    /// Servers still starting are stopped at once.
    pub async fn shutdown(&self) {
        std::mem::take(&mut *lock(&self.stopping)).cancel();
        // Taken out first: the lock is not held across the awaits.
        let slots = std::mem::take(&mut *self.slots());
        let stops = slots.into_values().map(|slot| async move {
            let server = slot.lock().await.take();
            if let Some(server) = server {
                server.stop().await;
            }
        });
        futures_util::future::join_all(stops).await;
    }
}

/// A lock whose holder panicking does not matter (the data stays consistent).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn canonical(path: &Path) -> Result<PathBuf, LspError> {
    path.canonicalize()
        .map_err(|e| LspError::Failed(format!("{}: {e}", path.display())))
}

/// The text of `file` (at most [`MAX_FILE`] bytes of UTF-8).
async fn read_text(file: &Path, shown: &str) -> Result<String, LspError> {
    let failed = |e: std::io::Error| LspError::Failed(format!("{shown}: {e}"));
    let meta = tokio::fs::metadata(file).await.map_err(failed)?;
    if !meta.is_file() {
        return Err(LspError::Failed(format!("{shown} is not a regular file")));
    }
    if meta.len() > MAX_FILE {
        return Err(LspError::Failed(format!(
            "{shown} is {} bytes, more than the {MAX_FILE} sent to a language server",
            meta.len()
        )));
    }
    let bytes = tokio::fs::read(file).await.map_err(failed)?;
    String::from_utf8(bytes).map_err(|_| LspError::Failed(format!("{shown} is not UTF-8 text")))
}

/// The `languageId` of a document: by extension where the language key is not enough,
/// else the `lsp_servers` key.
fn language_id(file: &Path, language: &str) -> String {
    let extension = file
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let id = match extension.as_str() {
        "rs" => "rust",
        "py" | "pyi" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "go" => "go",
        "c" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "java" => "java",
        "rb" => "ruby",
        "sh" | "bash" => "shellscript",
        _ => language,
    };
    id.to_string()
}

/// A 0-based LSP position as 1-based line and character column of `text`.
fn position(value: &Value, text: Option<&str>, encoding: Encoding) -> (u64, u64) {
    let line = value["line"].as_u64().unwrap_or(0);
    let units = value["character"].as_u64().unwrap_or(0);
    let column = match text.and_then(|t| line_of(t, usize::try_from(line).ok()?)) {
        Some(source) => to_chars(
            source,
            usize::try_from(units).unwrap_or(usize::MAX),
            encoding,
        ) as u64,
        None => units,
    };
    (line + 1, column + 1)
}

/// `text` on one line, at most [`MAX_TEXT`] characters.
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if joined.chars().count() > MAX_TEXT {
        joined.chars().take(MAX_TEXT).collect::<String>() + "…"
    } else {
        joined
    }
}

/// Keeps the first [`MAX_LINES`] lines and counts the rest.
fn capped(lines: Vec<String>, what: &str) -> String {
    let total = lines.len();
    let mut out = lines
        .into_iter()
        .take(MAX_LINES)
        .collect::<Vec<_>>()
        .join("\n");
    if total > MAX_LINES {
        out.push_str(&format!("\n… and {} more {what}", total - MAX_LINES));
    }
    out
}

/// A diagnostic's severity word (an unstated severity counts as an error).
fn severity(item: &Value) -> &'static str {
    match item["severity"].as_u64() {
        Some(2) => "warning",
        Some(3) => "info",
        Some(4) => "hint",
        _ => "error",
    }
}

/// One diagnostic as `path:line:col: severity[code]: message`, with its position (to
/// sort by).
fn diagnostic_row(
    item: &Value,
    shown: &str,
    text: &str,
    encoding: Encoding,
) -> ((u64, u64), String) {
    let (line, column) = position(&item["range"]["start"], Some(text), encoding);
    let severity = severity(item);
    let code = match &item["code"] {
        Value::String(code) => format!("[{}]", one_line(code)),
        Value::Number(code) => format!("[{code}]"),
        _ => String::new(),
    };
    let message = one_line(item["message"].as_str().unwrap_or_default());
    (
        (line, column),
        format!("{shown}:{line}:{column}: {severity}{code}: {message}"),
    )
}

/// Diagnostics as `path:line:col: severity[code]: message` lines, in file order.
fn format_diagnostics(items: &[Value], shown: &str, text: &str, encoding: Encoding) -> String {
    if items.is_empty() {
        return "no diagnostics".into();
    }
    let mut rows: Vec<((u64, u64), String)> = items
        .iter()
        .map(|item| diagnostic_row(item, shown, text, encoding))
        .collect();
    rows.sort_by_key(|(at, _)| *at);
    capped(
        rows.into_iter().map(|(_, row)| row).collect(),
        "diagnostics",
    )
}

/// Locations as `path:line:col: source line` lines, sorted. Files outside `root` are
/// named (absolute) without being read.
async fn format_references(locations: &[Value], root: &Path, encoding: Encoding) -> String {
    let mut files: HashMap<PathBuf, Option<String>> = HashMap::new();
    let mut rows: Vec<(String, u64, u64, String)> = Vec::new();
    for location in locations {
        // `Location` or `LocationLink`.
        let (uri, start) = match location["uri"].as_str() {
            Some(uri) => (uri, &location["range"]["start"]),
            None => match location["targetUri"].as_str() {
                Some(uri) => (uri, &location["targetSelectionRange"]["start"]),
                None => continue,
            },
        };
        let Some(path) = uri_path(uri) else {
            continue;
        };
        // Only files that really are inside the root are read (not through a symlink out).
        let real = path
            .canonicalize()
            .ok()
            .filter(|real| real.starts_with(root));
        let (shown, text) = match real {
            Some(real) => {
                if !files.contains_key(&real) {
                    let text = read_text(&real, "").await.ok();
                    files.insert(real.clone(), text);
                }
                let relative = real
                    .strip_prefix(root)
                    .unwrap_or(&real)
                    .display()
                    .to_string();
                (relative, files.get(&real).and_then(Option::as_deref))
            }
            None => (path.display().to_string(), None),
        };
        let (line, column) = position(start, text, encoding);
        let source = text
            .and_then(|t| line_of(t, usize::try_from(line - 1).ok()?))
            .map(|s| one_line(s.trim()))
            .unwrap_or_default();
        rows.push((shown, line, column, source));
    }
    if rows.is_empty() {
        return "no references".into();
    }
    rows.sort();
    rows.dedup();
    let lines = rows
        .into_iter()
        .map(|(path, line, column, source)| {
            if source.is_empty() {
                format!("{path}:{line}:{column}")
            } else {
                format!("{path}:{line}:{column}: {source}")
            }
        })
        .collect();
    capped(lines, "references")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn diagnostics_are_listed_in_file_order_with_character_columns() {
        let text = "ok\n😀 x ERROR\n";
        let items = [
            json!({"range": {"start": {"line": 1, "character": 5}}, "severity": 2, "message": "late"}),
            json!({"range": {"start": {"line": 0, "character": 0}}, "message": "two\n  lines", "code": "E1"}),
        ];
        assert_eq!(
            format_diagnostics(&items, "a.txt", text, Encoding::Utf16),
            "a.txt:1:1: error[E1]: two lines\na.txt:2:5: warning: late"
        );
        assert_eq!(
            format_diagnostics(&[], "a.txt", text, Encoding::Utf16),
            "no diagnostics"
        );
        let many: Vec<Value> = (0..MAX_LINES + 5)
            .map(|n| json!({"range": {"start": {"line": n, "character": 0}}, "message": "m"}))
            .collect();
        let out = format_diagnostics(&many, "a.txt", "", Encoding::Utf16);
        assert_eq!(out.lines().count(), MAX_LINES + 1);
        assert!(out.ends_with("… and 5 more diagnostics"), "{out}");
    }

    #[test]
    fn servers_are_chosen_by_extension() {
        let config = |ext: &str| LspConfig {
            command: "x".into(),
            args: Vec::new(),
            extensions: vec![ext.into()],
        };
        let pool = LspPool::new(BTreeMap::from([
            ("rust".to_string(), config("rs")),
            ("python".to_string(), config(".py")),
        ]));
        assert_eq!(
            pool.language_of(Path::new("/a/b.rs")).map(|l| l.0),
            Some("rust")
        );
        assert_eq!(
            pool.language_of(Path::new("/a/b.PY")).map(|l| l.0),
            Some("python")
        );
        assert!(pool.language_of(Path::new("/a/b.txt")).is_none());
        assert!(pool.language_of(Path::new("/a/Makefile")).is_none());
        assert!(!pool.is_empty() && LspPool::default().is_empty());
        assert_eq!(
            language_id(Path::new("x.tsx"), "typescript"),
            "typescriptreact"
        );
        assert_eq!(language_id(Path::new("x.txt"), "fake"), "fake");
    }
}
