//! Turning what the user gave (text, `-f` files, directories, globs, URLs, images) into
//! the user message of a turn.
//!
//! Text documents are concatenated under `==== FILE: path ====` style headers, followed
//! by the prompt text; images become `data:` URL parts (vision models only). Directories
//! are walked recursively and binary files and images in them skipped; a binary file
//! named explicitly is an error. This module reads files and fetches URLs but never prints.
//!
//! Everything read is bounded by [`InputLimits`]: a file is judged binary from its first
//! 8 KiB, a file whose size is over the remaining budget is refused before it is read,
//! and reads never take more than the budget plus one byte (devices and FIFOs, which are
//! refused unless `allow_special_files` is set, report no size).

use std::io::Read;
use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::client::Model;
use crate::files::{is_skipped_entry, looks_binary};
use loki_wire::message::{Content, ContentPart, ImageUrl, Message, Role};

/// Input that could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// A path that does not exist.
    #[error("{path}: no such file or directory")]
    NotFound {
        /// The path as given.
        path: String,
    },
    /// A file that could not be read.
    #[error("cannot read {path}: {message}")]
    Read {
        /// The path.
        path: String,
        /// Why.
        message: String,
    },
    /// A binary file named explicitly.
    #[error(
        "{path} looks like a binary file; only text files and images (png, jpg, webp, gif) can be attached"
    )]
    Binary {
        /// The path.
        path: String,
    },
    /// A glob that is malformed or matches nothing.
    #[error("glob `{pattern}`: {message}")]
    Glob {
        /// The pattern.
        pattern: String,
        /// Why.
        message: String,
    },
    /// A URL that could not be fetched.
    #[error("cannot fetch {url}: {message}")]
    Fetch {
        /// The URL.
        url: String,
        /// Why.
        message: String,
    },
    /// Images given to a model without vision.
    #[error(
        "model `{model}` does not accept images; pick a vision model with -m, or set `supports_vision: true` for it in config.yaml"
    )]
    NoVision {
        /// The model id.
        model: String,
    },
    /// Nothing to send.
    #[error("no input: give a prompt, pipe text on stdin, or attach files with -f")]
    Empty,
    /// Nothing to send because the directories given hold no text files.
    #[error(
        "nothing to send: {} holds no text files to attach; give a prompt, or point -f at files",
        dirs.join(", ")
    )]
    EmptyDirectories {
        /// The directories, as given.
        dirs: Vec<String>,
    },
    /// More input than `max_input_size`.
    #[error(
        "{what} would take the input over the {} limit; attach less, or raise `max_input_size` in config.yaml (now {limit})",
        human_size(*limit)
    )]
    TooLarge {
        /// What went over (`big.log (1.4 GiB)`, `piped input`).
        what: String,
        /// The limit in bytes.
        limit: usize,
    },
    /// A `` `command` `` argument that could not run or failed.
    #[error("command `{command}`: {message}")]
    Command {
        /// The command as typed.
        command: String,
        /// What went wrong (exit status and the first line of its stderr).
        message: String,
    },
    /// A device, FIFO or socket.
    #[error(
        "{path} is not a regular file ({kind}); pipe its contents instead, or set `allow_special_files: true` in config.yaml to read it (up to `max_input_size`)"
    )]
    NotRegular {
        /// The path.
        path: String,
        /// What it is.
        kind: &'static str,
    },
}

/// Bounds on what `-f` and piped stdin may bring in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InputLimits {
    /// Most bytes read from files, URLs and stdin together (`max_input_size`).
    pub max_bytes: usize,
    /// Read devices, FIFOs and sockets named explicitly (`allow_special_files`).
    pub allow_special: bool,
}

impl Default for InputLimits {
    fn default() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_INPUT_SIZE,
            allow_special: false,
        }
    }
}

/// The default `max_input_size`: 8 MiB, about two million tokens of text.
pub const DEFAULT_MAX_INPUT_SIZE: usize = crate::config::DEFAULT_MAX_INPUT_SIZE;

