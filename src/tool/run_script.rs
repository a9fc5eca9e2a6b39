//! Running a script tool: Loki's environment contract (`LLM_OUTPUT`, `LLM_ROOT_DIR`,
//! `LLM_TOOL_NAME`, `LLM_TOOL_CACHE_DIR`, `functions/.env`), the checks its annotations
//! ask for (required variables, required programs), a timeout, and the result.

use std::process::Stdio;

use serde_json::Value;

use super::script::{ScriptTool, wrapper};
use super::{ToolEnv, ToolError};

/// Runs one call; the result is what the tool wrote to `$LLM_OUTPUT`, else its stdout,
/// else `DONE`.
pub(super) async fn run(
    tool: &ScriptTool,
    args: &Value,
    env: &ToolEnv<'_>,
) -> Result<String, ToolError> {
    let mut vars = crate::config::Env::capture();
    if let Err(e) = vars.load_dotenv(env.tools_env_file) {
        return Err(ToolError::Failed(format!(
            "cannot read {}: {e}",
            env.tools_env_file.display()
        )));
    }
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
        if !on_path(program) {
            return Err(ToolError::Failed(format!(
                "the tool needs `{program}`, which is not installed"
            )));
        }
    }
    let cache = env.cache_dir.join("tools").join(&tool.name);
    let _ = std::fs::create_dir_all(&cache);
    let output = OutputFile(cache.join(format!(
        ".output.{}.{:08x}",
        std::process::id(),
        fastrand::u32(..)
    )));
    std::fs::write(&output.0, "")
        .map_err(|e| ToolError::Failed(format!("cannot create {}: {e}", output.0.display())))?;
    let call = wrapper(tool, args);
    let program = call.program.clone();
    let mut command = tokio::process::Command::new(&call.program);
    command
        .args(&call.args)
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
        .env("LLM_TOOL_PATH", &tool.path)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command
        .spawn()
        .map_err(|e| ToolError::Failed(format!("cannot start `{program}`: {e}")))?;
    let group = super::builtin::KillGroup(child.id());
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let finished = async {
        let (out, err) = tokio::join!(
            super::builtin::read_capped(stdout),
            super::builtin::read_capped(stderr)
        );
        (child.wait().await, out, err)
    };
    let (status, out, err) = tokio::select! {
        done = finished => done,
        () = tokio::time::sleep(env.timeout) => {
            return Err(ToolError::Failed(format!(
                "tool `{}` did not finish within {}s and was stopped",
                tool.name,
                env.timeout.as_secs()
            )));
        }
        () = env.cancel.cancelled() => return Err(ToolError::Cancelled),
    };
    group.finished();
    let status = status.map_err(|e| ToolError::Failed(e.to_string()))?;
    let stderr_text = String::from_utf8_lossy(&err).trim().to_string();
    if !status.success() {
        let code = status
            .code()
            .map_or_else(|| "a signal".to_string(), |c| format!("code {c}"));
        return Err(ToolError::Exited {
            message: format!("Tool call '{}' exited with {code}", tool.name),
            stderr: stderr_text,
        });
    }
    let written = std::fs::read_to_string(output.0.as_path()).unwrap_or_default();
    let printed = String::from_utf8_lossy(&out).into_owned();
    Ok(if !written.trim().is_empty() {
        written
    } else if !printed.trim().is_empty() {
        printed
    } else {
        "DONE".to_string()
    })
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
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
            require_tools: Vec::new(),
            interpreter: Some(vec!["node".into()]),
            positional: vec!["text".into(), "times".into(), "loud".into()],
        };
        let cancel = tokio_util::sync::CancellationToken::new();
        let env = ToolEnv {
            cwd: dir.path(),
            shell: "/bin/sh",
            timeout: std::time::Duration::from_secs(30),
            cancel: &cancel,
            user_agent: None,
            root_dir: dir.path(),
            cache_dir: dir.path(),
            tools_env_file: &dir.path().join("missing.env"),
            web_search: None,
            images: None,
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
        assert_eq!(out, "ABAB");
    }
}
