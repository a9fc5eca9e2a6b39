//! Vertex AI (`type: vertexai`): Gemini models through `publishers/google` (the Gemini
//! wire format), Claude through `publishers/anthropic` (`rawPredict` with the Messages
//! format and `anthropic_version: vertex-2023-10-16`), and Mistral through
//! `publishers/mistralai` (the OpenAI format). Authenticated with a Google Cloud access
//! token from application-default credentials, cached until it expires.

use std::path::PathBuf;
use std::sync::OnceLock;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::json;

use super::google_auth::{self, TokenSource};
use super::http::{HttpSettings, LazyHttp};
use super::patch::ApiKind;
use super::wire::{self, Outgoing, Sse};
use super::{ChatRequest, Model, Provider, ProviderError, ProviderStream, RetryPolicy};

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
    /// Client name.
    pub name: String,
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

/// A client for models hosted on Vertex AI.
#[derive(Debug)]
pub struct VertexProvider {
    setup: VertexSetup,
    http: LazyHttp,
    tokens: OnceLock<Result<TokenSource, VertexSetupError>>,
}

/// Which publisher serves a model, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Publisher {
    Google,
    Anthropic,
    Mistral,
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

impl VertexProvider {
    /// Builds the provider; credentials are read on the first request.
    pub fn new(mut setup: VertexSetup) -> Self {
        setup.api_base = setup.api_base.trim_end_matches('/').to_string();
        Self {
            setup,
            http: LazyHttp::default(),
            tokens: OnceLock::new(),
        }
    }

    fn setup_error(&self, e: &VertexSetupError) -> ProviderError {
        ProviderError::Setup {
            client: self.setup.name.clone(),
            message: e.to_string(),
        }
    }

    async fn send(
        &self,
        model: &Model,
        request: &ChatRequest,
    ) -> Result<ProviderStream, ProviderError> {
        let setup = &self.setup;
        let project = setup.project.clone().map_err(|e| self.setup_error(&e))?;
        let tokens = self
            .tokens
            .get_or_init(|| {
                let path = setup
                    .adc_file
                    .clone()
                    .ok_or(VertexSetupError::NoCredentials)?;
                Ok(TokenSource::new(google_auth::load(&path)?))
            })
            .as_ref()
            .map_err(|e| self.setup_error(e))?;
        let settings = &setup.settings;
        let http = self.http.get(settings, &setup.api_base)?;
        let token = tokens.token(http).await.map_err(|e| ProviderError::Auth {
            client: setup.name.clone(),
            status: 401,
            message: e.to_string(),
        })?;
        let publisher = publisher_of(model.real_name());
        let model_url = format!(
            "{}/v1/projects/{project}/locations/{}/publishers/{}/models/{}",
            setup.api_base,
            setup.location,
            match publisher {
                Publisher::Google => "google",
                Publisher::Anthropic => "anthropic",
                Publisher::Mistral => "mistralai",
            },
            model.real_name()
        );
        let bearer = format!("Bearer {token}");
        match publisher {
            Publisher::Google => {
                let outgoing = Outgoing::new(
                    super::gemini::method_url(&model_url, request.stream),
                    super::gemini::build_body(model, request),
                )
                .header("authorization", bearer);
                super::gemini::send_prepared(&self.http, settings, model, outgoing).await
            }
            Publisher::Anthropic => {
                let mut body = super::claude::build_body(model, request);
                if let Some(obj) = body.as_object_mut() {
                    obj.remove("model");
                    obj.insert("anthropic_version".into(), json!(VERTEX_ANTHROPIC_VERSION));
                }
                let method = if request.stream {
                    "streamRawPredict"
                } else {
                    "rawPredict"
                };
                let outgoing = Outgoing::new(format!("{model_url}:{method}"), body)
                    .header("authorization", bearer);
                let response = wire::send(http, settings, model, ApiKind::Chat, outgoing).await?;
                if wire::content_type_is(&response, "text/event-stream") {
                    return Ok(wire::stream(
                        response,
                        settings.clone(),
                        Box::new(Sse::new(super::claude::EventParser::default())),
                    ));
                }
                wire::parse_whole(response, settings, super::claude::parse_response).await
            }
            Publisher::Mistral => {
                let body = super::openai::build_body(model, request, false, false);
                let method = if request.stream {
                    "streamRawPredict"
                } else {
                    "rawPredict"
                };
                let outgoing = Outgoing::new(format!("{model_url}:{method}"), body)
                    .header("authorization", bearer);
                let response = wire::send(http, settings, model, ApiKind::Chat, outgoing).await?;
                if wire::content_type_is(&response, "text/event-stream") {
                    return Ok(wire::stream(
                        response,
                        settings.clone(),
                        loki_hotpath::openai_wire::decoder(),
                    ));
                }
                wire::parse_whole(response, settings, super::openai::parse_response).await
            }
        }
    }
}

impl Provider for VertexProvider {
    fn name(&self) -> &str {
        &self.setup.name
    }

    fn retry_policy(&self) -> RetryPolicy {
        self.setup.settings.retry
    }

    fn chat<'a>(
        &'a self,
        model: &'a Model,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ProviderStream, ProviderError>> {
        self.send(model, request).boxed()
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