/// Bytes as `512 bytes`, `8 MiB`, `1.4 GiB`.
pub fn human_size(bytes: usize) -> String {
    const KIB: f64 = 1024.0;
    // Precision loss is irrelevant for a message.
    #[allow(clippy::cast_precision_loss)]
    let b = bytes as f64;
    let (value, unit) = if b >= KIB * KIB * KIB {
        (b / (KIB * KIB * KIB), "GiB")
    } else if b >= KIB * KIB {
        (b / (KIB * KIB), "MiB")
    } else if b >= KIB {
        (b / KIB, "KiB")
    } else {
        return format!("{bytes} bytes");
    };
    let text = format!("{value:.1}");
    format!("{} {unit}", text.strip_suffix(".0").unwrap_or(&text))
}

/// What is left of `max_input_size` while loading.
#[derive(Debug, Clone, Copy)]
struct Budget {
    limit: usize,
    left: usize,
}

impl Budget {
    /// Takes `n` bytes read from `what`.
    fn take(&mut self, n: usize, what: &str) -> Result<(), InputError> {
        if n > self.left {
            return Err(self.exceeded(what, None));
        }
        self.left -= n;
        Ok(())
    }

    fn exceeded(&self, what: &str, size: Option<u64>) -> InputError {
        let what = match size {
            Some(size) => format!(
                "{what} ({})",
                human_size(usize::try_from(size).unwrap_or(usize::MAX))
            ),
            None => what.to_string(),
        };
        InputError::TooLarge {
            what,
            limit: self.limit,
        }
    }
}

/// Reads at most `budget.left` bytes of `reader` (one more to notice that there is more),
/// taking them from the budget.
fn read_bounded(
    reader: impl Read,
    budget: &mut Budget,
    what: &str,
    capacity: usize,
) -> Result<Vec<u8>, std::io::Error> {
    let mut bytes = Vec::with_capacity(capacity.min(budget.left.saturating_add(1)));
    let cap = u64::try_from(budget.left)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    reader.take(cap).read_to_end(&mut bytes)?;
    if budget.take(bytes.len(), what).is_err() {
        return Err(std::io::Error::other(LimitHit));
    }
    Ok(bytes)
}

/// Marks the I/O error [`read_bounded`] returns when the budget ran out.
#[derive(Debug)]
struct LimitHit;

impl std::fmt::Display for LimitHit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("over max_input_size")
    }
}

impl std::error::Error for LimitHit {}

fn is_limit_hit(e: &std::io::Error) -> bool {
    matches!(e.get_ref(), Some(inner) if inner.is::<LimitHit>())
}

/// Reads piped stdin (or any reader) as text, bounded by `max_bytes`.
pub fn read_text_bounded(reader: impl Read, max_bytes: usize) -> Result<String, InputError> {
    read_bytes_bounded(reader, max_bytes).map(into_text)
}

/// Reads piped stdin (or any reader) as bytes, bounded by `max_bytes`.
pub fn read_bytes_bounded(reader: impl Read, max_bytes: usize) -> Result<Vec<u8>, InputError> {
    let mut budget = Budget {
        limit: max_bytes,
        left: max_bytes,
    };
    let bytes = read_bounded(reader, &mut budget, "piped input", 64 * 1024).map_err(|e| {
        if is_limit_hit(&e) {
            budget.exceeded("piped input", None)
        } else {
            InputError::Read {
                path: "stdin".into(),
                message: e.to_string(),
            }
        }
    })?;
    Ok(bytes)
}

/// UTF-8 text without a copy when it is valid.
fn into_text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Extensions sent as images.
const IMAGE_EXTENSIONS: &[(&str, &str)] = &[
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("webp", "image/webp"),
    ("gif", "image/gif"),
];

