//! `lsp_diagnostics` and `lsp_references`: tools backed by the configured language servers
//! (stub: being written).

use serde_json::{Value, json};

use super::{ToolEnv, ToolError};
use crate::client::ToolSpec;

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
        ToolSpec {
            name: self.name().into(),
            description: String::new(),
            parameters: json!({"type": "object", "properties": {}}),
        }
    }

    /// Runs the call.
    pub async fn run(&self, args: &Value, env: &ToolEnv<'_>) -> Result<String, ToolError> {
        let _ = (args, env);
        Err(ToolError::Failed("not built yet".into()))
    }
}
