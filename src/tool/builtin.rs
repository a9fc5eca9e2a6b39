//! The built-in tools, in Rust, with Loki's names and parameters so existing agents and
//! roles keep working: `fs_cat`, `fs_ls`, `fs_read`, `fs_write`, `fs_patch`, `fs_edit`, `fs_mkdir`,
//! `fs_rm`, `fs_glob`, `fs_grep`, `execute_command`, `get_current_time`, `fetch_url`.

use futures_util::future::BoxFuture;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Value, json};

use super::delete::{refuse_tree_delete, rm_plan};
use super::paths::{self, Resolved};
use super::{Effect, Grant, ToolEnv, ToolError, confined};

/// A built-in tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Builtin {
    /// Its name.
    pub name: &'static str,
    /// What it does (sent to the model with every request, so one short line).
    pub description: &'static str,
    /// What it may do, which decides whether it asks first.
    pub effect: Effect,
    /// `(name, type, required, description)` of each parameter. An empty description is
    /// left out of the declaration: `path` or `command` says what it holds.
    pub params: &'static [(&'static str, &'static str, bool, &'static str)],
}

impl Builtin {
    /// The JSON schema of its arguments, as compact as [`super::schema::compact`] makes
    /// any other: no empty descriptions, no empty `required`.
    pub fn schema(&self) -> Value {
        let mut properties = serde_json::Map::new();
        let mut required = Vec::new();
        for (name, kind, needed, description) in self.params {
            let property = if description.is_empty() {
                json!({"type": kind})
            } else {
                json!({"type": kind, "description": description})
            };
            properties.insert((*name).into(), property);
            if *needed {
                required.push(*name);
            }
        }
        if required.is_empty() {
            json!({"type": "object", "properties": properties})
        } else {
            json!({"type": "object", "properties": properties, "required": required})
        }
    }
}

/// Every built-in tool. Their declarations go with every request, so each says in one
/// line what the tool does and what the model could not guess (defaults, 1-based lines,
/// ignored files); the docs (docs/tools.md) hold the rest.
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "fs_cat",
        description: "Read a whole text file.",
        effect: Effect::Read,
        params: &[("path", "string", true, "")],
    },
    Builtin {
        name: "fs_ls",
        description: "List a directory; subdirectories end with /.",
        effect: Effect::Read,
        params: &[("path", "string", true, "")],
    },
    Builtin {
        name: "fs_read",
        description: "Read a file (numbered lines), an image, or a directory.",
        effect: Effect::Read,
        params: &[
            ("path", "string", true, ""),
            ("offset", "integer", false, "First line, 1-based"),
            ("limit", "integer", false, "Lines (default 2000)"),
        ],
    },
    Builtin {
        name: "fs_write",
        description: "Create or overwrite a file; parent directories are created.",
        effect: Effect::Write,
        params: &[
            ("path", "string", true, ""),
            ("contents", "string", true, ""),
        ],
    },
    Builtin {
        name: "fs_patch",
        description: "Apply a unified diff to one file.",
        effect: Effect::Write,
        params: &[
            ("path", "string", true, ""),
            ("contents", "string", true, "The diff"),
        ],
    },
    Builtin {
        name: "fs_edit",
        description: "Replace exact text in a file; old_string must occur once unless replace_all.",
        effect: Effect::Write,
        params: &[
            ("path", "string", true, ""),
            (
                "old_string",
                "string",
                true,
                "Exact text, whitespace included",
            ),
            ("new_string", "string", true, ""),
            ("replace_all", "boolean", false, ""),
        ],
    },
    Builtin {
        name: "fs_mkdir",
        description: "Create a directory and missing parents.",
        effect: Effect::Write,
        params: &[("path", "string", true, "")],
    },
    Builtin {
        name: "fs_rm",
        description: "Delete a file, or a directory with its contents.",
        effect: Effect::Write,
        params: &[("path", "string", true, "")],
    },
    Builtin {
        name: "fs_glob",
        description: "Find files by glob (e.g. src/**/*.rs), newest first; respects .gitignore.",
        effect: Effect::Read,
        params: &[
            ("pattern", "string", true, ""),
            ("path", "string", false, "Directory (default .)"),
        ],
    },
    Builtin {
        name: "fs_grep",
        description: "Search files by regex (Rust syntax); prints file:line: text; respects .gitignore.",
        effect: Effect::Read,
        params: &[
            ("pattern", "string", true, ""),
            ("path", "string", false, "File or directory (default .)"),
            ("include", "string", false, "Glob filter, e.g. *.rs"),
        ],
    },
    Builtin {
        name: "execute_command",
        description: "Run a shell command in the working directory; returns output and exit code.",
        effect: Effect::Exec,
        params: &[
            ("command", "string", true, ""),
            ("background", "boolean", false, "Start as a job"),
        ],
    },
    Builtin {
        name: "get_current_time",
        description: "Current UTC date and time (RFC 3339).",
        effect: Effect::Read,
        params: &[],
    },
    Builtin {
        name: "web_search",
        description: "Search the web; returns titles, links and snippets.",
        effect: Effect::Network,
        params: &[("query", "string", true, "")],
    },
    Builtin {
        name: "fetch_url",
        description: "Fetch an http(s) URL; HTML becomes Markdown.",
        effect: Effect::Network,
        params: &[("url", "string", true, "")],
    },
];

