//! The gate every call passes before it runs ([`check`]): the `PreToolUse` hooks, the
//! arguments a script or MCP tool declared, the loop guard, `deny_tools`, the permission
//! rules, the sandbox's fences and the mode, and — where none of those settles it — the
//! approver's question.
//!
//! Each step is a function of its own so that [`check`] reads as the order they run in;
//! that order is part of the contract: a hook's changed arguments are checked like the
//! model's, a deny rule refuses even with yolo, and a path outside the working tree is
//! asked about every time.

use serde_json::Value;

use super::approve::{ApprovalRequest, Approver};
use super::mcp_tools::{Action, McpTool};
use super::{
    Effect, Grant, MAX_REPEATS, Policy, Tool, ToolEnv, ToolError, approval_needed, builtin, delete,
    fences, paths, schema,
};
use crate::hooks::{HookCall, Verdict};
use loki_protocol::op::Decision;
use loki_wire::message::ToolCall;

/// A call that may run: its tool, the arguments it runs with (a hook's or the user's
/// edit, when they changed them) and what its approval covered.
pub(super) struct Admitted {
    /// The tool called.
    pub tool: Tool,
    /// The arguments it runs with.
    pub args: Value,
    /// What the approval covered, checked again when it runs.
    pub grant: Grant,
}

/// Parses, looks up and approves one call.
pub(super) async fn check(
    call: &ToolCall,
    tools: &[Tool],
    env: &ToolEnv<'_>,
    policy: &mut Policy,
    approver: &dyn Approver,
) -> Result<Admitted, ToolError> {
    let tool = tools
        .iter()
        .find(|t| t.name() == call.name)
        .cloned()
        .ok_or_else(|| ToolError::Unknown(call.name.clone()))?;
    let (args, verdict) = pre_tool_use(env, call, &tool, parse_arguments(call)?).await;
    fits_declared(&tool, &args)?;
    count_repeat(policy, &tool, &args)?;
    let names = rule_names(&tool, &args);
    if names.iter().any(|n| policy.deny.contains(n)) {
        return Err(ToolError::Refused(
            "this tool is disabled by the user (deny_tools in config.yaml, or --disallowedTools)"
                .into(),
        ));
    }
    // A hook's refusal is the hook's, not the user's: its message names the hook.
    if let Some(Verdict::Deny(message)) = verdict {
        return Err(ToolError::Refused(message));
    }
    let permitted = permitted(&tool, &args, &names, env, policy)?;
    let reach =
        Reach::of(&tool, &args, env.cwd)?.admitting(&policy.additional_directories, env.cwd);
    let always_key = always_key(&tool, &args);
    let hook_asks = verdict == Some(Verdict::Ask);
    let must_ask = hook_asks || matches!(permitted, Permitted::Ask(_));
    let exempt = exempt(
        policy,
        &tool,
        &always_key,
        &reach,
        verdict.as_ref(),
        &permitted,
    );
    let grant = reach.grant();
    if !must_ask && (exempt || !approval_needed(&tool, &args, env.cwd)) {
        return Ok(Admitted { tool, args, grant });
    }
    let why_asked = why_asked(permitted, hook_asks, &reach);
    let request = approval_request(call, &tool, &args, &reach, why_asked, env)?;
    let decision = match permission_request(env, call, &tool, &args).await {
        Some(decision) => decision,
        None => approver.approve(&request).await,
    };
    settle(
        decision,
        &request,
        policy,
        always_key,
        Admitted { tool, args, grant },
    )
}

/// The call's arguments: a JSON object (none at all is an empty one).
fn parse_arguments(call: &ToolCall) -> Result<Value, ToolError> {
    if call.arguments.trim().is_empty() {
        return Ok(Value::Object(serde_json::Map::new()));
    }
    serde_json::from_str(&call.arguments)
        .map_err(|e| ToolError::BadArguments(format!("not valid JSON ({e})")))
}

