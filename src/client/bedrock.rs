//! AWS Bedrock's Converse API (`type: bedrock`): `POST /model/<id>/converse-stream` (or
//! `/converse`), signed with SigV4 (the `aws-sigv4` crate), answered in the AWS
//! event-stream binary framing (decoded by `aws-smithy-eventstream`, which checks both
//! CRCs). Each message carries `:event-type` and a JSON payload: `contentBlockStart`
//! (tool use), `contentBlockDelta` (text, tool input, reasoning), `messageStop`,
//! `metadata` (usage); exceptions arrive as `:message-type: exception`.

use std::collections::HashMap;
use std::time::SystemTime;

use bytes::BytesMut;
use serde_json::{Value, json};

use super::api_client::{Api, ApiClient, Credentials, HttpProvider};
use super::http::HttpSettings;
use super::wire::{self, Outgoing, ResponseError, Signed, WireFormat};
use super::{ChatRequest, Model, ProviderError};
use loki_wire::body_stream::{DecodeError, Decoder};
use loki_wire::message::{Role, Usage};
use loki_wire::provider_event::{FinishReason, ProviderEvent};

/// AWS credentials of a client.
#[derive(Clone)]
pub struct AwsCredentials {
    /// Access key id.
    pub access_key_id: String,
    /// Secret access key.
    pub secret_access_key: String,
    /// Session token of temporary credentials.
    pub session_token: Option<String>,
}

debug_without_secrets!(AwsCredentials, access_key_id);

/// Why a Bedrock client has no credentials to sign with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AwsCredentialsError {
    /// Neither the client's settings nor the environment name a key pair.
    #[error(
        "no AWS credentials: set access_key_id and secret_access_key for this client, or AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY"
    )]
    Missing,
}