/// The tools of background jobs (`execute_command` with `background: true`): enabled
/// with `execute_command`, declared once the conversation started a job
/// ([`super::jobs`]).
pub const JOB_TOOLS: &[Builtin] = &[
    Builtin {
        name: "job_output",
        description: "New output of a background job since the last read, and its state.",
        effect: Effect::Read,
        params: &[
            ("id", "integer", true, ""),
            ("filter", "string", false, "Only lines matching this regex"),
        ],
    },
    Builtin {
        name: "job_kill",
        description: "Stop a background job and what it started.",
        effect: Effect::Read,
        params: &[("id", "integer", true, "")],
    },
];

/// Looks a built-in up by name.
pub fn find(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().chain(JOB_TOOLS).find(|b| b.name == name)
}

/// Lines `fs_read` returns when no limit is given.
const DEFAULT_LIMIT: usize = 2000;
/// Entries `fs_glob` returns at most.
const MAX_GLOB: usize = 500;
/// Matching lines `fs_grep` returns at most.
const MAX_GREP: usize = 500;

pub(super) fn str_arg<'a>(args: &'a Value, name: &str) -> Result<&'a str, ToolError> {
    args.get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::BadArguments(format!("missing string argument `{name}`")))
}

fn opt_str<'a>(args: &'a Value, name: &str) -> Option<&'a str> {
    args.get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn opt_usize(args: &Value, name: &str) -> Option<usize> {
    let value = args.get(name)?;
    value
        .as_u64()
        .or_else(|| value.as_str().and_then(|s| s.trim().parse().ok()))
        .and_then(|n| usize::try_from(n).ok())
}

fn io(path: &Path, e: &std::io::Error) -> ToolError {
    ToolError::Failed(format!("{}: {e}", path.display()))
}

/// A file's text as the editor holds it (unsaved changes included), else from disk.
async fn read_edited(env: &ToolEnv<'_>, path: &Path) -> Result<String, ToolError> {
    if let Some(editor) = env.editor
        && let Ok(text) = editor.read(path).await
    {
        return Ok(text);
    }
    read_text(path)
}

/// A file change kept for rewinds: what the file held is kept when this is made, what
/// it holds is noted when it is dropped (after the change, whether it worked or not).
struct Kept<'a> {
    recorder: Option<&'a crate::checkpoint::Recorder>,
    path: &'a Path,
}

impl<'a> Kept<'a> {
    fn new(env: &ToolEnv<'a>, path: &'a Path) -> Self {
        if let Some(recorder) = env.checkpoints {
            if path.is_dir() && !path.is_symlink() {
                recorder.before_delete_tree(path);
            } else {
                recorder.before_change(path);
            }
        }
        Self {
            recorder: env.checkpoints,
            path,
        }
    }
}

impl Drop for Kept<'_> {
    fn drop(&mut self) {
        if let Some(recorder) = self.recorder {
            recorder.after_change(self.path);
        }
    }
}