/// Runs the `PreToolUse` hooks, which see every call: the arguments it goes on with (a
/// hook may change them; they are checked afterwards like the model's) and what the
/// hooks decided about it.
async fn pre_tool_use(
    env: &ToolEnv<'_>,
    call: &ToolCall,
    tool: &Tool,
    args: Value,
) -> (Value, Option<Verdict>) {
    let Some(hooks) = env.hooks else {
        return (args, None);
    };
    let before = hooks
        .before(HookCall {
            id: &call.id,
            tool: tool.name(),
            args: &args,
        })
        .await;
    (before.args.unwrap_or(args), before.decision)
}

/// Runs the `PermissionRequest` hooks when a call is about to be asked about: a hook's
/// `allow` or `deny` answers for the user (who is then not asked).
async fn permission_request(
    env: &ToolEnv<'_>,
    call: &ToolCall,
    tool: &Tool,
    args: &Value,
) -> Option<Decision> {
    let hooks = env.hooks?;
    let verdict = hooks
        .permission_request(HookCall {
            id: &call.id,
            tool: tool.name(),
            args,
        })
        .await?;
    match verdict {
        Verdict::Allow => Some(Decision::Approve),
        Verdict::Deny(message) => Some(Decision::DenyWithMessage(message)),
        Verdict::Ask => None,
    }
}

/// Scripts and MCP tools get only calls that fit what they declared (built-ins check
/// their own arguments).
fn fits_declared(tool: &Tool, args: &Value) -> Result<(), ToolError> {
    let declared = match tool {
        Tool::Script(s) => &s.parameters,
        Tool::Mcp(m) if matches!(m.action, Action::Direct { .. }) => &m.parameters,
        _ => return Ok(()),
    };
    schema::check(declared, args).map_err(|e| ToolError::BadArguments(e.to_string()))
}

/// Counts the call in this turn: the same call (tool and arguments) made more than
/// [`MAX_REPEATS`] times is a loop the model is told about.
fn count_repeat(policy: &mut Policy, tool: &Tool, args: &Value) -> Result<(), ToolError> {
    let name = tool.name();
    let count = policy.seen.entry(format!("{name} {args}")).or_insert(0);
    *count += 1;
    if *count > MAX_REPEATS {
        return Err(ToolError::Loop(name.to_string()));
    }
    Ok(())
}

/// How far a call reaches beyond what "always" and auto-approval cover: a path outside
/// the working tree, or a directory deleted with its contents. Either is asked about
/// every time (only yolo skips that).
struct Reach {
    /// The first path outside the working tree, as shown to the user.
    outside: Option<String>,
    /// That path is in one of the additional directories: standing approvals cover it
    /// as they cover the working tree (it is still written as an outside path).
    admitted: bool,
    /// `fs_rm` of a directory with contents.
    recursive: bool,
}

impl Reach {
    /// The reach of `tool` called with `args`. Deleting the working tree is refused here
    /// outright (even with yolo).
    fn of(tool: &Tool, args: &Value, cwd: &std::path::Path) -> Result<Self, ToolError> {
        let outside = match tool {
            Tool::Builtin(b) => builtin::touched_paths(b, args, cwd)
                .into_iter()
                .find(|p| !p.inside)
                .map(|p| paths::display(cwd, &p.path)),
            Tool::Script(_)
            | Tool::Mcp(_)
            | Tool::User(_)
            | Tool::Agent(_)
            | Tool::Todo(_)
            | Tool::Skills(_)
            | Tool::Lsp(_)
            | Tool::Memory(_)
            | Tool::Load(_) => None,
        };
        let recursive = match tool {
            Tool::Builtin(b) if b.name == "fs_rm" => delete::rm_plan(args, cwd)?.recursive,
            _ => false,
        };
        Ok(Self {
            outside,
            admitted: false,
            recursive,
        })
    }

    /// The same reach, its outside path admitted when it lies in one of `dirs`
    /// (relative to `cwd`).
    fn admitting(mut self, dirs: &[String], cwd: &std::path::Path) -> Self {
        if let Some(shown) = &self.outside {
            let path = paths::resolve(cwd, shown).path;
            self.admitted = dirs
                .iter()
                .any(|dir| path.starts_with(paths::resolve(cwd, dir).path));
        }
        self
    }

