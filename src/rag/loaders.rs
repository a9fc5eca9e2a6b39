//! Turning document sources into text, for knowledge bases and for `-f`.
//!
//! A source is a file, a directory (walked recursively, VCS and build directories
//! skipped), a glob (`docs/**/*.md`), a URL (HTML becomes Markdown), a site to crawl
//! (`https://host/docs/**`: pages under that prefix, at most [`MAX_CRAWL_PAGES`], five
//! fetched at a time), `git:<repository>` (cloned shallowly with `git`, unless a `git`
//! loader is configured) or `loader:resource` with a loader from `document_loaders`.
//! A `document_loaders` key equal to a file's extension (`pdf: pdftotext $1 -`) converts
//! such files. Loader commands get the resource as `$1` and, when they mention `$2`, a
//! temporary file to write to (otherwise their stdout is read); output that is a JSON list
//! of `{path, contents}` objects yields one document per entry.

use std::collections::{BTreeMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures_util::StreamExt;
use tokio_util::sync::CancellationToken;

use super::RagError;
use super::progress::{Progress, Step};
use crate::files::{is_skipped_entry, looks_binary};

/// Pages a crawl fetches at most.
pub const MAX_CRAWL_PAGES: usize = 200;
/// Pages fetched at once while crawling.
const CRAWL_CONCURRENCY: usize = 5;
/// How long a loader command may run.
const LOADER_TIMEOUT: Duration = Duration::from_secs(300);

/// A document as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadedDoc {
    /// Path or URL (for a loader's JSON output, the path it gave).
    pub path: String,
    /// Text.
    pub text: String,
    /// Extension deciding how the text is split (`md` for web pages).
    pub extension: String,
}

/// What loading needs from the configuration.
#[derive(Debug, Clone, Default)]
pub struct LoaderConfig {
    /// `document_loaders`.
    pub loaders: BTreeMap<String, String>,
    /// `User-Agent` for URLs.
    pub user_agent: Option<String>,
}

/// Everything loaded from a list of sources.
#[derive(Debug, Default)]
pub struct Loaded {
    /// Documents, in source order.
    pub docs: Vec<LoadedDoc>,
    /// Sources or files that failed, with the reason.
    pub failures: Vec<RagError>,
    /// Binary files skipped while walking.
    pub skipped: Vec<String>,
    /// Problems that did not fail a source (a crawled page that could not be fetched).
    pub warnings: Vec<String>,
    /// Files already loaded, by canonical path: a file that two sources name (a glob
    /// and its own path, `a.md` and `./a.md`, a link to it) is indexed once.
    seen: HashSet<PathBuf>,
}

/// Loads every source; failures are collected, not fatal.
pub async fn load_all(
    sources: &[String],
    cwd: &Path,
    config: &LoaderConfig,
    progress: &dyn Progress,
    cancel: &CancellationToken,
) -> Result<Loaded, RagError> {
    let mut loaded = Loaded::default();
    let mut http = None;
    for (i, source) in sources.iter().enumerate() {
        progress.report(Step::Loading {
            index: i + 1,
            total: sources.len(),
            source: source.clone(),
        });
        let result = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(RagError::Cancelled),
            r = load_source(source, cwd, config, &mut http, &mut loaded) => r,
        };
        // Failures are reported once, by the build that stops on them.
        if let Err(e) = result {
            loaded.failures.push(e);
        }
    }
    Ok(loaded)
}

/// `-f` with a configured loader: `loader:resource`, or a file whose extension has a
/// loader. `None` when no loader applies to `arg`.
pub async fn load_with_loader(
    arg: &str,
    cwd: &Path,
    loaders: &BTreeMap<String, String>,
) -> Option<Result<Vec<LoadedDoc>, RagError>> {
    if let Some((name, resource)) = loader_prefix(arg, loaders) {
        return Some(run_loader(name, &loaders[name], resource, cwd).await);
    }
    let path = cwd.join(arg);
    let ext = extension(&path)?;
    let command = loaders.get(&ext)?;
    if !path.is_file() {
        return Some(Err(RagError::Load {
            source_name: arg.to_string(),
            message: "no such file".into(),
        }));
    }
    Some(run_loader(&ext, command, &path.to_string_lossy(), cwd).await)
}

/// Whether `path`'s extension has a loader.
pub fn has_extension_loader(path: &str, loaders: &BTreeMap<String, String>) -> bool {
    extension(Path::new(path)).is_some_and(|e| loaders.contains_key(&e))
}