/// Runs a built-in whose call was approved (or needed no approval). `grant` is what the
/// approval covered: a path outside the working tree, a recursive delete.
#[inline(never)]
pub(super) fn run<'a>(
    tool: &'a Builtin,
    args: &'a Value,
    env: &'a ToolEnv<'_>,
    grant: Grant,
) -> BoxFuture<'a, Result<String, ToolError>> {
    Box::pin(async move {
        match tool.name {
            "fs_cat" => {
                let path = path_arg(env, args)?.path;
                match super::image::read(env, &path)? {
                    Some(image) => Ok(image),
                    None => read_edited(env, &path).await,
                }
            }
            "fs_ls" => list_dir(&path_arg(env, args)?.path),
            "fs_read" => fs_read(env, args).await,
            "fs_write" => fs_write(env, args, grant).await,
            "fs_patch" => fs_patch(env, args, grant).await,
            "fs_edit" => fs_edit(env, args, grant).await,
            "fs_mkdir" => {
                let target = confined::place(env.cwd, &path_arg(env, args)?, grant.outside)?;
                target.create_dir_all()?;
                Ok(format!("created {}", target.shown()))
            }
            "fs_rm" => fs_rm(env, args, grant),
            "fs_glob" => glob(env.cwd, args),
            "fs_grep" => grep(env, args),
            "execute_command" if args.get("background").and_then(Value::as_bool) == Some(true) => {
                start_job(env, str_arg(args, "command")?)
            }
            "execute_command" => execute(env, str_arg(args, "command")?).await,
            "job_output" => {
                let filter = opt_str(args, "filter")
                    .map(regex::Regex::new)
                    .transpose()
                    .map_err(|e| ToolError::BadArguments(format!("invalid `filter`: {e}")))?;
                jobs(env)?.output(job_id(args)?, filter.as_ref())
            }
            "job_kill" => jobs(env)?.kill(job_id(args)?),
            "get_current_time" => Ok(crate::role::SystemVars::now_rfc3339()),
            "fetch_url" => fetch(env, str_arg(args, "url")?).await,
            "web_search" => web_search(env, str_arg(args, "query")?).await,
            other => Err(ToolError::Unknown(other.to_string())),
        }
    })
}

/// The call's `path`, resolved against the working directory.
fn path_arg(env: &ToolEnv<'_>, args: &Value) -> Result<Resolved, ToolError> {
    Ok(paths::resolve(env.cwd, str_arg(args, "path")?))
}

/// `fs_read`: numbered lines of a file from `offset` (1-based), `limit` of them; a
/// directory is listed; an image is given to a vision model ([`super::image`]).
async fn fs_read(env: &ToolEnv<'_>, args: &Value) -> Result<String, ToolError> {
    let p = path_arg(env, args)?;
    if p.path.is_dir() {
        return list_dir(&p.path);
    }
    if let Some(image) = super::image::read(env, &p.path)? {
        return Ok(image);
    }
    let text = read_edited(env, &p.path).await?;
    let offset = opt_usize(args, "offset").unwrap_or(1).max(1);
    let limit = opt_usize(args, "limit").unwrap_or(DEFAULT_LIMIT).max(1);
    Ok(numbered(&text, offset, limit))
}

/// `fs_write`: the file gets `contents`.
async fn fs_write(env: &ToolEnv<'_>, args: &Value, grant: Grant) -> Result<String, ToolError> {
    let resolved = path_arg(env, args)?;
    // Where a change lands, opened so that it cannot be redirected out of the tree.
    let target = confined::place(env.cwd, &resolved, grant.outside)?;
    let contents = str_arg(args, "contents")?;
    let kept = Kept::new(env, &resolved.path);
    write_edited(env, &resolved.path, &target, contents).await?;
    drop(kept);
    let done = format!("wrote {} bytes to {}", contents.len(), target.shown());
    Ok(with_diagnostics(env, &resolved, contents, done).await)
}

/// `fs_patch`: applies a unified diff to the file (on disk: an editor's unsaved buffer
/// is not patched).
async fn fs_patch(env: &ToolEnv<'_>, args: &Value, grant: Grant) -> Result<String, ToolError> {
    let resolved = path_arg(env, args)?;
    let target = confined::place(env.cwd, &resolved, grant.outside)?;
    let patched = patched(
        &target.read_to_string()?,
        str_arg(args, "contents")?,
        target.shown(),
    )?;
    let kept = Kept::new(env, &resolved.path);
    target.replace(patched.as_bytes())?;
    drop(kept);
    let done = format!("patched {}", target.shown());
    Ok(with_diagnostics(env, &resolved, &patched, done).await)
}

/// `fs_edit`: replaces `old_string` with `new_string` in the file (as the editor holds it).
async fn fs_edit(env: &ToolEnv<'_>, args: &Value, grant: Grant) -> Result<String, ToolError> {
    let resolved = path_arg(env, args)?;
    let target = confined::place(env.cwd, &resolved, grant.outside)?;
    let before = read_edited(env, &resolved.path).await?;
    let (after, count) = edited(&before, args, target.shown())?;
    let kept = Kept::new(env, &resolved.path);
    write_edited(env, &resolved.path, &target, &after).await?;
    drop(kept);
    let done = format!(
        "replaced {count} occurrence{} in {}",
        if count == 1 { "" } else { "s" },
        target.shown()
    );
    Ok(with_diagnostics(env, &resolved, &after, done).await)
}