/// A loaded text document.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// `FILE`, `URL` or `REPLY` (the last answer, `%%`).
    pub kind: &'static str,
    /// Path or URL as shown to the model.
    pub source: String,
    /// Text contents.
    pub contents: String,
}

/// Everything loaded from `-f` arguments.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Text documents.
    pub documents: Vec<Document>,
    /// Images as `data:` URLs.
    pub images: Vec<String>,
    /// Binary files and images skipped while walking directories.
    pub skipped: Vec<String>,
    /// Directories given that held no text file.
    pub empty_dirs: Vec<String>,
}

/// Loads every `-f` argument: files, directories, globs and URLs, within the default
/// [`InputLimits`].
pub async fn load(
    args: &[String],
    cwd: &Path,
    user_agent: Option<&str>,
) -> Result<Loaded, InputError> {
    load_within(args, cwd, user_agent, InputLimits::default(), 0).await
}

/// Loads every `-f` argument within `limits`, of which `text_len` bytes (the prompt and
/// piped stdin) are already used.
pub async fn load_within(
    args: &[String],
    cwd: &Path,
    user_agent: Option<&str>,
    limits: InputLimits,
    text_len: usize,
) -> Result<Loaded, InputError> {
    let mut budget = Budget {
        limit: limits.max_bytes,
        left: limits.max_bytes.saturating_sub(text_len),
    };
    let mut loaded = Loaded::default();
    let mut http: Option<reqwest::Client> = None;
    for arg in args {
        if let Some(command) = command_arg(arg) {
            run_command(command, cwd, &mut loaded, &mut budget).await?;
        } else if arg.starts_with("http://") || arg.starts_with("https://") {
            let client = match &http {
                Some(c) => c,
                None => http.insert(crate::client::http::web_client(user_agent).map_err(|e| {
                    InputError::Fetch {
                        url: arg.clone(),
                        message: e.to_string(),
                    }
                })?),
            };
            fetch_url(client, arg, &mut loaded, &mut budget).await?;
        } else {
            load_path(arg, cwd, &mut loaded, &mut budget, limits)?;
        }
    }
    Ok(loaded)
}

/// The command of a `` `command` `` argument (Loki's command input: `-f '`git diff`'`).
pub fn command_arg(arg: &str) -> Option<&str> {
    arg.strip_prefix('`')
        .and_then(|rest| rest.strip_suffix('`'))
        .map(str::trim)
        .filter(|c| !c.is_empty())
}

/// Runs a command the user typed as an attachment, through their shell (`$SHELL -c`, else
/// `/bin/sh`) in `cwd`, and attaches its output as a `CMD` section. Its output counts
/// towards `max_input_size`; a command that fails is an error with its exit status and
/// the first line of its stderr. Dropping the future (Ctrl-C) kills it.
async fn run_command(
    command: &str,
    cwd: &Path,
    loaded: &mut Loaded,
    budget: &mut Budget,
) -> Result<(), InputError> {
    use tokio::io::AsyncReadExt;
    let failed = |message: String| InputError::Command {
        command: command.to_string(),
        message,
    };
    let shell = std::env::var("SHELL")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "/bin/sh".into());
    let mut child = tokio::process::Command::new(&shell)
        .arg("-c")
        .arg(command)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| failed(format!("cannot start {shell}: {e}")))?;
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(failed("no output pipes".into()));
    };
    let limit = u64::try_from(budget.left)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let mut out = out.take(limit);
    let mut err = err.take(64 * 1024);
    let (read_out, read_err) =
        tokio::join!(out.read_to_end(&mut stdout), err.read_to_end(&mut stderr));
    read_out.map_err(|e| failed(e.to_string()))?;
    let _ = read_err;
    budget.take(stdout.len(), &format!("the output of `{command}`"))?;
    let status = child.wait().await.map_err(|e| failed(e.to_string()))?;
    if !status.success() {
        let first = String::from_utf8_lossy(&stderr)
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or_default()
            .chars()
            .take(200)
            .collect::<String>();
        let code = status
            .code()
            .map_or_else(|| "killed by a signal".to_string(), |c| format!("exit {c}"));
        return Err(failed(if first.is_empty() {
            format!("failed ({code})")
        } else {
            format!("failed ({code}): {first}")
        }));
    }
    loaded.documents.push(Document {
        kind: "CMD",
        source: command.to_string(),
        contents: String::from_utf8_lossy(&stdout).into_owned(),
    });
    Ok(())
}

