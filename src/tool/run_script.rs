//! Running a script tool: Loki's environment contract (`LLM_OUTPUT`, `LLM_ROOT_DIR`,
//! `LLM_TOOL_NAME`, `LLM_TOOL_CACHE_DIR`, `functions/.env`), the checks its annotations
//! ask for (required variables, required programs), a timeout, and the result.
//!
//! The script does not inherit loki's own credentials ([`super::HiddenEnv`]) unless it
//! declares them with `@env`; `functions/.env` is the tools' own and is always loaded.
//! `LLM_OUTPUT` is a private (0600) file created for the call and removed afterwards.

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::process::Finished;
use super::script::{ScriptTool, wrapper};
use super::{ToolEnv, ToolError};
use crate::config::Env;

/// What a call returned.
pub(super) struct Ran {
    /// The result for the model.
    pub text: String,
    /// The tool wrote nothing (and loki had nothing to say about the run): `text` is
    /// `DONE`.
    pub silent: bool,
}

/// Runs one call; the result is what the tool wrote to `$LLM_OUTPUT`, else its stdout,
/// else `DONE`.
pub(super) async fn run(
    tool: &ScriptTool,
    args: &Value,
    env: &ToolEnv<'_>,
) -> Result<Ran, ToolError> {
    let vars = environment(tool, env)?;
    check_requirements(tool, &vars, env)?;
    let files = CallFiles::create(tool, env)?;
    let command = command(tool, args, env, &vars, &files)?;
    let done = super::process::run(command, env, &format!("tool `{}`", tool.name)).await?;
    finished(tool, &done, &files.output)
}

/// The environment the script runs with: the conversation's, less what is withheld from
/// it, plus `functions/.env` (its `{{NAME}}` placeholders filled from the vault).
fn environment(tool: &ScriptTool, env: &ToolEnv<'_>) -> Result<Env, ToolError> {
    let withheld: Vec<&str> = env.hidden_env.withheld(&tool.declared_env).collect();
    let mut vars = Env::from_pairs(
        env.vars
            .pairs()
            .filter(|(name, _)| !withheld.contains(name))
            .map(|(k, v)| (k.to_string(), v.to_string())),
    );
    if let Err(e) = vars.load_dotenv(env.tools_env_file) {
        return Err(ToolError::Failed(format!(
            "cannot read {}: {e}",
            env.tools_env_file.display()
        )));
    }
    match env.secrets {
        Some(vault) => vault
            .resolve_dotenv(vars)
            .map_err(|e| ToolError::Failed(e.to_string())),
        None => Ok(vars),
    }
}

/// What the script's annotations require: variables set (`@env`) and programs on the
/// `PATH` (`@require-tools`).
fn check_requirements(tool: &ScriptTool, vars: &Env, env: &ToolEnv<'_>) -> Result<(), ToolError> {
    let missing: Vec<&str> = tool
        .required_env
        .iter()
        .filter(|name| vars.get(name).is_none_or(str::is_empty))
        .map(String::as_str)
        .collect();
    if !missing.is_empty() {
        return Err(ToolError::Failed(format!(
            "the tool needs {} to be set (in the environment or {})",
            missing.join(", "),
            env.tools_env_file.display()
        )));
    }
    for program in &tool.require_tools {
        if !on_path(program, vars) {
            return Err(ToolError::Failed(format!(
                "the tool needs `{program}`, which is not installed"
            )));
        }
    }
    Ok(())
}

/// The files of one call: the tool's cache directory, its private `LLM_OUTPUT` file and,
/// when the sandbox keeps the script itself out of reach, a copy it can run.
struct CallFiles {
    /// `LLM_TOOL_CACHE_DIR`.
    cache: PathBuf,
    /// `LLM_OUTPUT`, removed after the call.
    output: TempFile,
    /// The script's copy in the sandbox's temporary directory, removed after the call.
    copy: Option<ScriptCopy>,
}

impl CallFiles {
    /// Makes them. Confined, a tool keeps its output, its cache and — when loki's config
    /// directory holds it — a copy of itself in the sandbox's private temporary directory.
    fn create(tool: &ScriptTool, env: &ToolEnv<'_>) -> Result<Self, ToolError> {
        let scratch = match env.sandbox {
            Some(sandbox) => Some(
                sandbox
                    .temp()
                    .map_err(|e| ToolError::Failed(e.to_string()))?,
            ),
            None => None,
        };
        let cache = scratch
            .unwrap_or(env.cache_dir)
            .join("tools")
            .join(&tool.name);
        let _ = std::fs::create_dir_all(&cache);
        let output = TempFile(cache.join(format!(
            ".output.{}.{:08x}",
            std::process::id(),
            fastrand::u32(..)
        )));
        create_private(&output.0)
            .map_err(|e| ToolError::Failed(format!("cannot create {}: {e}", output.0.display())))?;
        let copy = match (env.sandbox, scratch) {
            (Some(sandbox), Some(scratch)) if !sandbox.may_read(&tool.path) => {
                Some(copy_into(&tool.path, scratch)?)
            }
            _ => None,
        };
        Ok(Self {
            cache,
            output,
            copy,
        })
    }

