//! Provider-neutral conversation messages.
//!
//! The serialised form follows the OpenAI chat format (`role`, `content` as a string or a
//! list of parts, `tool_calls`, `tool_call_id`) because sessions store it and people read
//! and edit those files. Each wire module converts from these types; none of them leak
//! vendor fields back in here.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Instructions (role prompt, agent instructions).
    System,
    /// The person.
    User,
    /// The model.
    Assistant,
    /// A tool result answering an assistant tool call.
    Tool,
}

/// One message of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// The author.
    pub role: Role,
    /// Text or parts.
    pub content: Content,
    /// Tool calls the assistant made (assistant messages only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// The call this message answers (tool messages only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    /// The answer was cut short by the user (assistant messages only). Kept for the
    /// person reading the conversation; never sent to a provider.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interrupted: bool,
    /// Signed reasoning that came with the assistant's tool calls; providers with extended
    /// thinking (Anthropic, Bedrock) need it back in the same turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<SignedReasoning>,
}

/// Reasoning text and the provider's signature over it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignedReasoning {
    /// The thinking text.
    pub text: String,
    /// Opaque signature.
    pub signature: String,
}

impl Message {
    /// A plain text message.
    pub fn text(role: Role, text: impl Into<String>) -> Self {
        Self {
            role,
            content: Content::Text(Text::from(text.into())),
            tool_calls: Vec::new(),
            tool_call_id: None,
            interrupted: false,
            reasoning: None,
        }
    }

    /// Appends text to a plain-text message (used by `.continue`).
    pub fn append_text(&mut self, more: &str) {
        match &mut self.content {
            Content::Text(t) => *t = Text::from(format!("{t}{more}")),
            Content::Parts(parts) => parts.push(ContentPart::Text {
                text: more.to_string(),
            }),
        }
    }

    /// The text of the message; image parts are skipped.
    pub fn text_content(&self) -> String {
        match &self.content {
            Content::Text(t) => t.to_string(),
            Content::Parts(parts) => parts
                .iter()
                .filter_map(|p| match p {
                    ContentPart::Text { text } => Some(text.as_str()),
                    ContentPart::ImageUrl { .. } => None,
                })
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

/// A message's text, shared: the history, the session's merge baseline and each request
/// built from them hold the same text instead of a copy each (a long session's messages
/// would otherwise be copied four times over for every request).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Text(Arc<str>);

impl std::ops::Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.0, f)
    }
}

impl std::fmt::Display for Text {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        Self(Arc::from(text))
    }
}

impl From<&str> for Text {
    fn from(text: &str) -> Self {
        Self(Arc::from(text))
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        &*self.0 == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        &*self.0 == *other
    }
}

impl Serialize for Text {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

/// Message content.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Content {
    /// Plain text.
    Text(Text),
    /// Text and images.
    Parts(Vec<ContentPart>),
}

/// Text, or a list of parts; a bad value says which of the two was expected (an untagged
/// derive would only say that it "did not match any variant"). Numbers and booleans, as a
/// hand-edited session file may hold, are taken as their text; `null` as empty text.
impl<'de> Deserialize<'de> for Content {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = Content;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(
                    "text, or a list of parts such as `{type: text, text: ...}` or \
                     `{type: image_url, image_url: {url: ...}}`",
                )
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Content, E> {
                Ok(Content::Text(Text::from(v)))
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Content, E> {
                Ok(Content::Text(Text::from(v)))
            }
            fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<Content, E> {
                Ok(Content::Text(Text::from(v.to_string())))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Content, E> {
                Ok(Content::Text(Text::from(v.to_string())))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Content, E> {
                Ok(Content::Text(Text::from(v.to_string())))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Content, E> {
                Ok(Content::Text(Text::from(v.to_string())))
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Content, E> {
                Ok(Content::Text(Text::default()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Content, A::Error> {
                let mut parts = Vec::new();
                while let Some(part) = seq.next_element::<ContentPart>()? {
                    parts.push(part);
                }
                Ok(Content::Parts(parts))
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// One part of a multi-part message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image, as a `data:` URL or an `https:` URL.
    ImageUrl {
        /// `{ url }`.
        image_url: ImageUrl,
    },
}

/// The `image_url` object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageUrl {
    /// `data:image/png;base64,...` or a web URL.
    pub url: String,
}

/// A function call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider-assigned id the result must echo.
    pub id: String,
    /// Function name.
    pub name: String,
    /// Arguments as JSON text, exactly as the model produced them.
    pub arguments: String,
    /// An opaque token some providers attach to a call and need back with the history
    /// (Gemini's `thoughtSignature`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
}

/// Token accounting of one provider response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    pub input_tokens: u64,
    /// Completion tokens (including reasoning).
    pub output_tokens: u64,
    /// Prompt tokens served from the provider's cache.
    pub cached_tokens: u64,
    /// Counted by loki, not reported by the provider (a stream that ended without usage).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub estimated: bool,
}

impl Usage {
    /// Adds another response's usage to this one.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cached_tokens += other.cached_tokens;
        self.estimated |= other.estimated;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialises_in_openai_shape() {
        let m = Message {
            role: Role::User,
            content: Content::Parts(vec![
                ContentPart::Text { text: "hi".into() },
                ContentPart::ImageUrl {
                    image_url: ImageUrl {
                        url: "data:image/png;base64,AA==".into(),
                    },
                },
            ]),
            tool_calls: vec![],
            tool_call_id: None,
            interrupted: false,
            reasoning: None,
        };
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":{"url":"data:image/png;base64,AA=="}}]})
        );
        let back: Message = serde_json::from_value(json).unwrap();
        assert_eq!(back, m);
        assert_eq!(back.text_content(), "hi");
    }
}