/// `done` (an edit's result) followed by the errors the file's language server reports
/// now that it holds `text` ([`crate::lsp::LspPool::after_edit`]); unchanged when no
/// server handles the file or it is outside the working tree.
async fn with_diagnostics(env: &ToolEnv<'_>, file: &Resolved, text: &str, done: String) -> String {
    let Some(pool) = env.lsp.filter(|pool| !pool.is_empty() && file.inside) else {
        return done;
    };
    match pool
        .after_edit(&paths::root(env.cwd), &file.path, text, env.cancel)
        .await
    {
        Some(block) => format!("{done}\n\n{block}"),
        None => done,
    }
}

/// Gives the file `text` through the editor that holds it, else on disk.
async fn write_edited(
    env: &ToolEnv<'_>,
    path: &Path,
    target: &confined::Place,
    text: &str,
) -> Result<(), ToolError> {
    let in_editor = match env.editor {
        Some(editor) => editor.write(path, text).await.is_ok(),
        None => false,
    };
    if !in_editor {
        target.replace(text.as_bytes())?;
    }
    Ok(())
}

/// `fs_rm`: deletes a file, a symlink (never what it points to) or — when the approval
/// covered that — a directory with its contents; never the working tree.
fn fs_rm(env: &ToolEnv<'_>, args: &Value, grant: Grant) -> Result<String, ToolError> {
    let arg = str_arg(args, "path")?;
    refuse_tree_delete(env.cwd, arg, &[env.root_dir, env.cache_dir])?;
    let entry = paths::resolve_entry(env.cwd, arg);
    let target = confined::place(env.cwd, &entry, grant.outside)?;
    let _kept = Kept::new(env, &entry.path);
    target.remove(grant.recursive)?;
    Ok(format!("deleted {arg}"))
}

/// `web_search`: asks the configured search backend, until the turn is cancelled.
async fn web_search(env: &ToolEnv<'_>, query: &str) -> Result<String, ToolError> {
    let http = reqwest::Client::builder()
        .user_agent(env.user_agent.unwrap_or(crate::client::http::USER_AGENT))
        .timeout(Duration::from_secs(60))
        .build()
        .map_err(|e| ToolError::Failed(e.to_string()))?;
    tokio::select! {
        found = super::web_search::search(&http, env.web_search, query) => found,
        () = env.cancel.cancelled() => Err(ToolError::Cancelled),
    }
}

/// The approval summary and preview of a call to `tool`.
pub(super) fn describe(
    tool: &Builtin,
    args: &Value,
    cwd: &Path,
) -> Result<(String, Option<String>), ToolError> {
    let shown = |name: &str| -> Result<(String, PathBuf), ToolError> {
        let p = paths::resolve(cwd, str_arg(args, name)?);
        Ok((paths::display(cwd, &p.path), p.path))
    };
    Ok(match tool.name {
        "execute_command" if args.get("background").and_then(Value::as_bool) == Some(true) => (
            format!("run `{}` in the background", str_arg(args, "command")?),
            None,
        ),
        "execute_command" => (format!("run `{}`", str_arg(args, "command")?), None),
        "fetch_url" => (format!("fetch {}", str_arg(args, "url")?), None),
        "web_search" => (
            format!("search the web for `{}`", str_arg(args, "query")?),
            None,
        ),
        "fs_write" => {
            let (shown, path) = shown("path")?;
            let new = str_arg(args, "contents")?;
            let (verb, preview) = match std::fs::symlink_metadata(&path) {
                Err(_) => ("create", diffy::create_patch("", new).to_string()),
                // Only a regular file of sane size is read for the diff: a device, a FIFO
                // or a huge file named by the model must not hang or exhaust the preview.
                Ok(meta) if meta.is_file() && meta.len() <= MAX_FILE_BYTES => {
                    let old = std::fs::read_to_string(&path).unwrap_or_default();
                    ("overwrite", diffy::create_patch(&old, new).to_string())
                }
                Ok(meta) => {
                    let what = if meta.is_file() {
                        format!("{} bytes", meta.len())
                    } else {
                        "not a regular file".to_string()
                    };
                    let note = format!("(existing content not shown: {what})\n");
                    (
                        "overwrite",
                        note + &diffy::create_patch("", new).to_string(),
                    )
                }
            };
            (format!("{verb} {shown}"), Some(preview))
        }
        "fs_patch" => {
            let (shown, _) = shown("path")?;
            (
                format!("patch {shown}"),
                Some(str_arg(args, "contents")?.to_string()),
            )
        }
        "fs_rm" => {
            let plan = rm_plan(args, cwd)?;
            (plan.summary, plan.preview)
        }
        "fs_edit" => {
            let (shown, path) = shown("path")?;
            // The approval shows the change as a diff; an edit that cannot apply is
            // reported to the model before anyone is asked.
            let before = match std::fs::metadata(&path) {
                Ok(meta) if meta.is_file() && meta.len() <= MAX_FILE_BYTES => read_text(&path)?,
                Ok(_) => {
                    return Err(ToolError::Failed(format!(
                        "{shown} is not a regular text file of at most {MAX_FILE_BYTES} bytes"
                    )));
                }
                Err(e) => return Err(io(&path, &e)),
            };
            let (after, _) = edited(&before, args, &shown)?;
            (
                format!("edit {shown}"),
                Some(diffy::create_patch(&before, &after).to_string()),
            )
        }
        "fs_mkdir" => (format!("create directory {}", shown("path")?.0), None),
        _ => {
            let target = ["path", "pattern"]
                .iter()
                .find_map(|name| opt_str(args, name))
                .unwrap_or(".");
            (format!("{} {target}", tool.name), None)
        }
    })
}

