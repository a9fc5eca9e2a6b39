//! What the editor sees of a turn: loki's events as `session/update` notifications
//! (message and thought chunks, tool calls with their status and diffs, the todo list as
//! a plan), and approvals as `session/request_permission` requests.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::Editor;
use crate::config::permissions::FILE_EDITS;
use crate::tool::EditorError;
use crate::tool::approve::{ApprovalRequest, Approver};
use crate::tool::todo::TodoList;
use loki_protocol::emitter::Emitter;
use loki_protocol::event::Envelope;
use loki_protocol::event::Event;
use loki_protocol::op::Decision;

/// Most characters of a tool's result shown in the editor.
const RESULT_PREVIEW: usize = 8000;

/// The turn's events, sent to the editor as one session's updates.
pub(super) struct Updates {
    peer: Arc<Editor>,
    session: String,
    pub cwd: PathBuf,
    /// The conversation's todo list, sent as the plan when a todo tool changed it.
    todo: Arc<Mutex<TodoList>>,
    /// The diff shown when an edit's call started, by call id: the editor replaces a
    /// call's content with each update's, so the final one carries the diff again (the
    /// file is written by then, and a diff made now would show no change).
    diffs: Mutex<HashMap<String, Value>>,
    /// The plan last sent: `None` until one was, so an empty list never clears a plan
    /// the editor shows unless a list was sent and then really emptied.
    plan_sent: Mutex<Option<Vec<Value>>>,
}

impl Updates {
    pub(super) fn new(
        peer: Arc<Editor>,
        session: String,
        cwd: PathBuf,
        todo: Arc<Mutex<TodoList>>,
    ) -> Self {
        Self {
            peer,
            session,
            cwd,
            todo,
            diffs: Mutex::default(),
            plan_sent: Mutex::default(),
        }
    }

    /// Sends one `session/update` of this session.
    pub(super) fn update(&self, update: Value) {
        let params = json!({"sessionId": self.session, "update": update});
        let _ = self.peer.notify("session/update", params);
    }

    /// Sends the todo list as the plan when it differs from the plan last sent (a
    /// `todo__list` changes nothing; a list emptied after one was sent clears it).
    pub(super) fn plan(&self) {
        let entries = plan_entries(&self.todo.lock().unwrap_or_else(PoisonError::into_inner));
        let mut sent = self
            .plan_sent
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let unchanged = match sent.as_ref() {
            Some(last) => *last == entries,
            None => entries.is_empty(),
        };
        if unchanged {
            return;
        }
        self.update(json!({"sessionUpdate": "plan", "entries": entries}));
        *sent = Some(entries);
    }

    /// The `tool_call` of a call that starts: its title, kind, input, location, and the
    /// diff of an edit (kept for the final update).
    fn started(&self, call: &loki_protocol::event::ToolCallStarted) {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let mut update = json!({
            "sessionUpdate": "tool_call",
            "toolCallId": call.call_id,
            "title": title(&call.name, &args),
            "kind": kind(&call.name),
            "status": "in_progress",
            "rawInput": args,
        });
        if let Some(path) = args["path"].as_str() {
            update["locations"] = json!([{"path": absolute(&self.cwd, path)}]);
        }
        if let Some(diff) = diff(&self.cwd, &call.name, &args) {
            update["content"] = json!([diff]);
            self.diffs
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(call.call_id.clone(), diff);
        }
        self.update(update);
    }

    /// The final `tool_call_update`: its status and result, after the edit's diff.
    fn finished(&self, done: &loki_protocol::event::ToolCallFinished) {
        let shown: String = done.result.chars().take(RESULT_PREVIEW).collect();
        self.update(json!({
            "sessionUpdate": "tool_call_update",
            "toolCallId": done.call_id,
            "status": if done.ok { "completed" } else { "failed" },
            "content": self.content(&done.call_id, &shown, true),
        }));
        // A todo tool that failed (or was not offered) changed nothing.
        if done.ok && done.name.starts_with("todo__") {
            self.plan();
        }
    }