    /// Whether the call stays where standing approvals apply.
    fn inside(&self) -> bool {
        (self.outside.is_none() || self.admitted) && !self.recursive
    }

    /// What an approval of the call covers.
    fn grant(&self) -> Grant {
        Grant {
            outside: self.outside.is_some(),
            recursive: self.recursive,
        }
    }
}

/// What "always" remembers: the tool — for an MCP invoke, that one tool and not the
/// whole server.
fn always_key(tool: &Tool, args: &Value) -> String {
    match tool {
        Tool::Mcp(m) if m.action == Action::Invoke => {
            format!("{}/{}", m.name, args["tool"].as_str().unwrap_or_default())
        }
        _ => tool.name().to_string(),
    }
}

/// Whether the user's standing decisions let the call run unasked: yolo; auto-approval
/// or an earlier "always", inside the working tree; a hook's "allow", which is the user's
/// own decision for this one call, like yolo; an allow rule or accept-edits, inside the
/// working tree.
fn exempt(
    policy: &Policy,
    tool: &Tool,
    always_key: &str,
    reach: &Reach,
    verdict: Option<&Verdict>,
    permitted: &Permitted,
) -> bool {
    let remembered =
        policy.auto_approve.iter().any(|n| n == tool.name()) || policy.always.contains(always_key);
    policy.yolo()
        || (reach.inside() && remembered)
        || verdict == Some(&Verdict::Allow)
        || (*permitted == Permitted::Run && reach.inside())
}

/// Why a call is asked about when the usual opt-outs cannot let it run: a refusal tells
/// the model what would, instead of naming those opt-outs.
fn why_asked(permitted: Permitted, hook_asks: bool, reach: &Reach) -> Option<String> {
    match permitted {
        Permitted::Ask(why) => Some(why),
        _ if hook_asks => Some(
            "a PreToolUse hook asks for approval of this call; only that hook can let it run \
             unasked"
                .to_string(),
        ),
        _ => match (&reach.outside, reach.recursive) {
            (Some(_), _) if reach.admitted => None,
            (Some(path), _) => Some(format!(
                "`{path}` is outside the working directory, and such a path is asked about \
                 every time: auto_approve_tools, allow rules and accept-edits do not cover it; \
                 --add-dir (or .add-dir) with its directory, --yolo or a PreToolUse hook's allow \
                 does, or run loki in a directory that contains it"
            )),
            (None, true) => Some(
                "deleting a directory with its contents is asked about every time: \
                 auto_approve_tools does not cover it; --yolo does"
                    .to_string(),
            ),
            (None, false) => None,
        },
    }
}

/// The question put to the approver about a call.
fn approval_request(
    call: &ToolCall,
    tool: &Tool,
    args: &Value,
    reach: &Reach,
    why_asked: Option<String>,
    env: &ToolEnv<'_>,
) -> Result<ApprovalRequest, ToolError> {
    let (summary, preview) = summary(tool, args, env.cwd)?;
    // An MCP call is shown by the server's own tool name, not the function exposing it
    // (`mcp__invoke_<server>`).
    let shown = match tool {
        Tool::Mcp(m) => mcp_tool_name(m, args),
        _ => tool.name().to_string(),
    };
    Ok(ApprovalRequest {
        call_id: call.id.clone(),
        tool: shown,
        summary,
        preview,
        allow_always: !reach.recursive,
        from: env.conversation.to_string(),
        why_asked,
    })
}