/// Why a request could not be signed with SigV4.
#[derive(Debug, thiserror::Error)]
pub enum SigningError {
    /// The signing parameters are incomplete.
    #[error(transparent)]
    Params(#[from] aws_sigv4::sign::v4::signing_params::BuildError),
    /// The request cannot be signed (a bad URL or header).
    #[error(transparent)]
    Request(#[from] aws_sigv4::http_request::SigningError),
}

/// Who signs, for which region and service, at what time.
#[derive(Debug, Clone, Copy)]
pub struct SigningScope<'a> {
    /// Credentials.
    pub credentials: &'a AwsCredentials,
    /// AWS region.
    pub region: &'a str,
    /// Service name (`bedrock`).
    pub service: &'a str,
    /// Signing time.
    pub time: SystemTime,
}

/// Signs a request with SigV4 and returns the headers to add (`authorization`,
/// `x-amz-date`, and `x-amz-security-token` for temporary credentials).
pub fn sign(
    scope: SigningScope<'_>,
    method: &str,
    url: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> Result<Vec<(String, String)>, SigningError> {
    use aws_sigv4::http_request::{SignableBody, SignableRequest, SigningSettings};
    let SigningScope {
        credentials,
        region,
        service,
        time,
    } = scope;
    let identity = aws_credential_types::Credentials::new(
        credentials.access_key_id.clone(),
        credentials.secret_access_key.clone(),
        credentials.session_token.clone(),
        None,
        "loki",
    )
    .into();
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(service)
        .time(time)
        .settings(SigningSettings::default())
        .build()?
        .into();
    let signable = SignableRequest::new(
        method,
        url,
        headers.iter().map(|(n, v)| (n.as_str(), v.as_str())),
        SignableBody::Bytes(body),
    )?;
    let (instructions, _) = aws_sigv4::http_request::sign(signable, &params)?.into_parts();
    Ok(instructions
        .headers()
        .map(|(n, v)| (n.to_string(), v.to_string()))
        .collect())
}

/// What a Bedrock client needs.
#[derive(Debug, Clone)]
pub struct BedrockSetup {
    /// Endpoint (`https://bedrock-runtime.<region>.amazonaws.com` by default).
    pub api_base: String,
    /// Region signed for.
    pub region: String,
    /// Credentials, or the message saying how to provide them.
    pub credentials: Result<AwsCredentials, AwsCredentialsError>,
    /// Transport settings.
    pub settings: HttpSettings,
}

/// The Converse API: `/model/<id>/converse(-stream)`, every request signed with SigV4.
#[derive(Debug)]
pub struct Bedrock {
    region: String,
    credentials: Result<AwsCredentials, AwsCredentialsError>,
}

impl Bedrock {
    /// The provider; nothing is sent until the first request.
    pub fn provider(setup: BedrockSetup) -> HttpProvider<Self> {
        let api = Bedrock {
            region: setup.region,
            credentials: setup.credentials,
        };
        HttpProvider::new(&setup.api_base, setup.settings, Credentials::default(), api)
    }
}

impl Api for Bedrock {
    fn format(&self, _model: &Model) -> &dyn WireFormat {
        &ConverseWire
    }

    fn request(
        &self,
        client: &ApiClient,
        model: &Model,
        request: &ChatRequest,
        body: Value,
    ) -> Result<Outgoing, ProviderError> {
        if let Err(e) = &self.credentials {
            return Err(client.setup_error(e));
        }
        let action = if request.stream {
            "converse-stream"
        } else {
            "converse"
        };
        let model = encode_path_segment(model.real_name());
        let url = format!("{}/model/{model}/{action}", client.api_base());
        Ok(Outgoing::new(url, body))
    }

    /// The credentials travel only in the signature.
    fn sign(&self, url: &str, headers: &[(String, String)], body: &[u8]) -> Signed {
        // Without credentials `request` has refused already; nothing is signed then.
        let Ok(credentials) = &self.credentials else {
            return Ok(Vec::new());
        };
        let scope = SigningScope {
            credentials,
            region: &self.region,
            service: "bedrock",
            time: SystemTime::now(),
        };
        sign(scope, "POST", url, headers, body)
    }
}

/// Converse bodies; streamed answers in the AWS event-stream framing.
#[derive(Debug, Clone, Copy)]
pub struct ConverseWire;

impl WireFormat for ConverseWire {
    fn body(&self, model: &Model, request: &ChatRequest) -> Value {
        build_body(model, request)
    }

    fn streamed(&self, response: &reqwest::Response, _request: &ChatRequest) -> bool {
        wire::content_type_is(response, "application/vnd.amazon.eventstream")
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::<EventStream>::default()
    }

    fn parse(&self, body: &[u8]) -> Result<Vec<ProviderEvent>, ResponseError> {
        parse_response(body)
    }
}

/// Percent-encodes a model id for the path (`:` in `…-v1:0` included).
fn encode_path_segment(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Builds the Converse request body.
pub fn build_body(model: &Model, request: &ChatRequest) -> Value {
    super::effort::ignored(request.controls.effort, "Bedrock");
    let messages = super::system_quirks(&request.messages, model);
    let system: Vec<Value> = messages
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| json!({"text": m.text_content()}))
        .collect();
    let mut body = json!({"messages": wire::block_turns(&messages, &BLOCKS)});
    if !system.is_empty() {
        body["system"] = Value::Array(system);
    }
    let mut inference = serde_json::Map::new();
    if let Some(max) = request.max_tokens.or(model.config.max_output_tokens) {
        inference.insert("maxTokens".into(), json!(max));
    }
    if let Some(t) = request.temperature {
        inference.insert("temperature".into(), json!(t));
    }
    if let Some(p) = request.top_p {
        inference.insert("topP".into(), json!(p));
    }
    if !inference.is_empty() {
        body["inferenceConfig"] = Value::Object(inference);
    }
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .map(|t| json!({"toolSpec": {"name": t.name, "description": t.description, "inputSchema": {"json": t.parameters}}}))
        .collect();
    // Bedrock refuses a history with tool blocks unless toolConfig is present; tools used
    // earlier but not offered now are declared with an open schema.
    let mut named: Vec<&str> = Vec::new();
    for call in messages.iter().flat_map(|m| &m.tool_calls) {
        let offered = request.tools.iter().any(|t| t.name == call.name);
        if !offered && !named.contains(&call.name.as_str()) {
            named.push(&call.name);
            tools.push(json!({"toolSpec": {"name": call.name, "description": "(used earlier in this conversation)", "inputSchema": {"json": {"type": "object"}}}}));
        }
    }
    if !tools.is_empty() {
        body["toolConfig"] = json!({"tools": tools});
    }
    body
}

/// Converse's content blocks (see [`wire::block_turns`]).
const BLOCKS: wire::Blocks = wire::Blocks {
    text: |text| json!({"text": text}),
    image: image_block,
    reasoning: |r| {
        let text = json!({"text": r.text, "signature": r.signature});
        json!({"reasoningContent": {"reasoningText": text}})
    },
    tool_use: |call, input| {
        let (id, name) = (&call.id, &call.name);
        json!({"toolUse": {"toolUseId": id, "name": name, "input": input}})
    },
    tool_result: |id, text| json!({"toolResult": {"toolUseId": id, "content": [{"text": text}]}}),
};

/// Bedrock takes image bytes only; a web URL is passed on as text.
fn image_block(url: &str) -> Value {
    if let Some((mime, data)) = wire::inline_image(url) {
        let format = mime.strip_prefix("image/").unwrap_or("png");
        let format = if format == "jpg" { "jpeg" } else { format };
        return json!({"image": {"format": format, "source": {"bytes": data}}});
    }
    json!({"text": format!("[image: {url}]")})
}

fn usage_of(usage: &Value) -> Usage {
    let n = |key: &str| usage[key].as_u64().unwrap_or(0);
    Usage {
        estimated: false,
        input_tokens: n("inputTokens") + n("cacheReadInputTokens") + n("cacheWriteInputTokens"),
        output_tokens: n("outputTokens"),
        cached_tokens: n("cacheReadInputTokens"),
    }
}

fn finish_of(reason: &str) -> FinishReason {
    match reason {
        "end_turn" | "stop_sequence" => FinishReason::Stop,
        "tool_use" => FinishReason::ToolCalls,
        "max_tokens" => FinishReason::Length,
        "guardrail_intervened" | "content_filtered" => FinishReason::ContentFilter,
        other => FinishReason::Other(other.to_string()),
    }
}

/// Event-stream decoding state.
#[derive(Debug, Default)]
pub struct EventStream {
    buffer: BytesMut,
    frames: aws_smithy_eventstream::frame::MessageFrameDecoder,
    /// The declared length of the frame being received has been checked.
    in_frame: bool,
    /// Largest accepted frame, in bytes.
    max_frame: Option<usize>,
    /// Content block index → tool call index.
    tool_blocks: HashMap<u64, usize>,
    stopped: bool,
}

fn header<'a>(message: &'a aws_smithy_types::event_stream::Message, name: &str) -> &'a str {
    message
        .headers()
        .iter()
        .find(|h| h.name().as_str() == name)
        .and_then(|h| h.value().as_string().ok())
        .map_or("", |s| s.as_str())
}

