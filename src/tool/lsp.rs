//! `lsp_diagnostics` and `lsp_references`: tools backed by the configured language servers
//! (`lsp_servers`, see [`crate::lsp`]).
//!
//! They run without asking, so they only take files inside the working tree: a path that
//! resolves outside it (`..`, an absolute path elsewhere, a symlink out) is refused before
//! any server starts.

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::{ToolEnv, ToolError, paths};
use crate::client::ToolSpec;
use crate::lsp::LspError;

/// A language-server tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LspTool {
    /// Errors and warnings of a file.
    Diagnostics,
    /// Where a symbol is used.
    References,
}

impl LspTool {
    /// Both tools.
    pub const ALL: [Self; 2] = [Self::Diagnostics, Self::References];

    /// The function name.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Diagnostics => "lsp_diagnostics",
            Self::References => "lsp_references",
        }
    }

    /// The declaration sent to the model.
    pub fn spec(&self) -> ToolSpec {
        let path = json!({
            "type": "string",
            "description": "File path, relative to the working directory",
        });
        let (description, parameters) = match self {
            Self::Diagnostics => (
                "Errors and warnings a language server reports for a file (one per line: \
                 path:line:column: severity: message).",
                json!({"type": "object", "properties": {"path": path}, "required": ["path"]}),
            ),
            Self::References => (
                "Where the symbol at a position is used, from a language server (one location \
                 per line: path:line:column: source line; the declaration included).",
                json!({"type": "object", "properties": {
                    "path": path,
                    "line": {"type": "integer", "description": "Line of the symbol, from 1"},
                    "column": {"type": "integer", "description": "Column of the symbol (a character of its name), from 1"},
                }, "required": ["path", "line", "column"]}),
            ),
        };
        ToolSpec {
            name: self.name().into(),
            description: description.into(),
            parameters,
        }
    }

    /// Runs the call.
    #[inline(never)]
    pub fn run<'a>(
        &'a self,
        args: &'a Value,
        env: &'a ToolEnv<'_>,
    ) -> BoxFuture<'a, Result<String, ToolError>> {
        Box::pin(async move {
            let arg = args["path"]
                .as_str()
                .filter(|p| !p.trim().is_empty())
                .ok_or_else(|| ToolError::BadArguments("missing string argument `path`".into()))?;
            let position = match self {
                Self::Diagnostics => None,
                Self::References => Some((number(args, "line")?, number(args, "column")?)),
            };
            let Some(pool) = env.lsp.filter(|pool| !pool.is_empty()) else {
                return Err(ToolError::Failed(
                    "no language servers are configured (lsp_servers in config.yaml)".into(),
                ));
            };
            let resolved = paths::resolve(env.cwd, arg);
            if !resolved.inside {
                return Err(ToolError::BadArguments(format!(
                    "`{arg}` is outside the working directory; language-server tools only read \
                     files inside it"
                )));
            }
            match std::fs::metadata(&resolved.path) {
                Ok(meta) if meta.is_file() => {}
                Ok(_) => return Err(ToolError::Failed(format!("`{arg}` is not a file"))),
                Err(e) => return Err(ToolError::Failed(format!("`{arg}`: {e}"))),
            }
            let root = paths::root(env.cwd);
            let answer = match position {
                None => pool.diagnostics(&root, &resolved.path, env.cancel).await,
                Some((line, column)) => {
                    pool.references(&root, &resolved.path, line, column, env.cancel)
                        .await
                }
            };
            answer.map_err(|e| match e {
                LspError::Cancelled => ToolError::Cancelled,
                other => ToolError::Failed(other.to_string()),
            })
        })
    }
}

/// A positive integer argument (models sometimes send numbers as strings).
fn number(args: &Value, name: &str) -> Result<u32, ToolError> {
    let value = &args[name];
    value
        .as_u64()
        .or_else(|| value.as_str().and_then(|s| s.trim().parse().ok()))
        .and_then(|n| u32::try_from(n).ok())
        .filter(|n| *n >= 1)
        .ok_or_else(|| {
            ToolError::BadArguments(format!("`{name}` must be a number from 1 (got {value})"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn positions_must_be_numbers_from_one() {
        let args = json!({"line": 3, "column": "7", "zero": 0, "neg": -1, "text": "x"});
        assert_eq!(number(&args, "line").unwrap(), 3);
        assert_eq!(number(&args, "column").unwrap(), 7);
        for bad in ["zero", "neg", "text", "missing"] {
            let error = number(&args, bad).unwrap_err().to_string();
            assert!(
                error.contains(&format!("`{bad}` must be a number")),
                "{error}"
            );
        }
    }

    #[test]
    fn specs_name_their_arguments() {
        let references = LspTool::References.spec();
        assert_eq!(references.name, "lsp_references");
        assert_eq!(
            references.parameters["required"],
            json!(["path", "line", "column"])
        );
        let diagnostics = LspTool::Diagnostics.spec();
        assert!(diagnostics.description.starts_with("Errors and warnings"));
        assert_eq!(diagnostics.parameters["required"], json!(["path"]));
    }
}