/// Builds the user message from prompt text and loaded files.
pub fn user_message(text: &str, loaded: Loaded, model: &Model) -> Result<Message, InputError> {
    let text = text.trim_end_matches('\n');
    if text.trim().is_empty() && loaded.documents.is_empty() && loaded.images.is_empty() {
        if !loaded.empty_dirs.is_empty() {
            return Err(InputError::EmptyDirectories {
                dirs: loaded.empty_dirs,
            });
        }
        return Err(InputError::Empty);
    }
    let body = if loaded.documents.len() == 1 && text.trim().is_empty() {
        loaded.documents[0].contents.clone()
    } else {
        // The prompt comes first, then the documents, as in Loki.
        let mut body = String::new();
        if !text.trim().is_empty() {
            body.push_str(text);
            body.push_str("\n\n");
        }
        for doc in &loaded.documents {
            body.push_str(&format!(
                "============ {}: {} ============\n{}\n\n",
                doc.kind,
                doc.source,
                doc.contents.trim_end_matches('\n')
            ));
        }
        body.trim_end().to_string()
    };
    if loaded.images.is_empty() {
        return Ok(Message::text(Role::User, body));
    }
    if !model.config.supports_vision {
        return Err(InputError::NoVision { model: model.id() });
    }
    let mut parts = Vec::with_capacity(loaded.images.len() + 1);
    if !body.is_empty() {
        parts.push(ContentPart::Text { text: body });
    }
    parts.extend(loaded.images.into_iter().map(|url| ContentPart::ImageUrl {
        image_url: ImageUrl { url },
    }));
    Ok(Message {
        role: Role::User,
        content: Content::Parts(parts),
        tool_calls: Vec::new(),
        tool_call_id: None,
        interrupted: false,
        reasoning: None,
    })
}

fn load_path(
    arg: &str,
    cwd: &Path,
    loaded: &mut Loaded,
    budget: &mut Budget,
    limits: InputLimits,
) -> Result<(), InputError> {
    let expanded = expand_tilde(arg);
    let path = cwd.join(&expanded);
    // A file of that very name is the one meant, glob characters and all (`[id].tsx`, a
    // file an editor links); anything else with them is a pattern.
    if expanded.contains(['*', '?', '[', '{']) && !path.exists() {
        return load_glob(&expanded, cwd, loaded, budget);
    }
    let meta = std::fs::metadata(&path).map_err(|_| InputError::NotFound {
        path: arg.to_string(),
    })?;
    if meta.is_dir() {
        let before = loaded.documents.len() + loaded.images.len();
        walk_dir(&path, &expanded, loaded, budget)?;
        if loaded.documents.len() + loaded.images.len() == before {
            loaded.empty_dirs.push(expanded);
        }
        return Ok(());
    }
    if !meta.is_file() && !limits.allow_special {
        return Err(InputError::NotRegular {
            path: expanded,
            kind: file_kind(&meta),
        });
    }
    load_file(&path, &expanded, loaded, true, budget)
}

/// What a non-regular file is, for messages.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_char_device() {
            return "a character device";
        }
        if t.is_block_device() {
            return "a block device";
        }
        if t.is_fifo() {
            return "a FIFO or pipe";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    let _ = meta;
    "not a regular file"
}

fn expand_tilde(arg: &str) -> String {
    match (arg.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest).to_string_lossy().into_owned(),
        _ => arg.to_string(),
    }
}