    /// A call's content for an update: its edit's diff, if it has one, then `text` (the
    /// editor replaces the whole content with each update's). `last`: the call is over
    /// and its diff no longer kept.
    fn content(&self, call_id: &str, text: &str, last: bool) -> Vec<Value> {
        let mut diffs = self.diffs.lock().unwrap_or_else(PoisonError::into_inner);
        let diff = if last {
            diffs.remove(call_id)
        } else {
            diffs.get(call_id).cloned()
        };
        diff.into_iter().chain([text_content(text)]).collect()
    }
}

/// The todo list as ACP plan entries, in order.
fn plan_entries(list: &TodoList) -> Vec<Value> {
    list.items
        .iter()
        .map(|item| {
            let status = if item.done { "completed" } else { "pending" };
            json!({"content": item.desc, "priority": "medium", "status": status})
        })
        .collect()
}

impl Emitter for Updates {
    fn emit(&self, envelope: Envelope) {
        // A sub-agent's events stay inside its tool call (`agent__*`).
        if envelope.parent.is_some() {
            return;
        }
        match envelope.event {
            Event::AssistantDelta(delta) => self.update(json!({
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": "text", "text": delta.text},
            })),
            Event::ReasoningDelta(delta) => self.update(json!({
                "sessionUpdate": "agent_thought_chunk",
                "content": {"type": "text", "text": delta.text},
            })),
            Event::ToolCallStarted(call) => self.started(&call),
            Event::ToolCallProgress(progress) => self.update(json!({
                "sessionUpdate": "tool_call_update",
                "toolCallId": progress.call_id,
                "content": self.content(&progress.call_id, &progress.message, false),
            })),
            Event::ToolCallFinished(done) => self.finished(&done),
            _ => {}
        }
    }
}

fn text_content(text: &str) -> Value {
    json!({"type": "content", "content": {"type": "text", "text": text}})
}

fn absolute(cwd: &Path, path: &str) -> String {
    cwd.join(path).display().to_string()
}

/// What kind of tool the editor shows (its icon, whether it follows locations).
pub(super) fn kind(tool: &str) -> &'static str {
    match tool {
        "fs_cat" | "fs_ls" | "fs_read" | "load_skills" => "read",
        t if FILE_EDITS.contains(&t) => "edit",
        "fs_rm" => "delete",
        "fs_glob" | "fs_grep" | "web_search" => "search",
        "execute_command" => "execute",
        "fetch_url" | "web_fetch" => "fetch",
        t if t.starts_with("todo__") => "think",
        _ => "other",
    }
}

/// One line naming the call: the command, the path, or the tool.
pub(super) fn title(tool: &str, args: &Value) -> String {
    let detail = ["command", "path", "url", "query", "pattern"]
        .iter()
        .find_map(|key| args[key].as_str());
    match detail {
        Some(detail) => {
            let line = detail.lines().next().unwrap_or_default();
            format!("{tool}: {line}")
        }
        None => tool.to_string(),
    }
}

/// A whole-file write or an exact-string edit shown as a diff against what the file
/// holds now.
fn diff(cwd: &Path, tool: &str, args: &Value) -> Option<Value> {
    let path = args["path"].as_str()?;
    let full = cwd.join(path);
    let old = crate::atomic_file::read_regular_text(&full, crate::atomic_file::MAX_OWN_FILE).ok();
    let new_text = match tool {
        "fs_write" => args["contents"].as_str()?.to_string(),
        "fs_edit" => {
            let (from, to) = (args["old_string"].as_str()?, args["new_string"].as_str()?);
            if from.is_empty() {
                return None;
            }
            let text = old.as_deref()?;
            if args["replace_all"].as_bool() == Some(true) {
                text.replace(from, to)
            } else {
                text.replacen(from, to, 1)
            }
        }
        _ => return None,
    };
    Some(json!({
        "type": "diff",
        "path": full.display().to_string(),
        "oldText": old,
        "newText": new_text,
    }))
}

/// The editor's buffers through its `fs/read_text_file` and `fs/write_text_file`, where it
/// offered them.
pub(super) struct EditorFiles {
    pub peer: Arc<Editor>,
    pub session: String,
    pub read: bool,
    pub write: bool,
}