fn loader_prefix<'a>(
    arg: &'a str,
    loaders: &'a BTreeMap<String, String>,
) -> Option<(&'a str, &'a str)> {
    let (name, resource) = arg.split_once(':')?;
    (loaders.contains_key(name) && !resource.is_empty()).then_some((name, resource))
}

fn extension(path: &Path) -> Option<String> {
    Some(path.extension()?.to_str()?.to_ascii_lowercase())
}

async fn load_source(
    source: &str,
    cwd: &Path,
    config: &LoaderConfig,
    http: &mut Option<reqwest::Client>,
    loaded: &mut Loaded,
) -> Result<(), RagError> {
    if let Some((name, resource)) = loader_prefix(source, &config.loaders) {
        loaded
            .docs
            .extend(run_loader(name, &config.loaders[name], resource, cwd).await?);
        return Ok(());
    }
    if let Some(repo) = source.strip_prefix("git:") {
        return load_git(repo, cwd, config, loaded).await;
    }
    if source.starts_with("http://") || source.starts_with("https://") {
        let client = match http {
            Some(c) => c,
            None => http.insert(
                crate::client::http::web_client(config.user_agent.as_deref()).map_err(|e| {
                    RagError::Load {
                        source_name: source.to_string(),
                        message: e.to_string(),
                    }
                })?,
            ),
        };
        if let Some(base) = source.strip_suffix("**") {
            return crawl(client, base, config, cwd, loaded).await;
        }
        let doc = fetch_page(client, source, config, cwd).await?.doc;
        loaded.docs.push(doc);
        return Ok(());
    }
    let files = expand_path(source, cwd)?;
    for file in files {
        let canonical = std::fs::canonicalize(&file).unwrap_or_else(|_| file.clone());
        if loaded.seen.insert(canonical) {
            load_file(&file, config, cwd, loaded).await;
        }
    }
    Ok(())
}

/// The files a path, directory or glob names, sorted.
pub fn expand_path(source: &str, cwd: &Path) -> Result<Vec<PathBuf>, RagError> {
    let fail = |message: String| RagError::Load {
        source_name: source.to_string(),
        message,
    };
    let expanded = match (source.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest).to_string_lossy().into_owned(),
        _ => source.to_string(),
    };
    if expanded.contains(['*', '?', '[', '{']) {
        let absolute = cwd.join(any_depth(&expanded));
        let pattern = absolute.to_string_lossy().into_owned();
        let matcher = globset::GlobBuilder::new(&pattern)
            .literal_separator(true)
            .build()
            .map_err(|e| fail(e.to_string()))?
            .compile_matcher();
        let root: PathBuf = absolute
            .components()
            .take_while(|c| {
                !c.as_os_str()
                    .to_string_lossy()
                    .contains(['*', '?', '[', '{'])
            })
            .collect();
        let files: Vec<PathBuf> = walk(&root)
            .into_iter()
            .filter(|p| matcher.is_match(p))
            .collect();
        if files.is_empty() {
            return Err(fail("the pattern matches no files".into()));
        }
        return Ok(files);
    }
    let path = cwd.join(&expanded);
    let meta = std::fs::metadata(&path).map_err(|_| fail("no such file or directory".into()))?;
    if meta.is_dir() {
        Ok(walk(&path))
    } else if meta.is_file() {
        Ok(vec![path])
    } else {
        Err(fail(
            "not a regular file (a device, FIFO or socket); save its contents to a file first"
                .into(),
        ))
    }
}