/// `fs_edit`'s change to `text`: the new text and how many places changed, or why the
/// edit cannot be made (`shown` names the file).
fn edited(text: &str, args: &Value, shown: &str) -> Result<(String, usize), ToolError> {
    let old = str_arg(args, "old_string")?;
    let new = str_arg(args, "new_string")?;
    let all = args["replace_all"].as_bool().unwrap_or(false);
    if old.is_empty() {
        return Err(ToolError::BadArguments(
            "old_string is empty; to create or overwrite a file use fs_write".into(),
        ));
    }
    if old == new {
        return Err(ToolError::BadArguments(
            "old_string and new_string are the same; nothing would change".into(),
        ));
    }
    let count = text.matches(old).count();
    match count {
        0 => Err(ToolError::Failed(format!(
            "old_string was not found in {shown}; read the file again (fs_read) and copy the \
             text exactly, whitespace and indentation included"
        ))),
        1 => Ok((text.replacen(old, new, 1), 1)),
        n if all => Ok((text.replace(old, new), n)),
        n => Err(ToolError::Failed(format!(
            "old_string occurs {n} times in {shown}; include more of the surrounding lines to \
             make it unique, or set replace_all to change every one"
        ))),
    }
}

/// The paths a call touches (for the outside-the-working-tree check).
pub(super) fn touched_paths(tool: &Builtin, args: &Value, cwd: &Path) -> Vec<Resolved> {
    if matches!(tool.effect, Effect::Exec | Effect::Network) {
        return Vec::new();
    }
    let arg = opt_str(args, "path").unwrap_or(".");
    if tool.name == "fs_rm" {
        return vec![paths::resolve_entry(cwd, arg)];
    }
    vec![paths::resolve(cwd, arg)]
}

fn list_dir(dir: &Path) -> Result<String, ToolError> {
    let entries = std::fs::read_dir(dir).map_err(|e| io(dir, &e))?;
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                format!("{name}/")
            } else {
                name
            }
        })
        .collect();
    names.sort();
    Ok(names.join("\n"))
}

fn numbered(text: &str, offset: usize, limit: usize) -> String {
    let total = text.lines().count();
    let mut out = String::new();
    for (i, line) in text.lines().enumerate().skip(offset - 1).take(limit) {
        out.push_str(&format!("{:>6}\t{line}\n", i + 1));
    }
    let last = (offset - 1).saturating_add(limit).min(total);
    if last < total {
        out.push_str(&format!(
            "[lines {offset}-{last} of {total}; call again with offset {} to read on]\n",
            last + 1
        ));
    }
    out
}

/// `original` (the text of `shown`) with the unified diff applied.
fn patched(original: &str, diff: &str, shown: &str) -> Result<String, ToolError> {
    let patch = diffy::Patch::from_str(diff)
        .map_err(|e| ToolError::BadArguments(format!("not a unified diff: {e}")))?;
    diffy::apply(original, &patch).map_err(|e| {
        ToolError::Failed(format!(
            "the patch does not apply to {shown} ({e}); read the file again and send a fresh diff"
        ))
    })
}

fn walker(root: &Path) -> ignore::Walk {
    ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .filter_entry(|e| !crate::files::is_skipped_dir(e.file_name()))
        .build()
}

fn glob(cwd: &Path, args: &Value) -> Result<String, ToolError> {
    let pattern = str_arg(args, "pattern")?;
    let root = paths::resolve(cwd, opt_str(args, "path").unwrap_or(".")).path;
    let matcher = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| ToolError::BadArguments(format!("invalid glob `{pattern}`: {e}")))?
        .compile_matcher();
    let mut found: Vec<(std::time::SystemTime, String)> = walker(&root)
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter_map(|e| {
            let rel = e.path().strip_prefix(&root).ok()?.to_path_buf();
            matcher.is_match(&rel).then(|| {
                let modified = e
                    .metadata()
                    .ok()
                    .and_then(|m| m.modified().ok())
                    .unwrap_or(std::time::UNIX_EPOCH);
                (modified, paths::display(cwd, e.path()))
            })
        })
        .collect();
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let total = found.len();
    let mut out: Vec<String> = found.into_iter().take(MAX_GLOB).map(|(_, p)| p).collect();
    if total > MAX_GLOB {
        out.push(format!("[{total} matches; showing the newest {MAX_GLOB}]"));
    }
    Ok(if out.is_empty() {
        "no files match".into()
    } else {
        out.join("\n")
    })
}