/// What a call would do, in a line, and what it would write (when that helps decide).
fn summary(
    tool: &Tool,
    args: &Value,
    cwd: &std::path::Path,
) -> Result<(String, Option<String>), ToolError> {
    Ok(match tool {
        Tool::Builtin(b) => builtin::describe(b, args, cwd)?,
        Tool::Script(s) => (
            format!("run the script tool `{}` with {args}", s.path.display()),
            None,
        ),
        Tool::Mcp(m) => (
            format!(
                "call the MCP tool `{}` of the server `{}` with {}",
                mcp_tool_name(m, args),
                m.server.spec.name,
                mcp_arguments(m, args)
            ),
            None,
        ),
        Tool::User(u) => (format!("ask you ({})", u.name()), None),
        Tool::Agent(a) => (format!("manage sub-agents ({})", a.name()), None),
        Tool::Todo(t) => (format!("update the todo list ({})", t.name()), None),
        Tool::Skills(_) => ("read skills".to_string(), None),
        Tool::Lsp(l) => (format!("ask a language server ({})", l.name()), None),
        Tool::Memory(m) if !m.reads_only() => (
            format!(
                "remember in long-term memory{}",
                if args["daily"].as_bool() == Some(true) {
                    " (today's notes)"
                } else {
                    " (MEMORY.md)"
                }
            ),
            Some(args["fact"].as_str().unwrap_or_default().to_string()),
        ),
        Tool::Memory(m) => (format!("use long-term memory ({})", m.name()), None),
        Tool::Load(_) => ("load tool groups".to_string(), None),
    })
}

/// What the approver's answer means for the call; "always" is remembered for the rest of
/// the conversation where the question offered it.
fn settle(
    decision: Decision,
    request: &ApprovalRequest,
    policy: &mut Policy,
    always_key: String,
    admitted: Admitted,
) -> Result<Admitted, ToolError> {
    match decision {
        Decision::Approve => Ok(admitted),
        Decision::ApproveEdited(edited) => {
            fits_declared(&admitted.tool, &edited)?;
            Ok(Admitted {
                args: edited,
                ..admitted
            })
        }
        Decision::ApproveAlways => {
            if request.allow_always {
                policy.always.insert(always_key);
            }
            Ok(admitted)
        }
        Decision::Deny => Err(ToolError::Declined(None)),
        Decision::DenyWithMessage(message) => Err(ToolError::Declined(Some(message))),
        Decision::Cancel => Err(ToolError::Cancelled),
        Decision::Refuse(reason) => Err(ToolError::Refused(reason)),
    }
}

/// What the permission mode and rules say of a call that is not refused.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Permitted {
    /// Nothing: approval as usual.
    AsUsual,
    /// Run without asking (an allow rule; a file edit in accept-edits).
    Run,
    /// Ask, whatever else would let it run (an ask rule; in plan mode, an MCP tool its
    /// server says only reads): why, and what would change that.
    Ask(String),
}

/// The names rules and `deny_tools` know a call by: loki's, each Claude name that covers
/// it, and for an MCP tool (also one reached through `mcp__invoke_<server>`)
/// `<server>_<tool>` and `mcp__<server>__<tool>`.
fn rule_names(tool: &Tool, args: &Value) -> Vec<String> {
    let mut names = vec![tool.name().to_string()];
    match tool {
        Tool::Mcp(m) => {
            let inner = mcp_tool_name(m, args);
            let server = &m.server.spec.name;
            names.push(super::mcp_tools::function_name(&format!(
                "{server}_{inner}"
            )));
            names.push(format!("mcp__{server}__{inner}"));
        }
        // Every Claude name that covers it: `LS(…)` and `Glob(…)` both name `fs_ls`.
        other => names.extend(
            crate::claude_names::claude_names_of(other.name())
                .into_iter()
                .map(str::to_string),
        ),
    }
    names.dedup();
    names
}

