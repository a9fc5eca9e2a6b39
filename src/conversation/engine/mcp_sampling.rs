//! MCP sampling: a server asks the conversation's model to answer some messages while
//! one of its tools runs. The user sees what would be sent and agrees (an approval like a
//! tool call's: the terminal asks, `--yolo` and `auto_approve_tools: mcp_sampling` allow
//! it, a headless client answers the `tool_call_approval_requested` event); then the
//! conversation's model answers, without tools, and its usage joins the conversation's.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use crate::client::{ChatRequest, Provider};
use crate::mcp::client_side::SamplingError;
use crate::tool::approve::{ApprovalRequest, Approver};
use crate::tool::mcp_client::Sampler;
use loki_protocol::op::Decision;
use loki_wire::message::{Message, Role, Usage};
use loki_wire::provider_event::ProviderEvent;

/// The name approvals and `auto_approve_tools` know sampling by.
pub const TOOL: &str = "mcp_sampling";

/// Most characters of the preview shown for approval.
const PREVIEW: usize = 4000;

/// Answers the sampling requests of one tool round.
pub(super) struct Sampling<'a> {
    pub model: crate::client::Model,
    pub provider: std::sync::Arc<dyn Provider>,
    pub cancel: CancellationToken,
    pub approver: &'a dyn Approver,
    /// The conversation (labels the approval).
    pub from: String,
    /// What the answers cost, added to the conversation's usage after the round.
    pub usage: Mutex<Usage>,
    /// Requests so far (approval ids).
    pub count: AtomicUsize,
    /// `--yolo`, `auto_approve_tools: mcp_sampling`, or "always" earlier: no question.
    pub allowed: std::sync::atomic::AtomicBool,
    /// `deny_tools: mcp_sampling`: every request is refused.
    pub denied: bool,
    /// The agent run's budget: each answer is charged as it arrives, so a server that
    /// asks again and again is stopped when the budget is spent.
    pub budget: Option<std::sync::Arc<crate::usage::Budget>>,
    /// Set when an answer spent the budget (reported after the round).
    pub exhausted: Mutex<Option<crate::usage::Exhausted>>,
}

impl Sampling<'_> {
    async fn answer(&self, request: &ChatRequest) -> Result<String, SamplingError> {
        let mut stream = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => return Err(SamplingError::Cancelled),
            s = self.provider.chat(&self.model, request) => s?,
        };
        let mut text = String::new();
        loop {
            let next = tokio::select! {
                biased;
                _ = self.cancel.cancelled() => return Err(SamplingError::Cancelled),
                next = stream.next() => next,
            };
            match next {
                None => return Ok(text),
                Some(Err(e)) => return Err(e.into()),
                Some(Ok(batch)) => {
                    for event in batch {
                        match event {
                            ProviderEvent::Text(t) => text.push_str(&t),
                            ProviderEvent::Usage(u) => {
                                if let Ok(mut total) = self.usage.lock() {
                                    total.add(u);
                                }
                                let over = self
                                    .budget
                                    .as_ref()
                                    .and_then(|b| b.charge(&self.model.config, u));
                                if let (Some(over), Ok(mut slot)) = (over, self.exhausted.lock()) {
                                    slot.get_or_insert(over);
                                }
                            }
                            _ => {}
                        }
                    }
                }
            }
        }
    }
}

impl Sampler for Sampling<'_> {
    fn sample<'a>(
        &'a self,
        server: &'a str,
        system: Option<String>,
        messages: Vec<(String, String)>,
        max_tokens: u32,
    ) -> BoxFuture<'a, Result<(String, String), SamplingError>> {
        Box::pin(async move {
            let n = self.count.fetch_add(1, Ordering::Relaxed) + 1;
            let mut preview = String::new();
            if let Some(system) = &system {
                preview.push_str(&format!("system: {system}\n"));
            }
            for (role, text) in &messages {
                preview.push_str(&format!("{role}: {text}\n"));
            }
            if preview.chars().count() > PREVIEW {
                preview = preview.chars().take(PREVIEW).collect::<String>() + "…";
            }
            let approval = ApprovalRequest {
                call_id: format!("mcp-sampling-{}-{n}", self.from),
                tool: TOOL.into(),
                summary: format!(
                    "MCP server `{server}` asks {} to answer {} message(s) (at most {max_tokens} tokens)",
                    self.model.id(),
                    messages.len()
                ),
                preview: Some(preview),
                allow_always: true,
                from: self.from.clone(),
                why_asked: None,
            };
            if self.denied {
                return Err(SamplingError::Rejected);
            }
            if !self.allowed.load(Ordering::Relaxed) {
                match self.approver.approve(&approval).await {
                    Decision::Approve => {}
                    Decision::ApproveAlways => self.allowed.store(true, Ordering::Relaxed),
                    _ => return Err(SamplingError::Rejected),
                }
            }
            let mut conversation = Vec::with_capacity(messages.len() + 1);
            if let Some(system) = system {
                conversation.push(Message::text(Role::System, system));
            }
            for (role, text) in messages {
                let role = if role == "assistant" {
                    Role::Assistant
                } else {
                    Role::User
                };
                conversation.push(Message::text(role, text));
            }
            let request = ChatRequest {
                controls: Default::default(),
                messages: conversation,
                temperature: None,
                top_p: None,
                max_tokens: Some(u64::from(max_tokens.max(1))),
                stream: true,
                tools: Vec::new(),
            };
            let text = self.answer(&request).await?;
            Ok((text, self.model.id()))
        })
    }
}