impl EventStream {
    /// Bytes held for the frame being received.
    pub fn buffered(&self) -> usize {
        self.buffer.len()
    }

    fn message(
        &mut self,
        message: &aws_smithy_types::event_stream::Message,
        out: &mut Vec<ProviderEvent>,
    ) -> Result<(), DecodeError> {
        let payload = String::from_utf8_lossy(message.payload());
        if header(message, ":message-type") == "exception" {
            let value: Value = serde_json::from_str(&payload).unwrap_or_default();
            let text = value["message"]
                .as_str()
                .or_else(|| value["Message"].as_str())
                .unwrap_or(&payload);
            return Err(DecodeError::Upstream(format!(
                "{}: {text}",
                header(message, ":exception-type")
            )));
        }
        let value = wire::parse_json(&payload)?;
        let block = value["contentBlockIndex"].as_u64().unwrap_or(0);
        match header(message, ":event-type") {
            "contentBlockStart" => {
                if let Some(tool) = value["start"].get("toolUse") {
                    let index = self.tool_blocks.len();
                    self.tool_blocks.insert(block, index);
                    let (id, name) = (tool["toolUseId"].as_str(), tool["name"].as_str());
                    out.push(wire::call_started(index, id, name, ""));
                }
            }
            "contentBlockDelta" => {
                let delta = &value["delta"];
                if let Some(text) = delta["text"].as_str() {
                    out.push(ProviderEvent::Text(text.to_string()));
                } else if let Some(input) = delta["toolUse"]["input"].as_str() {
                    if let Some(&index) = self.tool_blocks.get(&block) {
                        out.push(wire::call_arguments(index, input));
                    }
                } else if let Some(text) = delta["reasoningContent"]["text"].as_str() {
                    out.push(ProviderEvent::Reasoning(text.to_string()));
                } else if let Some(sig) = delta["reasoningContent"]["signature"].as_str() {
                    out.push(ProviderEvent::ReasoningSignature(sig.to_string()));
                }
            }
            "messageStop" => {
                out.push(ProviderEvent::Finish(finish_of(
                    value["stopReason"].as_str().unwrap_or("end_turn"),
                )));
                self.stopped = true;
            }
            "metadata" => out.push(ProviderEvent::Usage(usage_of(&value["usage"]))),
            _ => {} // messageStart, contentBlockStop
        }
        Ok(())
    }
}