fn walk_dir(
    dir: &Path,
    shown: &str,
    loaded: &mut Loaded,
    budget: &mut Budget,
) -> Result<(), InputError> {
    let walker = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| !is_skipped_entry(e));
    for entry in walker {
        let entry = entry.map_err(|e| InputError::Read {
            path: shown.to_string(),
            message: e.to_string(),
        })?;
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        let display = Path::new(shown).join(rel).to_string_lossy().into_owned();
        if image_mime(entry.path()).is_some() {
            // Images inside a directory are rarely meant as input and can be large;
            // name them (or a glob of them) to attach them.
            loaded.skipped.push(display);
            continue;
        }
        load_file(entry.path(), &display, loaded, false, budget)?;
    }
    Ok(())
}

fn load_glob(
    pattern: &str,
    cwd: &Path,
    loaded: &mut Loaded,
    budget: &mut Budget,
) -> Result<(), InputError> {
    let glob_error = |message: String| InputError::Glob {
        pattern: pattern.to_string(),
        message,
    };
    let matcher = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| glob_error(e.to_string()))?
        .compile_matcher();
    // Walk from the longest directory prefix without wildcards.
    let root: PathBuf = Path::new(pattern)
        .components()
        .take_while(|c| {
            !c.as_os_str()
                .to_string_lossy()
                .contains(['*', '?', '[', '{'])
        })
        .collect();
    let base = if root.as_os_str().is_empty() {
        cwd.to_path_buf()
    } else {
        cwd.join(&root)
    };
    let mut matched = 0usize;
    let walker = walkdir::WalkDir::new(&base)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| !is_skipped_entry(e));
    for entry in walker.flatten() {
        if !entry.file_type().is_file() {
            continue;
        }
        let rel = entry.path().strip_prefix(cwd).unwrap_or(entry.path());
        let candidate = if Path::new(pattern).is_absolute() {
            entry.path()
        } else {
            rel
        };
        if matcher.is_match(candidate) {
            matched += 1;
            load_file(
                entry.path(),
                &candidate.to_string_lossy(),
                loaded,
                false,
                budget,
            )?;
        }
    }
    if matched == 0 {
        return Err(glob_error("matches no files".into()));
    }
    Ok(())
}

/// Bytes read to judge whether a file is text.
const SNIFF_LEN: usize = 8192;

fn load_file(
    path: &Path,
    shown: &str,
    loaded: &mut Loaded,
    explicit: bool,
    budget: &mut Budget,
) -> Result<(), InputError> {
    let read_error = |e: std::io::Error| InputError::Read {
        path: shown.to_string(),
        message: e.to_string(),
    };
    let mut file = std::fs::File::open(path).map_err(read_error)?;
    // Devices and FIFOs report no size; their reads are bounded all the same.
    let size = file
        .metadata()
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len());
    if let Some(size) = size
        && size > u64::try_from(budget.left).unwrap_or(u64::MAX)
    {
        return Err(budget.exceeded(shown, Some(size)));
    }
    let capacity = size.map_or(SNIFF_LEN, |s| usize::try_from(s).unwrap_or(usize::MAX));
    let bounded = |e: std::io::Error, budget: &Budget| {
        if is_limit_hit(&e) {
            budget.exceeded(shown, None)
        } else {
            read_error(e)
        }
    };
    if let Some(mime) = image_mime(path) {
        let bytes =
            read_bounded(&mut file, budget, shown, capacity).map_err(|e| bounded(e, budget))?;
        loaded.images.push(data_url(mime, &bytes));
        return Ok(());
    }
    let mut head = Vec::with_capacity(SNIFF_LEN);
    (&mut file)
        .take(SNIFF_LEN as u64)
        .read_to_end(&mut head)
        .map_err(read_error)?;
    if looks_binary(&head) {
        if explicit {
            return Err(InputError::Binary {
                path: shown.to_string(),
            });
        }
        loaded.skipped.push(shown.to_string());
        return Ok(());
    }
    budget.take(head.len(), shown)?;
    let mut bytes = head;
    if bytes.len() == SNIFF_LEN {
        let rest = read_bounded(&mut file, budget, shown, capacity.saturating_sub(SNIFF_LEN))
            .map_err(|e| bounded(e, budget))?;
        bytes.extend_from_slice(&rest);
    }
    loaded.documents.push(Document {
        kind: "FILE",
        source: shown.to_string(),
        contents: into_text(bytes),
    });
    Ok(())
}

