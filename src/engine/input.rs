//! Turning what the user gave (text, `-f` files, directories, globs, URLs, images) into
//! the user message of a turn.
//!
//! Text documents are concatenated under `==== FILE: path ====` style headers, followed
//! by the prompt text; images become `data:` URL parts (vision models only). Directories
//! are walked recursively and binary files and images in them skipped; a binary file
//! named explicitly is an error. This module reads files and fetches URLs but never prints.

use std::path::{Path, PathBuf};

use base64::Engine as _;

use crate::client::Model;
use crate::client::message::{Content, ContentPart, ImageUrl, Message, Role};

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
}

/// Extensions sent as images.
const IMAGE_EXTENSIONS: &[(&str, &str)] = &[
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("webp", "image/webp"),
    ("gif", "image/gif"),
];

/// Directories never descended into when walking.
pub const SKIPPED_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    ".hg",
    ".svn",
    "__pycache__",
];

/// A loaded text document.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// `FILE` or `URL`.
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
}

/// Loads every `-f` argument: files, directories, globs and URLs.
pub async fn load(
    args: &[String],
    cwd: &Path,
    user_agent: Option<&str>,
) -> Result<Loaded, InputError> {
    let mut loaded = Loaded::default();
    let mut http: Option<reqwest::Client> = None;
    for arg in args {
        if arg.starts_with("http://") || arg.starts_with("https://") {
            let client =
                match &http {
                    Some(c) => c,
                    None => http.insert(fetch_client(user_agent).map_err(|message| {
                        InputError::Fetch {
                            url: arg.clone(),
                            message,
                        }
                    })?),
                };
            fetch_url(client, arg, &mut loaded).await?;
        } else {
            load_path(arg, cwd, &mut loaded)?;
        }
    }
    Ok(loaded)
}

/// Builds the user message from prompt text and loaded files.
pub fn user_message(text: &str, loaded: Loaded, model: &Model) -> Result<Message, InputError> {
    let text = text.trim_end_matches('\n');
    if text.trim().is_empty() && loaded.documents.is_empty() && loaded.images.is_empty() {
        return Err(InputError::Empty);
    }
    let body = if loaded.documents.len() == 1 && text.trim().is_empty() {
        loaded.documents[0].contents.clone()
    } else {
        let mut body = String::new();
        for doc in &loaded.documents {
            body.push_str(&format!(
                "============ {}: {} ============\n{}\n\n",
                doc.kind,
                doc.source,
                doc.contents.trim_end_matches('\n')
            ));
        }
        body.push_str(text);
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

fn load_path(arg: &str, cwd: &Path, loaded: &mut Loaded) -> Result<(), InputError> {
    let expanded = expand_tilde(arg);
    if expanded.contains(['*', '?', '[', '{']) {
        return load_glob(&expanded, cwd, loaded);
    }
    let path = cwd.join(&expanded);
    let meta = std::fs::metadata(&path).map_err(|_| InputError::NotFound {
        path: arg.to_string(),
    })?;
    if meta.is_dir() {
        walk_dir(&path, &expanded, loaded)
    } else {
        load_file(&path, &expanded, loaded, true)
    }
}

fn expand_tilde(arg: &str) -> String {
    match (arg.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest).to_string_lossy().into_owned(),
        _ => arg.to_string(),
    }
}

fn walk_dir(dir: &Path, shown: &str, loaded: &mut Loaded) -> Result<(), InputError> {
    let walker = walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            !(e.file_type().is_dir()
                && e.depth() > 0
                && e.file_name()
                    .to_str()
                    .is_some_and(|n| SKIPPED_DIRS.contains(&n)))
        });
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
        load_file(entry.path(), &display, loaded, false)?;
    }
    Ok(())
}

/// Directories that never hold input worth sending (VCS data, dependencies, builds).
fn is_skipped_dir(name: &std::ffi::OsStr) -> bool {
    name.to_str().is_some_and(|n| SKIPPED_DIRS.contains(&n))
}

fn load_glob(pattern: &str, cwd: &Path, loaded: &mut Loaded) -> Result<(), InputError> {
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
        .filter_entry(|e| {
            !(e.file_type().is_dir() && e.depth() > 0 && is_skipped_dir(e.file_name()))
        });
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
            load_file(entry.path(), &candidate.to_string_lossy(), loaded, false)?;
        }
    }
    if matched == 0 {
        return Err(glob_error("matches no files".into()));
    }
    Ok(())
}

fn load_file(
    path: &Path,
    shown: &str,
    loaded: &mut Loaded,
    explicit: bool,
) -> Result<(), InputError> {
    let read_error = |e: std::io::Error| InputError::Read {
        path: shown.to_string(),
        message: e.to_string(),
    };
    let bytes = std::fs::read(path).map_err(read_error)?;
    if let Some(mime) = image_mime(path) {
        loaded.images.push(data_url(mime, &bytes));
        return Ok(());
    }
    if looks_binary(&bytes) {
        if explicit {
            return Err(InputError::Binary {
                path: shown.to_string(),
            });
        }
        loaded.skipped.push(shown.to_string());
        return Ok(());
    }
    loaded.documents.push(Document {
        kind: "FILE",
        source: shown.to_string(),
        contents: String::from_utf8_lossy(&bytes).into_owned(),
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

fn data_url(mime: &str, bytes: &[u8]) -> String {
    format!(
        "data:{mime};base64,{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// A NUL byte in the first 8 KiB, or invalid UTF-8 there, marks a file as binary (the
/// heuristic git and ripgrep use).
fn looks_binary(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(8192)];
    if head.contains(&0) {
        return true;
    }
    match std::str::from_utf8(head) {
        Ok(_) => false,
        // A multi-byte character cut at the 8 KiB boundary is fine.
        Err(e) => e.error_len().is_some(),
    }
}

fn fetch_client(user_agent: Option<&str>) -> Result<reqwest::Client, String> {
    crate::client::http::install_crypto_provider();
    reqwest::Client::builder()
        .user_agent(user_agent.unwrap_or(concat!("loki/", env!("CARGO_PKG_VERSION"))))
        .connect_timeout(std::time::Duration::from_secs(10))
        .timeout(std::time::Duration::from_secs(60))
        .build()
        .map_err(|e| e.to_string())
}

async fn fetch_url(
    http: &reqwest::Client,
    url: &str,
    loaded: &mut Loaded,
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
        return Err(fetch_error(format!("HTTP {status}")));
    }
    let content_type = response
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let bytes = response
        .bytes()
        .await
        .map_err(|e| fetch_error(e.to_string()))?;
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
    use crate::client::config::ModelConfig;

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
    fn binary_detection() {
        assert!(looks_binary(b"a\0b"));
        assert!(looks_binary(&[0xff, 0xfe, 0x41]));
        assert!(!looks_binary("héllo".as_bytes()));
        let mut cut = vec![b'a'; 8191];
        cut.extend_from_slice("é".as_bytes());
        assert!(!looks_binary(&cut));
    }

    #[test]
    fn files_dirs_globs_and_images() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("src/nested")).unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::write(root.join("src/a.rs"), "fn a() {}\n").unwrap();
        std::fs::write(root.join("src/nested/b.md"), "# b\n").unwrap();
        std::fs::write(root.join("src/blob.bin"), [0u8, 1, 2]).unwrap();
        std::fs::write(root.join(".git/config"), "x").unwrap();
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
            "============ FILE: a.txt ============\nalpha\n\n============ FILE: b.txt ============\nbeta\n\nsummarise"
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