impl Decoder for EventStream {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        use aws_smithy_eventstream::frame::DecodedFrame;
        self.buffer.extend_from_slice(bytes);
        loop {
            // A frame starts with its total length: refuse an oversized one before waiting
            // for (and buffering) its bytes.
            if !self.in_frame && self.buffer.len() >= 4 {
                let mut declared = [0u8; 4];
                declared.copy_from_slice(&self.buffer[..4]);
                let declared = u32::from_be_bytes(declared) as usize;
                if let Some(limit) = self.max_frame
                    && declared > limit
                {
                    return Err(DecodeError::TooLarge(limit));
                }
                self.in_frame = true;
            }
            match self.frames.decode_frame(&mut self.buffer) {
                Ok(DecodedFrame::Complete(message)) => {
                    self.in_frame = false;
                    self.message(&message, out)?;
                }
                Ok(DecodedFrame::Incomplete) => return Ok(()),
                Err(e) => {
                    return Err(DecodeError::Malformed(format!(
                        "bad event-stream frame: {e}"
                    )));
                }
            }
        }
    }

    fn finish(&mut self, _out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        Ok(())
    }

    fn set_max_event(&mut self, max: Option<usize>) {
        self.max_frame = max;
    }

    fn complete(&self) -> bool {
        self.stopped
    }
}

/// Parses a whole Converse response.
pub fn parse_response(bytes: &[u8]) -> Result<Vec<ProviderEvent>, ResponseError> {
    let value: Value = serde_json::from_slice(bytes)?;
    let mut out = Vec::new();
    let mut calls = 0;
    for block in value["output"]["message"]["content"]
        .as_array()
        .into_iter()
        .flatten()
    {
        if let Some(text) = block["text"].as_str() {
            out.push(ProviderEvent::Text(text.to_string()));
        } else if let Some(tool) = block.get("toolUse") {
            let (id, name) = (tool["toolUseId"].as_str(), tool["name"].as_str());
            let arguments = tool["input"].to_string();
            out.push(wire::call_started(calls, id, name, arguments));
            calls += 1;
        } else if let Some(text) = block["reasoningContent"]["reasoningText"]["text"].as_str() {
            out.push(ProviderEvent::Reasoning(text.to_string()));
        }
    }
    out.push(ProviderEvent::Usage(usage_of(&value["usage"])));
    out.push(ProviderEvent::Finish(finish_of(
        value["stopReason"].as_str().unwrap_or("end_turn"),
    )));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use loki_wire::message::Message;

    #[test]
    fn signatures_match_the_aws_test_suite() {
        let vectors: Vec<Value> =
            serde_json::from_str(include_str!("../../tests/data/sigv4_vectors.json")).unwrap();
        let credentials = AwsCredentials {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            session_token: None,
        };
        // 2015-08-30T12:36:00Z
        let time = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_440_938_160);
        assert!(vectors.len() >= 4);
        for case in vectors {
            let headers: Vec<(String, String)> = case["headers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| (h[0].as_str().unwrap().into(), h[1].as_str().unwrap().into()))
                .filter(|(n, _): &(String, String)| !n.eq_ignore_ascii_case("x-amz-date"))
                .collect();
            let scope = SigningScope {
                credentials: &credentials,
                region: "us-east-1",
                service: "service",
                time,
            };
            let added = sign(
                scope,
                case["method"].as_str().unwrap(),
                case["url"].as_str().unwrap(),
                &headers,
                case["body"].as_str().unwrap().as_bytes(),
            )
            .unwrap();
            let authorization = added
                .iter()
                .find(|(n, _)| n == "authorization")
                .map(|(_, v)| v.as_str());
            assert_eq!(
                authorization,
                case["authorization"].as_str(),
                "case {}",
                case["name"]
            );
        }
    }

    #[test]
    fn tools_from_the_history_are_declared_when_none_are_offered() {
        let mut assistant = Message::text(Role::Assistant, "");
        assistant.tool_calls.push(loki_wire::message::ToolCall {
            id: "t1".into(),
            name: "fs_read".into(),
            arguments: "{}".into(),
            signature: None,
        });
        let mut result = Message::text(Role::Tool, "x");
        result.tool_call_id = Some("t1".into());
        let request = ChatRequest {
            messages: vec![Message::text(Role::User, "hi"), assistant, result],
            ..ChatRequest::default()
        };
        let model = Model {
            client: "bedrock".into(),
            config: crate::config::clients::ModelConfig::default(),
        };
        let body = build_body(&model, &request);
        assert_eq!(
            body["toolConfig"]["tools"][0]["toolSpec"]["name"],
            "fs_read"
        );
        let plain = build_body(
            &model,
            &ChatRequest {
                messages: vec![Message::text(Role::User, "hi")],
                ..ChatRequest::default()
            },
        );
        assert!(plain.get("toolConfig").is_none());
    }

    #[test]
    fn model_ids_are_path_encoded() {
        assert_eq!(
            encode_path_segment("anthropic.claude-3-5-sonnet-20240620-v1:0"),
            "anthropic.claude-3-5-sonnet-20240620-v1%3A0"
        );
    }
}
