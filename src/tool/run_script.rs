//! Running a script tool: Loki's environment contract (`LLM_OUTPUT`, `LLM_ROOT_DIR`,
//! `LLM_TOOL_NAME`, `LLM_TOOL_CACHE_DIR`, `functions/.env`), the checks its annotations
//! ask for (required variables, required programs), a timeout, and the result.
//!
//! The script does not inherit loki's own credentials ([`super::HiddenEnv`]) unless it
//! declares them with `@env`; `functions/.env` is the tools' own and is always loaded.
//! `LLM_OUTPUT` is a private (0600) file created for the call and removed afterwards.

use std::io::Read;

use serde_json::Value;

use super::script::{ScriptTool, wrapper};
use super::{ToolEnv, ToolError};

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
    let withheld: Vec<&str> = env.hidden_env.withheld(&tool.declared_env).collect();
    let mut vars = crate::config::Env::from_pairs(
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
    let vars = match env.secrets {
        Some(vault) => vault
            .resolve_dotenv(vars)
            .map_err(|e| ToolError::Failed(e.to_string()))?,
        None => vars,
    };
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
        if !on_path(program, &vars) {
            return Err(ToolError::Failed(format!(
                "the tool needs `{program}`, which is not installed"
            )));
        }
    }
    // Confined, a tool keeps its output, its cache and — when loki's config directory
    // holds it — a copy of itself in the sandbox's private temporary directory.
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
    let output = OutputFile(cache.join(format!(
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
    let tool_path = copy.as_ref().map_or(tool.path.as_path(), |c| c.0.as_path());
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
    // Only the conversation's environment (`vars` already lacks what is withheld).
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
        .env("LLM_OUTPUT", output.0.as_path())
        .env("LLM_ROOT_DIR", env.root_dir)
        .env("LLM_TOOL_NAME", &tool.name)
        .env("LLM_TOOL_CACHE_DIR", &cache)
        .env("LLM_TOOL_PATH", tool_path);
    if let Some(sandbox) = env.sandbox {
        command.envs(sandbox.temp_vars());
    }
    if let Some(entry) = &tool.entry {
        command.env("LLM_AGENT_FUNC", entry);
    }
    let done = super::process::run(command, env, &format!("tool `{}`", tool.name)).await?;
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
fn create_private(path: &std::path::Path) -> std::io::Result<()> {
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
fn read_head(path: &std::path::Path, notes: &mut Vec<String>) -> String {
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

fn on_path(program: &str, vars: &crate::config::Env) -> bool {
    vars.get("PATH")
        .is_some_and(|paths| std::env::split_paths(paths).any(|dir| dir.join(program).is_file()))
}

/// A private copy of the script `path` in `dir`, for a sandbox that keeps its original
/// out of reach.
fn copy_into(path: &std::path::Path, dir: &std::path::Path) -> Result<OutputFile, ToolError> {
    let name = path
        .file_name()
        .map_or_else(|| "tool".to_string(), |n| n.to_string_lossy().into_owned());
    let copy = OutputFile(dir.join(format!(".tool.{:08x}.{name}", fastrand::u32(..))));
    std::fs::copy(path, &copy.0).map_err(|e| {
        ToolError::Failed(format!(
            "cannot copy {} into the sandbox: {e}",
            path.display()
        ))
    })?;
    Ok(copy)
}

/// The `LLM_OUTPUT` file of one call, removed afterwards.
struct OutputFile(std::path::PathBuf);

impl Drop for OutputFile {
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
            editor: None,
            cwd: dir.path(),
            shell: "/bin/sh",
            sandbox: None,
            rules: Box::leak(Box::default()),
            timeout: std::time::Duration::from_secs(30),
            cancel: &cancel,
            user_agent: None,
            root_dir: dir.path(),
            cache_dir: dir.path(),
            vars: &crate::config::Env::capture(),
            tools_env_file: &dir.path().join("missing.env"),
            todo: None,
            supervisor: None,
            budget: None,
            secrets: None,
            web_search: None,
            images: None,
            background: &crate::tool::Background::default(),
            hidden_env: &crate::tool::HiddenEnv::default(),
            progress: None,
            asker: &crate::tool::ask::Headless,
            conversation: "c1",
            lsp: None,
            memory: None,
            mcp_sampler: None,
            hooks: None,
            checkpoints: None,
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