fn grep(env: &ToolEnv<'_>, args: &Value) -> Result<String, ToolError> {
    let cwd = env.cwd;
    let pattern = str_arg(args, "pattern")?;
    let regex = regex::Regex::new(pattern)
        .map_err(|e| ToolError::BadArguments(format!("invalid regex `{pattern}`: {e}")))?;
    let include = opt_str(args, "include")
        .map(|g| {
            globset::Glob::new(g)
                .map(|g| g.compile_matcher())
                .map_err(|e| ToolError::BadArguments(format!("invalid glob `{g}`: {e}")))
        })
        .transpose()?;
    let root = paths::resolve(cwd, opt_str(args, "path").unwrap_or(".")).path;
    let fenced = super::fences::walk_is_fenced(env, env.rules, &root);
    let mut out = Vec::new();
    let mut total = 0usize;
    for entry in walker(&root).flatten() {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            continue;
        }
        if let Some(include) = &include
            && !entry
                .path()
                .file_name()
                .is_some_and(|n| include.is_match(n))
        {
            continue;
        }
        if entry
            .metadata()
            .map_or(true, |m| !m.is_file() || m.len() > MAX_FILE_BYTES)
        {
            continue; // not a regular file, or too large to read whole
        }
        // Files a `Read(…)` rule or the sandbox keeps from readers are passed over.
        if fenced {
            let real = paths::resolve(cwd, &entry.path().to_string_lossy()).path;
            if !super::fences::walk_may_read(env, env.rules, &real) {
                continue;
            }
        }
        let Ok(text) = std::fs::read_to_string(entry.path()) else {
            continue; // binary or unreadable
        };
        let shown = paths::display(cwd, entry.path());
        for (i, line) in text.lines().enumerate() {
            if regex.is_match(line) {
                total += 1;
                if out.len() < MAX_GREP {
                    let line: String = line.chars().take(300).collect();
                    out.push(format!("{shown}:{}: {line}", i + 1));
                }
            }
        }
    }
    if total > MAX_GREP {
        out.push(format!(
            "[{total} matching lines; showing {MAX_GREP}; narrow the pattern or path]"
        ));
    }
    Ok(if out.is_empty() {
        "no matches".into()
    } else {
        out.join("\n")
    })
}

async fn execute(env: &ToolEnv<'_>, command: &str) -> Result<String, ToolError> {
    let done = super::process::run(shell_command(env, command)?, env, "the command").await?;
    let code = done
        .status
        .code()
        .map_or_else(|| "killed by a signal".into(), |c| c.to_string());
    let mut text = String::new();
    for note in done.notes() {
        text.push_str(&note);
        text.push('\n');
    }
    text.push_str(&done.stdout.text());
    let err = done.stderr.text();
    if !err.trim().is_empty() {
        text.push_str("\n[stderr]\n");
        text.push_str(&err);
    }
    Ok(format!("{}\n[exit code: {code}]", text.trim_end()))
}

/// `execute_command` with `background: true`: the command becomes one of the
/// conversation's jobs.
fn start_job(env: &ToolEnv<'_>, command: &str) -> Result<String, ToolError> {
    jobs(env)?.start(shell_command(env, command)?, command)
}

/// The conversation's jobs, when it keeps any.
fn jobs<'a>(env: &ToolEnv<'a>) -> Result<&'a super::jobs::Jobs, ToolError> {
    env.jobs.ok_or_else(|| {
        ToolError::Refused("background jobs are not available in this conversation".into())
    })
}

fn job_id(args: &Value) -> Result<u32, ToolError> {
    opt_usize(args, "id")
        .and_then(|id| u32::try_from(id).ok())
        .ok_or_else(|| ToolError::BadArguments("missing job `id`".into()))
}

