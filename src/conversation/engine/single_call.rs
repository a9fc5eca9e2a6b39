//! One tool call outside a turn (`loki --run-tool`, the `functions/bin/` wrappers): the
//! conversation's tools, approval, confinement and output limits, exactly as for a call
//! the model makes — only the caller is a person.

use super::Engine;
use crate::conversation::Sink;
use crate::conversation::context::RequestContext;
use crate::error::CoreError;
use loki_protocol::emitter::Emitter;
use loki_protocol::op::ToolOutcome;
use loki_wire::message::ToolCall;

impl Engine {
    /// Runs tool `name` with `arguments` (JSON text) in `ctx`. An unknown name is an
    /// error naming the tools there are; a refused or failed call is an outcome.
    pub async fn run_tool(
        &self,
        ctx: &mut RequestContext,
        name: &str,
        arguments: &str,
        emitter: &dyn Emitter,
    ) -> Result<ToolOutcome, CoreError> {
        // A person runs the tool: whether the model could call it does not matter (a
        // model without function calling, or `function_calling_support: false`).
        ctx.function_calling_support = true;
        ctx.model.config.supports_function_calling = true;
        let sink = Sink::for_context(ctx, emitter);
        let mut toolbox = super::tool_round::Toolbox::prepare(&self.state, ctx, &sink).await?;
        // Hidden from models is not hidden from the person naming it: a built-in left out
        // by `visible_tools` still runs here (its wrapper, a script calling the wrapper).
        if !toolbox.tools.iter().any(|t| t.name() == name)
            && let Some(hidden) = crate::tool::hidden_builtin(&self.state.config, name)
            && super::scope::usable_here(&self.state, ctx, &hidden)
        {
            toolbox.tools.push(hidden);
        }
        if !toolbox.tools.iter().any(|t| t.name() == name) {
            // A declaration that could not be read says why.
            let broken = self.state.script_tools().errors.iter().find(|e| {
                e.path
                    .file_stem()
                    .is_some_and(|stem| stem.to_string_lossy() == name)
            });
            if let Some(error) = broken {
                return Err(CoreError::InvalidRequest(format!(
                    "tool `{name}` is not available: {error}"
                )));
            }
            let mut names: Vec<&str> = toolbox.tools.iter().map(crate::tool::Tool::name).collect();
            names.sort_unstable();
            return Err(CoreError::InvalidRequest(format!(
                "there is no tool `{name}` here (tools: {})",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )));
        }
        let call = ToolCall {
            id: "run_tool_1".into(),
            name: name.to_string(),
            arguments: arguments.to_string(),
            signature: None,
        };
        ctx.tool_policy.seen.clear();
        let results = toolbox
            .run_round(&self.state, ctx, std::slice::from_ref(&call), &sink)
            .await
            .ok_or(CoreError::Cancelled)?;
        sink.flush();
        let content = results
            .messages
            .into_iter()
            .find(|m| m.tool_call_id.as_deref() == Some(call.id.as_str()))
            .map(|m| m.text_content())
            .unwrap_or_default();
        let ok = !serde_json::from_str::<serde_json::Value>(&content)
            .is_ok_and(|v| v.get("tool_call_error").is_some());
        Ok(ToolOutcome { content, ok })
    }
}