impl crate::tool::EditorFiles for EditorFiles {
    fn read<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, Result<String, EditorError>> {
        Box::pin(async move {
            if !self.read {
                return Err(EditorError::NotOffered);
            }
            let params = json!({"sessionId": self.session, "path": path.display().to_string()});
            let answer = self
                .peer
                .request("fs/read_text_file", params)
                .await
                .map_err(|e| EditorError::Failed(e.to_string()))?;
            answer["content"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| EditorError::Failed("no content".into()))
        })
    }

    fn write<'a>(
        &'a self,
        path: &'a Path,
        text: &'a str,
    ) -> BoxFuture<'a, Result<(), EditorError>> {
        Box::pin(async move {
            if !self.write {
                return Err(EditorError::NotOffered);
            }
            let params = json!({
                "sessionId": self.session,
                "path": path.display().to_string(),
                "content": text,
            });
            self.peer
                .request("fs/write_text_file", params)
                .await
                .map(|_| ())
                .map_err(|e| EditorError::Failed(e.to_string()))
        })
    }
}

/// Approvals asked of the person at the editor: `session/request_permission` with allow
/// once, allow always (where it may be offered) and reject.
pub(super) struct EditorApprover {
    pub peer: Arc<Editor>,
    pub session: String,
}

impl Approver for EditorApprover {
    fn approve<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, Decision> {
        Box::pin(async move {
            let mut options =
                vec![json!({"optionId": "allow_once", "name": "Allow", "kind": "allow_once"})];
            if request.allow_always {
                options.push(json!({"optionId": "allow_always", "name": "Always allow", "kind": "allow_always"}));
            }
            options
                .push(json!({"optionId": "reject_once", "name": "Reject", "kind": "reject_once"}));
            let mut tool_call = json!({
                "toolCallId": request.call_id,
                "title": request.text().lines().next().unwrap_or_default(),
                "kind": kind(&request.tool),
                "status": "pending",
            });
            // The whole of what would run, not only the title's first line.
            let mut shown = vec![text_content(&request.summary)];
            if let Some(preview) = &request.preview {
                shown.push(text_content(preview));
            }
            tool_call["content"] = Value::Array(shown);
            let params = json!({
                "sessionId": self.session,
                "toolCall": tool_call,
                "options": options,
            });
            match self
                .peer
                .request("session/request_permission", params)
                .await
            {
                Ok(answer) => decision(&answer),
                Err(e) => Decision::Refuse(format!(
                    "the editor did not answer the permission request ({e}); do not retry it"
                )),
            }
        })
    }
}

/// The editor's answer as a decision.
fn decision(answer: &Value) -> Decision {
    let outcome = &answer["outcome"];
    match (outcome["outcome"].as_str(), outcome["optionId"].as_str()) {
        (Some("selected"), Some("allow_once")) => Decision::Approve,
        (Some("selected"), Some("allow_always")) => Decision::ApproveAlways,
        (Some("cancelled"), _) => Decision::Cancel,
        _ => Decision::Deny,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_map_to_decisions() {
        let selected = |id: &str| json!({"outcome": {"outcome": "selected", "optionId": id}});
        assert_eq!(decision(&selected("allow_once")), Decision::Approve);
        assert_eq!(decision(&selected("allow_always")), Decision::ApproveAlways);
        assert_eq!(decision(&selected("reject_once")), Decision::Deny);
        assert_eq!(decision(&selected("nonsense")), Decision::Deny);
        assert_eq!(
            decision(&json!({"outcome": {"outcome": "cancelled"}})),
            Decision::Cancel
        );
        assert_eq!(decision(&json!(null)), Decision::Deny);
    }

    #[test]
    fn calls_are_titled_and_kinded() {
        let args = json!({"command": "git status\nrm -rf /"});
        assert_eq!(
            title("execute_command", &args),
            "execute_command: git status"
        );
        assert_eq!(kind("execute_command"), "execute");
        assert_eq!(kind("fs_write"), "edit");
        assert_eq!(title("todo__add", &json!({})), "todo__add");
    }
}