    /// The script that runs: the copy, if one was made.
    fn script<'a>(&'a self, tool: &'a ScriptTool) -> &'a Path {
        self.copy
            .as_ref()
            .map_or(tool.path.as_path(), |c| c.script.as_path())
    }
}

/// The command that runs the call, confined when there is a sandbox, with only the
/// conversation's environment (`vars`, which already lacks what is withheld), the
/// script's `@env` defaults and Loki's `LLM_*` variables.
fn command(
    tool: &ScriptTool,
    args: &Value,
    env: &ToolEnv<'_>,
    vars: &Env,
    files: &CallFiles,
) -> Result<tokio::process::Command, ToolError> {
    let call = wrapper(tool, args);
    let mut command = match env.sandbox {
        Some(sandbox) => sandbox
            .command(&call.program, &call.args)
            .map_err(|e| ToolError::Refused(e.to_string()))?,
        None => {
            let mut plain = tokio::process::Command::new(&call.program);
            plain.args(&call.args);
            plain
        }
    };
    command.env_clear();
    command
        .envs(call.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .current_dir(env.cwd)
        .envs(vars.pairs())
        .envs(
            tool.env_defaults
                .iter()
                .filter(|(name, _)| vars.get(name).is_none())
                .map(|(n, v)| (n.as_str(), v.as_str())),
        )
        .env("LLM_OUTPUT", files.output.0.as_path())
        .env("LLM_ROOT_DIR", env.root_dir)
        .env("LLM_TOOL_NAME", &tool.name)
        .env("LLM_TOOL_CACHE_DIR", &files.cache)
        .env("LLM_TOOL_PATH", files.script(tool));
    if let Some(sandbox) = env.sandbox {
        command.envs(sandbox.temp_vars());
    }
    if let Some(entry) = &tool.entry {
        command.env("LLM_AGENT_FUNC", entry);
    }
    Ok(command)
}

/// The result of a finished run: an error when it exited with a failure, else loki's
/// notes about the run followed by what the script wrote to `output`, else its stdout,
/// else `DONE`.
fn finished(tool: &ScriptTool, done: &Finished, output: &TempFile) -> Result<Ran, ToolError> {
    let mut notes = done.notes();
    if !done.status.success() {
        let code = done
            .status
            .code()
            .map_or_else(|| "a signal".to_string(), |c| format!("code {c}"));
        return Err(ToolError::Exited {
            message: format!("Tool call '{}' exited with {code}", tool.name),
            stderr: done.stderr.text().trim().to_string(),
        });
    }
    let written = read_head(&output.0, &mut notes);
    let printed = done.stdout.text();
    let silent = written.trim().is_empty() && printed.trim().is_empty() && notes.is_empty();
    let result = if !written.trim().is_empty() {
        written
    } else if !printed.trim().is_empty() {
        printed
    } else {
        "DONE".to_string()
    };
    notes.push(result);
    Ok(Ran {
        text: notes.join("\n"),
        silent,
    })
}

/// Creates an empty file only its owner can read (it may receive anything the tool
/// produces).
fn create_private(path: &Path) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path).map(drop)
}

/// The first [`super::process::MAX_CAPTURE`] bytes of the `LLM_OUTPUT` file, with a
/// note in `notes` when it was longer.
fn read_head(path: &Path, notes: &mut Vec<String>) -> String {
    let Ok(file) = std::fs::File::open(path) else {
        return String::new();
    };
    let total = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut head = Vec::new();
    let _ = file
        .take(super::process::MAX_CAPTURE as u64)
        .read_to_end(&mut head);
    if total > head.len() as u64 {
        notes.push(format!(
            "[LLM_OUTPUT: {total} bytes written, only the first {} kept]",
            head.len()
        ));
    }
    String::from_utf8_lossy(&head).into_owned()
}

fn on_path(program: &str, vars: &Env) -> bool {
    vars.get("PATH")
        .is_some_and(|paths| std::env::split_paths(paths).any(|dir| dir.join(program).is_file()))
}

