//! Vertex AI (`type: vertexai`): Gemini models through `publishers/google` (the Gemini
//! wire format), Claude through `publishers/anthropic` (`rawPredict` with the Messages
//! format and `anthropic_version: vertex-2023-10-16`), and Mistral through
//! `publishers/mistralai` (the OpenAI format). Authenticated with a Google Cloud access
//! token from application-default credentials, cached until it expires.

use std::path::PathBuf;
use std::sync::OnceLock;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};

use super::api_client::{Api, ApiClient, Credentials, HttpProvider};
use super::claude::CLAUDE_WIRE;
use super::gemini::{GEMINI_WIRE, method_url};
use super::google_auth::{self, TokenSource};
use super::http::HttpSettings;
use super::openai::OpenAiWire;
use super::wire::{Outgoing, WireFormat};
use super::{ChatRequest, Model, ProviderError};

/// The Anthropic API version Vertex expects in the body.
const VERTEX_ANTHROPIC_VERSION: &str = "vertex-2023-10-16";

/// Why a Vertex AI client cannot send requests.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VertexSetupError {
    /// No Google Cloud project configured.
    #[error("set `project_id` for this client (or {env} / GOOGLE_CLOUD_PROJECT)")]
    NoProject {
        /// The client's own project variable.
        env: String,
    },
    /// No credentials file found.
    #[error("no Google credentials: set `adc_file` or GOOGLE_APPLICATION_CREDENTIALS")]
    NoCredentials,
    /// The credentials file cannot be used.
    #[error(transparent)]
    Credentials(#[from] google_auth::GoogleAuthError),
}

/// What a Vertex AI client needs.
#[derive(Debug, Clone)]
pub struct VertexSetup {
    /// Endpoint root (`https://<location>-aiplatform.googleapis.com`).
    pub api_base: String,
    /// Google Cloud project, or the message saying how to set it.
    pub project: Result<String, VertexSetupError>,
    /// Region or `global`.
    pub location: String,
    /// Credentials file.
    pub adc_file: Option<PathBuf>,
    /// Transport settings.
    pub settings: HttpSettings,
}

/// Vertex AI: each publisher's models under the project's location, with a Google Cloud
/// access token.
#[derive(Debug)]
pub struct Vertex {
    project: Result<String, VertexSetupError>,
    location: String,
    adc_file: Option<PathBuf>,
    tokens: OnceLock<Result<TokenSource, VertexSetupError>>,
}

/// Which publisher serves a model, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Publisher {
    Google,
    Anthropic,
    Mistral,
}

impl Publisher {
    fn path(self) -> &'static str {
        match self {
            Publisher::Google => "google",
            Publisher::Anthropic => "anthropic",
            Publisher::Mistral => "mistralai",
        }
    }
}

fn publisher_of(model: &str) -> Publisher {
    if model.starts_with("claude") {
        Publisher::Anthropic
    } else if model.starts_with("mistral") || model.starts_with("codestral") {
        Publisher::Mistral
    } else {
        Publisher::Google
    }
}

/// The default endpoint for a location.
pub fn default_api_base(location: &str) -> String {
    if location == "global" {
        "https://aiplatform.googleapis.com".into()
    } else {
        format!("https://{location}-aiplatform.googleapis.com")
    }
}

impl Vertex {
    /// The provider; credentials are read on the first request.
    pub fn provider(setup: VertexSetup) -> HttpProvider<Self> {
        let api = Vertex {
            project: setup.project,
            location: setup.location,
            adc_file: setup.adc_file,
            tokens: OnceLock::new(),
        };
        HttpProvider::new(&setup.api_base, setup.settings, Credentials::default(), api)
    }
}

/// Mistral on Vertex takes the plain chat-completions body.
const MISTRAL_WIRE: OpenAiWire = OpenAiWire {
    stream_usage: false,
    max_completion_tokens: false,
};

impl Api for Vertex {
    fn format(&self, model: &Model) -> &dyn WireFormat {
        match publisher_of(model.real_name()) {
            Publisher::Google => &GEMINI_WIRE,
            Publisher::Anthropic => &CLAUDE_WIRE,
            Publisher::Mistral => &MISTRAL_WIRE,
        }
    }

    fn request(
        &self,
        client: &ApiClient,
        model: &Model,
        request: &ChatRequest,
        mut body: Value,
    ) -> Result<Outgoing, ProviderError> {
        let project = self.project.as_ref().map_err(|e| client.setup_error(e))?;
        let publisher = publisher_of(model.real_name());
        let model_url = format!(
            "{}/v1/projects/{project}/locations/{}/publishers/{}/models/{}",
            client.api_base(),
            self.location,
            publisher.path(),
            model.real_name()
        );
        if publisher == Publisher::Google {
            return Ok(Outgoing::new(method_url(&model_url, request.stream), body));
        }
        if publisher == Publisher::Anthropic
            && let Some(obj) = body.as_object_mut()
        {
            obj.remove("model");
            obj.insert("anthropic_version".into(), json!(VERTEX_ANTHROPIC_VERSION));
        }
        let method = if request.stream {
            "streamRawPredict"
        } else {
            "rawPredict"
        };
        Ok(Outgoing::new(format!("{model_url}:{method}"), body))
    }

    fn authorize<'a>(
        &'a self,
        client: &'a ApiClient,
        outgoing: Outgoing,
    ) -> BoxFuture<'a, Result<Outgoing, ProviderError>> {
        Box::pin(async move {
            let tokens = self
                .tokens
                .get_or_init(|| {
                    let path = self
                        .adc_file
                        .clone()
                        .ok_or(VertexSetupError::NoCredentials)?;
                    Ok(TokenSource::new(google_auth::load(&path)?))
                })
                .as_ref()
                .map_err(|e| client.setup_error(e))?;
            let token = tokens
                .token(client.http()?)
                .await
                .map_err(|e| ProviderError::Auth {
                    client: client.name().to_string(),
                    status: 401,
                    message: e.to_string(),
                })?;
            Ok(outgoing.header("authorization", format!("Bearer {token}")))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_route_to_their_publisher_and_endpoint() {
        assert_eq!(publisher_of("gemini-2.5-pro"), Publisher::Google);
        assert_eq!(
            publisher_of("claude-sonnet-4-5@20250929"),
            Publisher::Anthropic
        );
        assert_eq!(publisher_of("mistral-large-2411"), Publisher::Mistral);
        assert_eq!(
            default_api_base("global"),
            "https://aiplatform.googleapis.com"
        );
        assert_eq!(
            default_api_base("us-east5"),
            "https://us-east5-aiplatform.googleapis.com"
        );
    }
}