/// The permission rules, the sandbox and the mode on a call: a deny rule refuses it
/// (even with yolo), and so does a path the sandbox or a `Read`/`Edit` rule keeps the
/// tool from; plan mode refuses anything that is not a read.
fn permitted(
    tool: &Tool,
    args: &Value,
    names: &[String],
    env: &ToolEnv<'_>,
    policy: &Policy,
) -> Result<Permitted, ToolError> {
    use crate::config::permissions::{PermissionMode, RuleCall, RuleVerdict};
    let cwd = env.cwd;
    let mode = policy.mode();
    fences::check(tool, args, env, &policy.rules)?;
    let verdict = if policy.rules.is_empty() {
        None
    } else {
        let touched = match tool {
            Tool::Builtin(b) if b.effect != Effect::Exec && b.effect != Effect::Network => {
                args["path"].as_str().map(|p| paths::resolve(cwd, p).path)
            }
            _ => None,
        };
        let shown = touched.as_ref().map(|p| paths::display(cwd, p));
        let call = RuleCall {
            names: names.to_vec(),
            args,
            is_command: matches!(tool, Tool::Builtin(b) if b.effect == Effect::Exec),
            path: shown.as_deref(),
            absolute: touched.as_deref(),
        };
        policy.rules.decide(&call)
    };
    if let Some(RuleVerdict::Deny(rule)) = &verdict {
        return Err(ToolError::Refused(format!(
            "denied by {}; do not retry it",
            policy.rules.describe(rule)
        )));
    }
    if mode == PermissionMode::Plan && !only_reads(tool) {
        // An MCP server's `readOnlyHint` is its own claim, not loki's knowledge: in plan
        // mode such a call is put to the user instead of running unasked.
        if let Tool::Mcp(m) = tool
            && !m.writes(args)
        {
            return Ok(Permitted::Ask(format!(
                "plan mode: the MCP server `{}` says `{}` only reads (readOnlyHint), but that \
                 is the server's own claim, so it is asked about; the user can leave plan mode \
                 to let it run",
                m.server.spec.name,
                mcp_tool_name(m, args)
            )));
        }
        return Err(ToolError::Refused(
            "plan mode: only tools that read run now. Investigate, then propose a plan; the \
             user switches modes to carry it out"
                .into(),
        ));
    }
    if let Some(RuleVerdict::Ask(said)) = &verdict {
        let is_rule = policy.rules.all().any(|r| r.text == *said);
        return Ok(Permitted::Ask(if is_rule {
            format!(
                "{} asks about it every time, even with --yolo or auto_approve_tools; to let \
                 it run unasked, change or remove that rule in {}",
                policy.rules.describe(said),
                policy.rules.origin(said)
            )
        } else {
            format!("{said}; it is asked about every time, even with --yolo")
        }));
    }
    let edit = matches!(tool, Tool::Builtin(b) if crate::config::permissions::FILE_EDITS.contains(&b.name));
    if matches!(verdict, Some(RuleVerdict::Allow(_)))
        || (mode == PermissionMode::AcceptEdits && edit)
    {
        return Ok(Permitted::Run);
    }
    Ok(Permitted::AsUsual)
}

/// Whether a call is known to have no effect beyond the conversation (what plan mode
/// lets run): loki's own reading tools. An MCP server's `readOnlyHint` is not knowledge
/// (see [`permitted`]); remembering writes to memory, which later conversations read.
fn only_reads(tool: &Tool) -> bool {
    match tool {
        Tool::Builtin(b) => b.effect == Effect::Read,
        Tool::Script(_) => false,
        Tool::Mcp(m) => matches!(m.action, Action::Search | Action::Describe),
        Tool::Memory(m) => m.reads_only(),
        Tool::User(_)
        | Tool::Agent(_)
        | Tool::Todo(_)
        | Tool::Skills(_)
        | Tool::Lsp(_)
        | Tool::Load(_) => true,
    }
}

/// The name of the tool an MCP function calls on its server: the tool itself, the
/// `tool` argument of `mcp__invoke_<server>`, or the function's own name.
fn mcp_tool_name(m: &McpTool, args: &Value) -> String {
    match &m.action {
        Action::Direct { tool, .. } => tool.clone(),
        Action::Invoke => args["tool"]
            .as_str()
            .map_or_else(|| m.name.clone(), str::to_string),
        Action::Search | Action::Describe => m.name.clone(),
    }
}

/// The arguments the MCP tool receives (for `mcp__invoke_<server>`, its `arguments`).
fn mcp_arguments(m: &McpTool, args: &Value) -> String {
    match (&m.action, args.get("arguments")) {
        (Action::Invoke, Some(inner)) => inner.to_string(),
        (Action::Invoke, None) => "no arguments".into(),
        _ => args.to_string(),
    }
}