/// `$SHELL -c command` in the working directory, inside the sandbox, with the
/// conversation's environment minus what is withheld from tools.
fn shell_command(env: &ToolEnv<'_>, command: &str) -> Result<tokio::process::Command, ToolError> {
    let mut shell = match env.sandbox {
        Some(sandbox) => sandbox
            .command(env.shell, &["-c", command])
            .map_err(|e| ToolError::Refused(e.to_string()))?,
        None => {
            let mut shell = tokio::process::Command::new(env.shell);
            shell.arg("-c").arg(command);
            shell
        }
    };
    let withheld: Vec<&str> = env.hidden_env.withheld(&[]).collect();
    shell.current_dir(env.cwd).env_clear().envs(
        env.vars
            .pairs()
            .filter(|(name, _)| !withheld.contains(name)),
    );
    if let Some(sandbox) = env.sandbox {
        shell.envs(sandbox.temp_vars());
    }
    Ok(shell)
}

/// Files larger than this are not read whole (`fs_cat`, `fs_read`).
const MAX_FILE_BYTES: u64 = 50 * 1024 * 1024;

fn read_text(path: &Path) -> Result<String, ToolError> {
    let meta = std::fs::metadata(path).map_err(|e| io(path, &e))?;
    if !meta.is_file() {
        return Err(ToolError::Failed(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    let size = meta.len();
    if size > MAX_FILE_BYTES {
        return Err(ToolError::Failed(format!(
            "{} is {size} bytes, too large to read whole; use fs_grep, or execute_command with head/tail",
            path.display()
        )));
    }
    std::fs::read_to_string(path).map_err(|e| io(path, &e))
}

async fn fetch(env: &ToolEnv<'_>, url: &str) -> Result<String, ToolError> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err(ToolError::BadArguments(format!(
            "`{url}` is not an http(s) URL"
        )));
    }
    let urls = [url.to_string()];
    let load = crate::input::load(&urls, env.cwd, env.user_agent);
    let loaded = tokio::select! {
        loaded = load => loaded.map_err(|e| ToolError::Failed(e.to_string()))?,
        () = env.cancel.cancelled() => return Err(ToolError::Cancelled),
        () = tokio::time::sleep(Duration::from_secs(120)) => {
            return Err(ToolError::Failed("the fetch timed out".into()));
        }
    };
    Ok(loaded
        .documents
        .into_iter()
        .map(|d| d.contents)
        .next()
        .unwrap_or_else(|| "(no text content)".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_in(dir: &Path, cancel: &tokio_util::sync::CancellationToken) -> ToolEnv<'static> {
        let dir: &'static Path = Box::leak(dir.to_path_buf().into_boxed_path());
        let cancel: &'static tokio_util::sync::CancellationToken =
            Box::leak(Box::new(cancel.clone()));
        ToolEnv {
            cancel,
            ..crate::tool::tests::test_env(dir)
        }
    }

    /// The declarations go with every request: they stay compact and say what each tool
    /// does.
    #[test]
    fn declarations_are_compact() {
        let mut sent = 0;
        for builtin in BUILTINS {
            assert!(!builtin.description.is_empty(), "{}", builtin.name);
            let schema = builtin.schema();
            assert_eq!(
                super::super::schema::compact(&schema),
                schema,
                "{}",
                builtin.name
            );
            let spec = json!({"type": "function", "function": {
                "name": builtin.name, "description": builtin.description, "parameters": schema}});
            sent += spec.to_string().len();
        }
        assert!(sent <= 3600, "the built-in declarations take {sent} bytes");
        let time = find("get_current_time").map(Builtin::schema);
        assert_eq!(time, Some(json!({"type": "object", "properties": {}})));
        let read = find("fs_read").map(Builtin::schema).unwrap_or_default();
        assert_eq!(read["required"], json!(["path"]));
        assert_eq!(read["properties"]["path"], json!({"type": "string"}));
        assert_eq!(
            read["properties"]["offset"]["description"],
            "First line, 1-based"
        );
    }

    fn call(dir: &Path, name: &str, args: Value) -> Result<String, ToolError> {
        let cancel = tokio_util::sync::CancellationToken::new();
        let env = env_in(dir, &cancel);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(run(find(name).unwrap(), &args, &env, Grant::default()))
    }

    #[test]
    fn read_pages_and_lists() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=5).map(|i| format!("line {i}\n")).collect();
        std::fs::write(dir.path().join("f.txt"), text).unwrap();
        let out = call(
            dir.path(),
            "fs_read",
            json!({"path": "f.txt", "offset": 2, "limit": 2}),
        )
        .unwrap();
        assert_eq!(
            out,
            "     2\tline 2\n     3\tline 3\n[lines 2-3 of 5; call again with offset 4 to read on]\n"
        );
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        assert_eq!(
            call(dir.path(), "fs_ls", json!({"path": "."})).unwrap(),
            "f.txt\nsub/"
        );
    }

    #[test]
    fn glob_and_grep_skip_ignored_files() {
        let dir = crate::test_support::tree(&[
            (".gitignore", "gen/\n"),
            ("src/a.rs", "fn needle() {}\n"),
            ("gen/b.rs", "fn needle() {}\n"),
            ("node_modules/x/c.rs", "fn needle() {}\n"),
        ]);
        let root = dir.path();
        assert_eq!(
            call(root, "fs_glob", json!({"pattern": "**/*.rs"})).unwrap(),
            "src/a.rs"
        );
        assert_eq!(
            call(
                root,
                "fs_grep",
                json!({"pattern": "needle", "include": "*.rs"})
            )
            .unwrap(),
            "src/a.rs:1: fn needle() {}"
        );
        assert!(call(root, "fs_grep", json!({"pattern": "("})).is_err());
    }

    #[test]
    fn patches_apply_or_explain() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("f.txt"), "one\ntwo\nthree\n").unwrap();
        let diff = "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n";
        call(
            dir.path(),
            "fs_patch",
            json!({"path": "f.txt", "contents": diff}),
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("f.txt")).unwrap(),
            "one\nTWO\nthree\n"
        );
        let err = call(
            dir.path(),
            "fs_patch",
            json!({"path": "f.txt", "contents": diff}),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("does not apply"), "{err}");
    }

    #[test]
    fn edits_replace_one_exact_string_or_explain() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f.rs");
        std::fs::write(&file, "let a = 1;\nlet b = 1;\n").unwrap();
        let edit = |args: Value| call(dir.path(), "fs_edit", args);
        let twice = edit(json!({"path": "f.rs", "old_string": "= 1", "new_string": "= 2"}))
            .unwrap_err()
            .to_string();
        assert!(twice.contains("occurs 2 times"), "{twice}");
        let missing = edit(json!({"path": "f.rs", "old_string": "let c", "new_string": "x"}))
            .unwrap_err()
            .to_string();
        assert!(missing.contains("was not found"), "{missing}");
        assert_eq!(
            edit(json!({"path": "f.rs", "old_string": "let b = 1", "new_string": "let b = 3"}))
                .unwrap(),
            "replaced 1 occurrence in f.rs"
        );
        edit(json!({"path": "f.rs", "old_string": "let", "new_string": "const", "replace_all": true}))
            .unwrap();
        assert_eq!(
            std::fs::read_to_string(&file).unwrap(),
            "const a = 1;\nconst b = 3;\n"
        );
        let (summary, diff) = describe(
            find("fs_edit").unwrap(),
            &json!({"path": "f.rs", "old_string": "a = 1", "new_string": "a = 9"}),
            dir.path(),
        )
        .unwrap();
        assert_eq!(summary, "edit f.rs");
        let diff = diff.unwrap();
        assert!(
            diff.contains("-const a = 1;") && diff.contains("+const a = 9;"),
            "{diff}"
        );
    }

    #[test]
    fn a_command_filling_stderr_does_not_stall() {
        let dir = tempfile::tempdir().unwrap();
        let out = call(
            dir.path(),
            "execute_command",
            json!({"command": "head -c 300000 /dev/zero | tr '\\0' e >&2; echo done"}),
        )
        .unwrap();
        assert!(out.starts_with("done\n\n[stderr]\neee"), "{}", &out[..40]);
        assert!(out.ends_with("[exit code: 0]"));
    }

    #[cfg(unix)]
    #[test]
    fn rm_removes_links_and_writes_keep_modes() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("keep.txt"), "x").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("link")).unwrap();
        call(dir.path(), "fs_rm", json!({"path": "link"})).unwrap();
        assert!(!dir.path().join("link").exists());
        assert!(
            target.join("keep.txt").exists(),
            "the link's target survives"
        );

        let script = dir.path().join("run.sh");
        std::fs::write(&script, "echo 1\n").unwrap();
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o750)).unwrap();
        call(
            dir.path(),
            "fs_write",
            json!({"path": "run.sh", "contents": "echo 2\n"}),
        )
        .unwrap();
        let mode = std::fs::metadata(&script).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o750);
    }

    #[test]
    fn commands_time_out() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = tokio_util::sync::CancellationToken::new();
        let mut env = env_in(dir.path(), &cancel);
        env.timeout = Duration::from_millis(200);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let started = std::time::Instant::now();
        let marker = dir.path().join("still-running");
        let command = format!("(sleep 1; touch {}) & sleep 5", marker.display());
        let err = runtime
            .block_on(run(
                find("execute_command").unwrap(),
                &json!({"command": command}),
                &env,
                Grant::default(),
            ))
            .unwrap_err()
            .to_string();
        assert!(err.contains("did not finish"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(3));
        std::thread::sleep(Duration::from_millis(1500));
        assert!(!marker.exists(), "the whole process group was stopped");
    }
}