/// `pattern` with each directory named by a lone `*` taken at any depth, one level or
/// more (Loki's "recursive filename": `/tmp/*/LOKI.md` finds `/tmp/a/LOKI.md` and
/// `/tmp/b/c/LOKI.md`); `*` within a name, and a last `*`, stay within one directory.
fn any_depth(pattern: &str) -> String {
    let parts: Vec<&str> = pattern.split('/').collect();
    let last = parts.len().saturating_sub(1);
    parts
        .iter()
        .enumerate()
        .map(|(i, part)| {
            if *part == "*" && i < last {
                "*/**"
            } else {
                part
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn walk(root: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(root)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| !is_skipped_entry(e))
        .flatten()
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().to_path_buf())
        .collect()
}

async fn load_file(path: &Path, config: &LoaderConfig, cwd: &Path, loaded: &mut Loaded) {
    let shown = path.to_string_lossy().into_owned();
    if let Some(ext) = extension(path)
        && let Some(command) = config.loaders.get(&ext)
    {
        match run_loader(&ext, command, &shown, cwd).await {
            Ok(docs) => loaded.docs.extend(docs),
            Err(e) => loaded.failures.push(e),
        }
        return;
    }
    match read_bounded(path) {
        Ok(bytes) if looks_binary(&bytes) => loaded.skipped.push(shown),
        Ok(bytes) => loaded.docs.push(LoadedDoc {
            text: String::from_utf8_lossy(&bytes).into_owned(),
            extension: extension(path).unwrap_or_default(),
            path: shown,
        }),
        Err(e) => loaded.failures.push(RagError::Load {
            source_name: shown,
            message: e.to_string(),
        }),
    }
}

/// The most one document (a file, a page, a loader's output) may bring into a knowledge
/// base or a prompt. Larger documents are refused rather than read whole.
pub const MAX_DOCUMENT_BYTES: usize = 64 * 1024 * 1024;

fn too_large() -> std::io::Error {
    std::io::Error::other(format!(
        "larger than {} MiB; split it or convert it to a smaller text first",
        MAX_DOCUMENT_BYTES / (1024 * 1024)
    ))
}

/// Reads a regular file of at most [`MAX_DOCUMENT_BYTES`].
fn read_bounded(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(std::io::Error::other("not a regular file"));
    }
    if meta.len() > MAX_DOCUMENT_BYTES as u64 {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    file.take(MAX_DOCUMENT_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() > MAX_DOCUMENT_BYTES {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Reads a child's pipe to the end, keeping at most [`MAX_DOCUMENT_BYTES`] (the rest is
/// drained so the child never dies of a closed pipe); `None` when it was over.
async fn read_pipe_bounded<R: tokio::io::AsyncRead + Unpin>(
    pipe: Option<R>,
) -> std::io::Result<Option<Vec<u8>>> {
    use tokio::io::AsyncReadExt;
    let Some(mut pipe) = pipe else {
        return Ok(Some(Vec::new()));
    };
    let mut kept = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut over = false;
    loop {
        let n = pipe.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        if kept.len() + n > MAX_DOCUMENT_BYTES {
            over = true;
            kept = Vec::new();
        } else if !over {
            kept.extend_from_slice(&buf[..n]);
        }
    }
    Ok((!over).then_some(kept))
}

/// What a loader process left: its status, its stdout (`None` when over
/// [`MAX_DOCUMENT_BYTES`]) and the end of its stderr.
struct LoaderOutput {
    status: std::process::ExitStatus,
    stdout: Option<Vec<u8>>,
    stderr: Vec<u8>,
}

/// Runs `cmd` to its end with bounded buffers for stdout and stderr.
async fn bounded_output(mut cmd: tokio::process::Command) -> std::io::Result<LoaderOutput> {
    let mut child = cmd.spawn()?;
    let (stdout, stderr) = (child.stdout.take(), child.stderr.take());
    let (stdout, stderr, status) = tokio::join!(
        read_pipe_bounded(stdout),
        read_pipe_bounded(stderr),
        child.wait()
    );
    Ok(LoaderOutput {
        status: status?,
        stdout: stdout?,
        stderr: stderr?.unwrap_or_default(),
    })
}

/// Runs loader `name` (`command`) on `resource`.
pub async fn run_loader(
    name: &str,
    command: &str,
    resource: &str,
    cwd: &Path,
) -> Result<Vec<LoadedDoc>, RagError> {
    let fail = |message: String| RagError::Load {
        source_name: format!("{name}:{resource}"),
        message,
    };
    let words = crate::shell_words::split(command);
    let output_file = command
        .contains("$2")
        .then(|| std::env::temp_dir().join(format!("loki-loader-{:016x}.txt", fastrand::u64(..))));
    let out_text = output_file
        .as_ref()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let words: Vec<String> = words
        .into_iter()
        .map(|w| w.replace("$1", resource).replace("$2", &out_text))
        .collect();
    let Some((program, args)) = words.split_first() else {
        return Err(fail(format!(
            "document loader `{name}` has an empty command"
        )));
    };
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let run = tokio::time::timeout(LOADER_TIMEOUT, bounded_output(cmd)).await;
    let result = match run {
        Err(_) => Err(fail(format!(
            "document loader `{name}` did not finish within {}s",
            LOADER_TIMEOUT.as_secs()
        ))),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => Err(fail(format!(
            "document loader `{name}` could not run `{program}`: program not found; is it installed and on PATH? (document_loaders.{name}: `{command}`)"
        ))),
        Ok(Err(e)) => Err(fail(format!(
            "document loader `{name}` could not run `{program}`: {e}"
        ))),
        Ok(Ok(out)) if !out.status.success() => {
            let stderr = String::from_utf8_lossy(&out.stderr);
            let last: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
            let tail = last[last.len().saturating_sub(3)..].join(" / ");
            Err(fail(format!(
                "document loader `{name}` (`{command}`) failed ({}){}",
                out.status,
                if tail.is_empty() {
                    String::new()
                } else {
                    format!(": {tail}")
                }
            )))
        }
        Ok(Ok(out)) => match &output_file {
            Some(path) => read_bounded(path).map_err(|e| {
                fail(format!(
                    "document loader `{name}` wrote no usable output file: {e}"
                ))
            }),
            None => out
                .stdout
                .ok_or_else(|| fail(format!("document loader `{name}` printed {}", too_large()))),
        },
    };
    if let Some(path) = &output_file {
        let _ = std::fs::remove_file(path);
    }
    let bytes = result?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if let Some(docs) = json_documents(&text) {
        return Ok(docs);
    }
    Ok(vec![LoadedDoc {
        path: resource.to_string(),
        extension: "txt".into(),
        text,
    }])
}

/// A loader's `[{"path": …, "contents": …}]` output (`text` is accepted for `contents`).
fn json_documents(text: &str) -> Option<Vec<LoadedDoc>> {
    let trimmed = text.trim_start();
    if !trimmed.starts_with('[') {
        return None;
    }
    let items: Vec<serde_json::Value> = serde_json::from_str(trimmed).ok()?;
    items
        .iter()
        .map(|item| {
            let path = item["path"].as_str()?.to_string();
            let text = item["contents"]
                .as_str()
                .or_else(|| item["text"].as_str())?
                .to_string();
            Some(LoadedDoc {
                extension: extension(Path::new(&path)).unwrap_or_default(),
                path,
                text,
            })
        })
        .collect()
}

async fn load_git(
    repo: &str,
    cwd: &Path,
    config: &LoaderConfig,
    loaded: &mut Loaded,
) -> Result<(), RagError> {
    let fail = |message: String| RagError::Load {
        source_name: format!("git:{repo}"),
        message,
    };
    let target = std::env::temp_dir().join(format!("loki-git-{:016x}", fastrand::u64(..)));
    let output = tokio::process::Command::new("git")
        .args(["clone", "--depth", "1", "--quiet", "--", repo])
        .arg(&target)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await;
    let result = match output {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(fail(
            "`git` is not installed (or configure a `git` document loader)".into(),
        )),
        Err(e) => Err(fail(format!("cannot run git: {e}"))),
        Ok(out) if !out.status.success() => Err(fail(format!(
            "git clone failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
        Ok(_) => {
            let shown = repo.trim_end_matches('/');
            for file in walk(&target) {
                let rel = file.strip_prefix(&target).unwrap_or(&file).to_path_buf();
                let before = loaded.docs.len();
                load_file(&file, config, cwd, loaded).await;
                for doc in &mut loaded.docs[before..] {
                    doc.path = format!("{shown}/{}", rel.to_string_lossy());
                }
            }
            Ok(())
        }
    };
    let _ = std::fs::remove_dir_all(&target);
    result
}

/// A fetched page: its text and whether it was HTML (for link extraction).
struct Page {
    doc: LoadedDoc,
    html: Option<String>,
    /// The URL as served (after redirects): relative links resolve against it.
    served: String,
}

/// Fetches `url` and turns it into a document: through a configured loader (PDF, DOCX),
/// as Markdown (HTML), or as the text it is.
async fn fetch_page(
    client: &reqwest::Client,
    url: &str,
    config: &LoaderConfig,
    cwd: &Path,
) -> Result<Page, RagError> {
    let fail = |message: String| RagError::Load {
        source_name: url.to_string(),
        message,
    };
    let Download {
        served,
        content_type,
        bytes,
    } = download(client, url).await?;
    let page = |text: String, extension: String, html: Option<String>| Page {
        doc: LoadedDoc {
            path: url.to_string(),
            text,
            extension,
        },
        html,
        served: served.clone(),
    };
    let ext = match content_type.as_str() {
        "application/pdf" => "pdf",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document" => "docx",
        _ => "",
    };
    if let Some(command) = config.loaders.get(ext).filter(|_| !ext.is_empty()) {
        let tmp = std::env::temp_dir().join(format!("loki-url-{:016x}.{ext}", fastrand::u64(..)));
        std::fs::write(&tmp, &bytes).map_err(|e| fail(e.to_string()))?;
        let result = run_loader(ext, command, &tmp.to_string_lossy(), cwd).await;
        let _ = std::fs::remove_file(&tmp);
        let text = result?
            .into_iter()
            .map(|d| d.text)
            .collect::<Vec<_>>()
            .join("\n\n");
        return Ok(page(text, "txt".into(), None));
    }
    if content_type.starts_with("image/")
        || content_type.starts_with("video/")
        || content_type.starts_with("audio/")
        || looks_binary(&bytes)
    {
        return Err(fail(format!(
            "unsupported content type `{content_type}` (configure a document loader for it)"
        )));
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if content_type == "text/html" || content_type == "application/xhtml+xml" {
        let markdown =
            htmd::convert(&text).map_err(|e| fail(format!("cannot convert HTML: {e}")))?;
        return Ok(page(markdown, "md".into(), Some(text)));
    }
    let ext = url
        .rsplit('/')
        .next()
        .and_then(|last| last.rsplit_once('.'))
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_else(|| "txt".into());
    Ok(page(text, ext, None))
}

/// A successful response read whole (and decompressed).
struct Download {
    /// The URL as served (after redirects).
    served: String,
    /// Its media type, without parameters.
    content_type: String,
    bytes: Vec<u8>,
}

/// Gets `url`, refusing a failed status and a body over `MAX_DOCUMENT_BYTES` (before
/// reading it when the size is announced).
async fn download(client: &reqwest::Client, url: &str) -> Result<Download, RagError> {
    let fail = |message: String| RagError::Load {
        source_name: url.to_string(),
        message,
    };
    let mut response = client
        .get(url)
        .send()
        .await
        .map_err(|e| fail(crate::client::http::error_chain(&e)))?;
    let served = response.url().to_string();
    if !response.status().is_success() {
        return Err(fail(crate::client::http::status_problem(&response)));
    }
    let content_type = crate::client::http::mime_type(response.headers());
    let headers = response.headers().clone();
    if response
        .content_length()
        .is_some_and(|n| n > MAX_DOCUMENT_BYTES as u64)
    {
        return Err(fail(too_large().to_string()));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| fail(e.to_string()))? {
        if bytes.len() + chunk.len() > MAX_DOCUMENT_BYTES {
            return Err(fail(too_large().to_string()));
        }
        bytes.extend_from_slice(&chunk);
    }
    let bytes = crate::client::http::decoded_body(&headers, bytes, MAX_DOCUMENT_BYTES)
        .map_err(|e| fail(e.to_string()))?;
    Ok(Download {
        served,
        content_type,
        bytes,
    })
}

/// Fetches `base` and every page linked (transitively) under it. Linked pages are fetched
/// as linked (a trailing slash kept: it decides what their relative links mean), and
/// every page's links resolve against its URL as served (after redirects). Pages are
/// known by their URL without a trailing slash, so `…/docs` and `…/docs/` are one page.
async fn crawl(
    client: &reqwest::Client,
    base: &str,
    config: &LoaderConfig,
    cwd: &Path,
    loaded: &mut Loaded,
) -> Result<(), RagError> {
    let key = |url: &str| url.trim_end_matches('/').to_string();
    let start = key(base);
    let prefix = format!("{start}/");
    let mut seen: HashSet<String> = HashSet::from([start.clone()]);
    // The start is asked for without its trailing slash; a server that wants one
    // redirects, and links resolve against where it ended up, as in a browser.
    let mut queue: VecDeque<String> = VecDeque::from([start.clone()]);
    let mut pages = 0usize;
    while !queue.is_empty() && pages < MAX_CRAWL_PAGES {
        let batch: Vec<String> = queue
            .drain(..queue.len().min(MAX_CRAWL_PAGES - pages))
            .collect();
        pages += batch.len();
        let results: Vec<(String, Result<Page, RagError>)> = futures_util::stream::iter(batch)
            .map(|url| async move {
                let page = fetch_page(client, &url, config, cwd).await;
                (url, page)
            })
            .buffered(CRAWL_CONCURRENCY)
            .collect()
            .await;
        for (url, result) in results {
            match result {
                Ok(page) => {
                    if let Some(html) = &page.html {
                        for link in links(&page.served, html) {
                            let id = key(&link);
                            if (id == start || id.starts_with(&prefix)) && seen.insert(id) {
                                queue.push_back(link);
                            }
                        }
                    }
                    loaded.docs.push(page.doc);
                }
                Err(e) if key(&url) == start => return Err(e),
                Err(e) => loaded.warnings.push(e.to_string()),
            }
        }
    }
    Ok(())
}

/// Absolute links of an HTML page served at `page`, without fragments.
fn links(page: &str, html: &str) -> Vec<String> {
    let Ok(base) = reqwest::Url::parse(page) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut rest = html;
    while let Some(i) = rest.find("href=") {
        rest = &rest[i + 5..];
        let Some(quote) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') else {
            continue;
        };
        let Some(end) = rest[1..].find(quote) else {
            break;
        };
        let target = &rest[1..1 + end];
        rest = &rest[1 + end..];
        if let Ok(mut url) = base.join(target) {
            url.set_fragment(None);
            if matches!(url.scheme(), "http" | "https") {
                out.push(url.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loader_commands_and_json_output() {
        assert_eq!(
            crate::shell_words::split(r#"sh -c 'echo "$1"' x"#),
            ["sh", "-c", r#"echo "$1""#, "x"]
        );
        let docs = json_documents(r#"[{"path": "a.rs", "contents": "fn a() {}"}]"#).unwrap();
        assert_eq!(docs[0].path, "a.rs");
        assert_eq!(docs[0].extension, "rs");
        assert!(json_documents("[not json").is_none());
        assert!(json_documents("plain").is_none());
    }

    #[test]
    fn links_are_resolved_against_the_page() {
        let html = r#"<a href="b.html#x">b</a> <a href='/docs/c'>c</a> <a href="mailto:x@y">m</a>"#;
        assert_eq!(
            links("http://h/docs/a.html", html),
            ["http://h/docs/b.html", "http://h/docs/c"]
        );
        // A directory page: relative links resolve inside it.
        assert_eq!(
            links("http://h/www/", r#"<a href="a.html">a</a>"#),
            ["http://h/www/a.html"]
        );
    }

    #[test]
    fn a_lone_star_directory_matches_at_any_depth() {
        let dir = tempfile::tempdir().unwrap();
        for file in [
            "top/LOKI.md",
            "a/LOKI.md",
            "b/c/LOKI.md",
            "b/c/other.md",
            "LOKI.md",
        ] {
            let path = dir.path().join(file);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "x").unwrap();
        }
        let found: Vec<String> = expand_path("*/LOKI.md", dir.path())
            .unwrap()
            .iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string())
            .collect();
        assert_eq!(found, ["a/LOKI.md", "b/c/LOKI.md", "top/LOKI.md"]);
        // A `*` within a name stays within its directory.
        let found = expand_path("b/*.md", dir.path()).unwrap_or_default();
        assert!(found.is_empty(), "{found:?}");
        assert_eq!(any_depth("docs/*.md"), "docs/*.md");
        assert_eq!(any_depth("/tmp/*/x/*"), "/tmp/*/**/x/*");
    }

    #[test]
    fn a_file_named_by_a_glob_and_by_its_path_is_loaded_once() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.md"), "alpha").unwrap();
        std::fs::write(dir.path().join("b.md"), "beta").unwrap();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let sources: Vec<String> = ["a.md", "*.md", "./a.md", "."]
            .iter()
            .map(ToString::to_string)
            .collect();
        let loaded = rt
            .block_on(load_all(
                &sources,
                dir.path(),
                &LoaderConfig::default(),
                &crate::rag::progress::Silent,
                &CancellationToken::new(),
            ))
            .unwrap();
        let texts: Vec<&str> = loaded.docs.iter().map(|d| d.text.as_str()).collect();
        assert_eq!(texts, ["alpha", "beta"]);
    }

    #[test]
    fn missing_loader_program_is_named() {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let err = rt
            .block_on(run_loader(
                "pdf",
                "loki-no-such-program $1 -",
                "a.pdf",
                Path::new("."),
            ))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("loki-no-such-program") && err.contains("not found"),
            "{err}"
        );
    }
}