fn image_mime(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    IMAGE_EXTENSIONS
        .iter()
        .find(|(e, _)| *e == ext)
        .map(|(_, m)| *m)
}

/// `bytes` as a `data:` URL of type `mime` (images for a vision model).
pub(crate) fn data_url(mime: &str, bytes: &[u8]) -> String {
    format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

async fn fetch_url(
    http: &reqwest::Client,
    url: &str,
    loaded: &mut Loaded,
    budget: &mut Budget,
) -> Result<(), InputError> {
    let fetch_error = |message: String| InputError::Fetch {
        url: url.to_string(),
        message,
    };
    let response = http
        .get(url)
        .send()
        .await
        .map_err(|e| fetch_error(crate::client::http::error_chain(&e)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(fetch_error(crate::client::http::status_problem(&response)));
    }
    let content_type = crate::client::http::mime_type(response.headers());
    let headers = response.headers().clone();
    if let Some(size) = response.content_length()
        && size > u64::try_from(budget.left).unwrap_or(u64::MAX)
    {
        return Err(budget.exceeded(url, Some(size)));
    }
    let mut response = response;
    let mut bytes: Vec<u8> = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| fetch_error(crate::client::http::error_chain(&e)))?
    {
        budget.take(chunk.len(), url)?;
        bytes.extend_from_slice(&chunk);
    }
    // A compressed body counts at its decompressed size.
    let compressed = bytes.len();
    let bytes = crate::client::http::decoded_body(&headers, bytes, budget.left + compressed)
        .map_err(|e| fetch_error(e.to_string()))?;
    if bytes.len() > compressed {
        budget.take(bytes.len() - compressed, url)?;
    }
    if content_type.starts_with("image/") {
        loaded.images.push(data_url(&content_type, &bytes));
        return Ok(());
    }
    let text = String::from_utf8_lossy(&bytes);
    let contents = if content_type == "text/html" || content_type == "application/xhtml+xml" {
        htmd::convert(&text).map_err(|e| fetch_error(format!("cannot convert HTML: {e}")))?
    } else if content_type.starts_with("text/")
        || content_type.contains("json")
        || content_type.contains("xml")
        || content_type.contains("yaml")
        || content_type.is_empty()
    {
        if looks_binary(&bytes) {
            return Err(fetch_error("the response is binary".into()));
        }
        text.into_owned()
    } else {
        return Err(fetch_error(format!(
            "unsupported content type `{content_type}`"
        )));
    };
    loaded.documents.push(Document {
        kind: "URL",
        source: url.to_string(),
        contents,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::clients::ModelConfig;

    fn model(vision: bool) -> Model {
        Model {
            client: "c".into(),
            config: ModelConfig {
                name: "m".into(),
                supports_vision: vision,
                ..ModelConfig::default()
            },
        }
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn sizes_read_like_people_write_them() {
        assert_eq!(human_size(1000), "1000 bytes");
        assert_eq!(human_size(100_000), "97.7 KiB");
        assert_eq!(human_size(8 * 1024 * 1024), "8 MiB");
        assert_eq!(human_size(1536 * 1024 * 1024), "1.5 GiB");
    }

    #[test]
    fn reads_stop_one_byte_past_the_budget() {
        let endless = std::io::repeat(b'a');
        let err = read_text_bounded(endless, 10).unwrap_err();
        assert!(
            matches!(err, InputError::TooLarge { limit: 10, .. }),
            "{err}"
        );
        assert_eq!(
            read_text_bounded(&b"0123456789"[..], 10).unwrap(),
            "0123456789"
        );
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x".repeat(20_000)).unwrap();
        let limits = InputLimits {
            max_bytes: 30_000,
            allow_special: false,
        };
        let loaded = block_on(load_within(&["a.txt".into()], dir.path(), None, limits, 0)).unwrap();
        assert_eq!(loaded.documents[0].contents.len(), 20_000);
        let err = block_on(load_within(
            &["a.txt".into()],
            dir.path(),
            None,
            limits,
            15_000,
        ))
        .unwrap_err();
        assert!(matches!(err, InputError::TooLarge { .. }), "{err}");
    }

    #[test]
    fn files_dirs_globs_and_images() {
        let dir = crate::test_support::tree(&[
            ("src/a.rs", "fn a() {}\n"),
            ("src/nested/b.md", "# b\n"),
            (".git/config", "x"),
        ]);
        let root = dir.path();
        std::fs::write(root.join("src/blob.bin"), [0u8, 1, 2]).unwrap();
        std::fs::write(root.join("pic.png"), [137u8, 80, 78, 71]).unwrap();
        std::fs::write(root.join("src/shot.png"), [137u8, 80, 78, 71]).unwrap();

        let loaded = block_on(load(&["src".into()], root, None)).unwrap();
        let sources: Vec<_> = loaded.documents.iter().map(|d| d.source.as_str()).collect();
        assert_eq!(sources, ["src/a.rs", "src/nested/b.md"]);
        assert_eq!(loaded.skipped, ["src/blob.bin", "src/shot.png"]);
        assert!(
            loaded.images.is_empty(),
            "images in directories are not attached"
        );

        let loaded = block_on(load(&["src/**/*.{md,txt}".into()], root, None)).unwrap();
        let sources: Vec<_> = loaded.documents.iter().map(|d| d.source.as_str()).collect();
        assert_eq!(sources, ["src/nested/b.md"]);

        let err = block_on(load(&["src/*.none".into()], root, None)).unwrap_err();
        assert!(err.to_string().contains("matches no files"));
        let err = block_on(load(&["src/blob.bin".into()], root, None)).unwrap_err();
        assert!(matches!(err, InputError::Binary { .. }));
        let err = block_on(load(&["missing.txt".into()], root, None)).unwrap_err();
        assert!(matches!(err, InputError::NotFound { .. }));

        let loaded = block_on(load(&["pic.png".into()], root, None)).unwrap();
        assert_eq!(loaded.images, ["data:image/png;base64,iVBORw=="]);
        assert!(matches!(
            user_message("what is it", loaded, &model(false)),
            Err(InputError::NoVision { .. })
        ));
    }

    #[test]
    fn message_assembly() {
        let doc = |s: &str, c: &str| Document {
            kind: "FILE",
            source: s.into(),
            contents: c.into(),
        };
        let one = Loaded {
            documents: vec![doc("a.txt", "alpha\n")],
            ..Loaded::default()
        };
        assert_eq!(
            user_message("", one, &model(false)).unwrap().text_content(),
            "alpha\n"
        );
        let two = Loaded {
            documents: vec![doc("a.txt", "alpha\n"), doc("b.txt", "beta")],
            ..Loaded::default()
        };
        assert_eq!(
            user_message("summarise", two, &model(false))
                .unwrap()
                .text_content(),
            "summarise\n\n============ FILE: a.txt ============\nalpha\n\n============ FILE: b.txt ============\nbeta"
        );
        assert!(matches!(
            user_message("  ", Loaded::default(), &model(false)),
            Err(InputError::Empty)
        ));
        let img = Loaded {
            images: vec!["data:image/png;base64,AA==".into()],
            ..Loaded::default()
        };
        let m = user_message("describe", img, &model(true)).unwrap();
        assert!(matches!(m.content, Content::Parts(ref p) if p.len() == 2));
    }
}