/// Copies the script at `path` into a private directory of `dir`, with what lies beside
/// it (helper scripts, data files: see [`copy_beside`]), so that a script that reads or
/// sources its neighbours (`"$(dirname "$0")/lib.sh"`) finds them there.
fn copy_into(path: &Path, dir: &Path) -> Result<ScriptCopy, ToolError> {
    let failed = |e: std::io::Error| {
        ToolError::Failed(format!(
            "cannot copy {} into the sandbox: {e}",
            path.display()
        ))
    };
    let name = path
        .file_name()
        .map_or_else(|| "tool".to_string(), |n| n.to_string_lossy().into_owned());
    let copy_dir = dir.join(format!(".tool.{:08x}", fastrand::u32(..)));
    std::fs::create_dir(&copy_dir).map_err(failed)?;
    let copy = ScriptCopy {
        script: copy_dir.join(name),
        dir: copy_dir,
    };
    if let Some(parent) = path.parent() {
        let mut budget = BESIDE_BUDGET;
        copy_beside(parent, &copy.dir, 0, &mut budget);
    }
    std::fs::copy(path, &copy.script).map_err(failed)?;
    Ok(copy)
}

/// Most bytes copied beside a script into the sandbox, and most bytes of any one file.
const BESIDE_BUDGET: u64 = 16 << 20;
const BESIDE_FILE_MAX: u64 = 1 << 20;
/// How deep below the script's directory files are copied.
const BESIDE_DEPTH: usize = 3;
/// Never copied: what holds secrets or conversations, and what is large by nature.
const NOT_BESIDE: &[&str] = &[
    "sessions",
    "config.yaml",
    "vault.age",
    ".git",
    "node_modules",
    "__pycache__",
];

/// Copies the regular files of `from` (and its directories, [`BESIDE_DEPTH`] deep) into
/// `to`: none named in [`NOT_BESIDE`] or starting with `.env`, no link, no file over
/// [`BESIDE_FILE_MAX`], at most `budget` bytes in all. Best effort: what cannot be copied
/// is left out.
fn copy_beside(from: &Path, to: &Path, depth: usize, budget: &mut u64) {
    let Ok(entries) = std::fs::read_dir(from) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let text = name.to_string_lossy();
        if NOT_BESIDE.contains(&text.as_ref()) || text.starts_with(".env") {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let target = to.join(&name);
        if kind.is_dir() && depth < BESIDE_DEPTH {
            if std::fs::create_dir(&target).is_ok() {
                copy_beside(&entry.path(), &target, depth + 1, budget);
            }
        } else if kind.is_file() {
            let size = entry.metadata().map_or(u64::MAX, |m| m.len());
            if size <= BESIDE_FILE_MAX
                && size <= *budget
                && std::fs::copy(entry.path(), &target).is_ok()
            {
                *budget -= size;
            }
        }
    }
}

/// A file made for one call (its `LLM_OUTPUT`), removed afterwards.
struct TempFile(PathBuf);

/// The private copy of a script and what lies beside it, removed after the call.
struct ScriptCopy {
    dir: PathBuf,
    script: PathBuf,
}

impl Drop for ScriptCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::script::Lang;

    /// The TypeScript runner, exercised with plain node on an ES module (tsx is not
    /// assumed to be installed).
    #[test]
    fn the_typescript_runner_calls_run_positionally() {
        if std::process::Command::new("node")
            .arg("--version")
            .output()
            .is_err()
        {
            eprintln!("node not installed; skipped");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let module = dir.path().join("shout.mjs");
        std::fs::write(
            &module,
            "export async function run(text, times = 2, loud) {\n  const t = text.repeat(times);\n  return loud ? t.toUpperCase() : t;\n}\n",
        )
        .unwrap();
        let tool = ScriptTool {
            name: "shout".into(),
            path: module,
            lang: Lang::TypeScript,
            description: "Shout.".into(),
            parameters: serde_json::json!({}),
            required_env: Vec::new(),
            env_defaults: Vec::new(),
            declared_env: Vec::new(),
            require_tools: Vec::new(),
            interpreter: Some(vec!["node".into()]),
            positional: vec!["text".into(), "times".into(), "loud".into()],
            entry: None,
        };
        let cancel = tokio_util::sync::CancellationToken::new();
        let env = ToolEnv {
            timeout: std::time::Duration::from_secs(30),
            cancel: &cancel,
            tools_env_file: &dir.path().join("missing.env"),
            ..crate::tool::tests::test_env(dir.path())
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let out = runtime
            .block_on(run(
                &tool,
                &serde_json::json!({"text": "ab", "loud": true}),
                &env,
            ))
            .unwrap();
        assert_eq!(out.text, "ABAB");
        assert!(!out.silent);
    }
}
