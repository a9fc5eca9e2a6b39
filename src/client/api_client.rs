//! The skeleton every HTTP provider is built on: one client type ([`ApiClient`]: endpoint,
//! transport settings, credentials, the lazily built `reqwest` client) and one
//! [`Provider`] implementation ([`HttpProvider`]) around an [`Api`], the small trait that
//! holds what one provider does differently: the URL and body of a chat request, the
//! [`WireFormat`] its answer comes in, an extra authorization step (OAuth, a Google token,
//! SigV4 signing), and the embeddings and rerank dialects where the API has them.
//!
//! Sending, patches, the debug log, status mapping (401, 429, 5xx), stream decoding with
//! its limits, and the choice between a streamed and a whole reply are written once, here
//! and in [`super::wire`], so a provider module is its request shape and its decoder.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::embed::{self, Dialect, Purpose, Ranked};
use super::http::{HttpSettings, LazyHttp};
use super::oauth::OAuthSource;
use super::patch::ApiKind;
use super::wire::{self, Outgoing, Signed, WireFormat};
use super::{ChatRequest, Model, Provider, ProviderError, ProviderStream, RetryPolicy};

/// Where a client's key travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyHeader {
    /// `Authorization: Bearer <key>`.
    Bearer,
    /// The key alone in this header (`x-api-key`, `x-goog-api-key`, Azure's `api-key`).
    Named(&'static str),
}

/// The credentials of a client that signs in with a key or OAuth.
#[derive(Clone, Default)]
pub struct Credentials {
    /// The resolved key.
    pub key: Option<String>,
    /// A key is needed but none was found: the variable the user should set.
    pub missing_env: Option<String>,
    /// Signed in with OAuth instead of a key.
    pub oauth: Option<Arc<OAuthSource>>,
    /// Headers every request carries (`OpenAI-Organization`).
    pub headers: Vec<(&'static str, String)>,
}

impl Credentials {
    /// A key (or the variable naming the missing one), as the registry resolved it.
    pub fn key(key: Option<String>, missing_env: Option<String>) -> Self {
        Self {
            key,
            missing_env,
            ..Self::default()
        }
    }
}

/// One configured API endpoint: its base URL, transport settings, credentials and the
/// HTTP client, which is built on the first request (no TLS work before).
pub struct ApiClient {
    api_base: String,
    settings: HttpSettings,
    credentials: Credentials,
    http: LazyHttp,
}

impl std::fmt::Debug for ApiClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiClient")
            .field("name", &self.settings.client)
            .field("api_base", &self.api_base)
            .finish_non_exhaustive()
    }
}

impl ApiClient {
    /// A client for `api_base` (a trailing `/` is dropped).
    pub fn new(api_base: &str, settings: HttpSettings, credentials: Credentials) -> Self {
        Self {
            api_base: api_base.trim_end_matches('/').to_string(),
            settings,
            credentials,
            http: LazyHttp::default(),
        }
    }

    /// Client name.
    pub fn name(&self) -> &str {
        &self.settings.client
    }

    /// Base URL, without a trailing `/`.
    pub fn api_base(&self) -> &str {
        &self.api_base
    }

    /// Transport settings.
    pub fn settings(&self) -> &HttpSettings {
        &self.settings
    }

    /// The HTTP client, built on first use.
    pub fn http(&self) -> Result<&reqwest::Client, ProviderError> {
        self.http.get(&self.settings, &self.api_base)
    }

    /// Signed in with OAuth rather than a key.
    pub fn signed_in(&self) -> bool {
        self.credentials.oauth.is_some()
    }

    /// The error for a problem only the provider can see (no project, no credentials).
    pub fn setup_error(&self, message: impl std::fmt::Display) -> ProviderError {
        ProviderError::Setup {
            client: self.settings.client.clone(),
            message: message.to_string(),
        }
    }

    /// Adds the client's credentials to a request: an OAuth bearer token, else the key
    /// in `header`, and the headers every request carries. A key that is needed but
    /// missing is an error naming the variable to set, before anything is sent.
    pub async fn authorize(
        &self,
        mut outgoing: Outgoing,
        header: KeyHeader,
    ) -> Result<Outgoing, ProviderError> {
        let credentials = &self.credentials;
        if let Some(env) = &credentials.missing_env {
            return Err(ProviderError::MissingApiKey {
                client: self.settings.client.clone(),
                env: env.clone(),
            });
        }
        if let Some(oauth) = &credentials.oauth {
            let token = oauth.bearer(self.http()?).await?;
            outgoing = outgoing.header("authorization", format!("Bearer {token}"));
        } else if let Some(key) = &credentials.key {
            outgoing = match header {
                KeyHeader::Bearer => outgoing.header("authorization", format!("Bearer {key}")),
                KeyHeader::Named(name) => outgoing.header(name, key.clone()),
            };
        }
        for (name, value) in &credentials.headers {
            outgoing = outgoing.header(name, value.clone());
        }
        Ok(outgoing)
    }

    /// Sends a chat request (signed by `sign` after patches) and decodes the reply in
    /// `format`: streamed or whole, as the response says.
    pub async fn chat(
        &self,
        model: &Model,
        request: &ChatRequest,
        outgoing: Outgoing,
        format: &dyn WireFormat,
        sign: &wire::Signer<'_>,
    ) -> Result<ProviderStream, ProviderError> {
        let http = self.http()?;
        let response =
            wire::send_signed(http, &self.settings, model, ApiKind::Chat, outgoing, sign).await?;
        wire::reply(response, &self.settings, request, format).await
    }

    /// Sends a prepared JSON request and returns the JSON answer.
    pub async fn json(
        &self,
        model: &Model,
        api: ApiKind,
        outgoing: Outgoing,
    ) -> Result<Value, ProviderError> {
        let response = wire::send(self.http()?, &self.settings, model, api, outgoing).await?;
        let bytes = wire::whole_body(response, &self.settings).await?;
        serde_json::from_slice(&bytes).map_err(|e| ProviderError::Protocol {
            client: self.settings.client.clone(),
            message: format!("invalid JSON: {e}"),
        })
    }

    fn protocol_error(&self, e: &embed::EmbedResponseError) -> ProviderError {
        ProviderError::Protocol {
            client: self.settings.client.clone(),
            message: e.to_string(),
        }
    }
}

/// What one HTTP provider does its own way; everything else is [`HttpProvider`]'s.
pub trait Api: Send + Sync {
    /// Where the key travels.
    fn key_header(&self) -> KeyHeader {
        KeyHeader::Bearer
    }

    /// The wire format `model` is spoken in.
    fn format(&self, model: &Model) -> &dyn WireFormat;

    /// Where chat requests go below the API base, for an API with one chat address and no
    /// headers of its own (see [`Api::request`]); OpenAI's by default.
    fn chat_path(&self) -> &str {
        "/chat/completions"
    }

    /// The chat request before credentials: where `body` (the format's) goes, with which
    /// headers of the provider's own. By default `body` goes to [`Api::chat_path`].
    fn request(
        &self,
        client: &ApiClient,
        model: &Model,
        request: &ChatRequest,
        body: Value,
    ) -> Result<Outgoing, ProviderError> {
        let _ = (model, request);
        let url = format!("{}{}", client.api_base(), self.chat_path());
        Ok(Outgoing::new(url, body))
    }

    /// Adds credentials; by default the client's key or OAuth token.
    fn authorize<'a>(
        &'a self,
        client: &'a ApiClient,
        outgoing: Outgoing,
    ) -> BoxFuture<'a, Result<Outgoing, ProviderError>> {
        Box::pin(client.authorize(outgoing, self.key_header()))
    }

    /// Headers that sign the final (patched) request; none by default.
    fn sign(&self, url: &str, headers: &[(String, String)], body: &[u8]) -> Signed {
        let _ = (url, headers, body);
        Ok(Vec::new())
    }

    /// Where embeddings requests go, adjusted from the dialect's default (Azure).
    fn address(&self, client: &ApiClient, model: &Model, outgoing: Outgoing) -> Outgoing {
        let _ = (client, model);
        outgoing
    }

    /// The embeddings dialect, when the API has embeddings.
    fn embeddings(&self, client: &ApiClient) -> Option<Dialect> {
        let _ = client;
        None
    }

    /// The rerank dialect, when the API has reranking.
    fn reranking(&self, client: &ApiClient) -> Option<Dialect> {
        let _ = client;
        None
    }
}

/// A provider speaking HTTP: the shared [`ApiClient`] and the provider's [`Api`].
pub struct HttpProvider<A> {
    client: ApiClient,
    api: A,
}

impl<A> std::fmt::Debug for HttpProvider<A> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpProvider")
            .field("client", &self.client)
            .finish_non_exhaustive()
    }
}

impl<A: Api> HttpProvider<A> {
    /// A provider for `api_base`; nothing is sent (and no TLS work done) until the
    /// first request.
    pub fn new(api_base: &str, settings: HttpSettings, credentials: Credentials, api: A) -> Self {
        let client = ApiClient::new(api_base, settings, credentials);
        Self { client, api }
    }

    async fn send(
        &self,
        model: &Model,
        request: &ChatRequest,
    ) -> Result<ProviderStream, ProviderError> {
        let format = self.api.format(model);
        let (body, messages) = format.body_parts(model, request);
        let mut outgoing = self.api.request(&self.client, model, request, body)?;
        outgoing.messages = messages;
        let outgoing = self.api.authorize(&self.client, outgoing).await?;
        let sign = |url: &str, headers: &[(String, String)], body: &[u8]| {
            self.api.sign(url, headers, body)
        };
        self.client
            .chat(model, request, outgoing, format, &sign)
            .await
    }

    async fn embed_batch(
        &self,
        model: &Model,
        texts: &[String],
        purpose: Purpose,
        dialect: Dialect,
    ) -> Result<Vec<Vec<f32>>, ProviderError> {
        let client = &self.client;
        let outgoing = embed::embed_request(dialect, client.api_base(), model, texts, purpose);
        let outgoing = self.api.address(client, model, outgoing);
        let outgoing = self.api.authorize(client, outgoing).await?;
        let value = client.json(model, ApiKind::Embeddings, outgoing).await?;
        embed::parse_embeddings(dialect, &value).map_err(|e| client.protocol_error(&e))
    }

    async fn rerank_batch(
        &self,
        model: &Model,
        query: &str,
        documents: &[String],
        top_n: usize,
        dialect: Dialect,
    ) -> Result<Vec<Ranked>, ProviderError> {
        let client = &self.client;
        let outgoing =
            embed::rerank_request(dialect, client.api_base(), model, query, documents, top_n);
        let outgoing = self.api.authorize(client, outgoing).await?;
        let value = client.json(model, ApiKind::Rerank, outgoing).await?;
        embed::parse_rerank(&value).map_err(|e| client.protocol_error(&e))
    }
}

impl<A: Api> Provider for HttpProvider<A> {
    fn name(&self) -> &str {
        self.client.name()
    }

    fn retry_policy(&self) -> RetryPolicy {
        self.client.settings.retry
    }

    fn chat<'a>(
        &'a self,
        model: &'a Model,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ProviderStream, ProviderError>> {
        Box::pin(self.send(model, request))
    }

    fn embed<'a>(
        &'a self,
        model: &'a Model,
        texts: &'a [String],
        purpose: Purpose,
    ) -> BoxFuture<'a, Result<Vec<Vec<f32>>, ProviderError>> {
        match self.api.embeddings(&self.client) {
            Some(dialect) => Box::pin(self.embed_batch(model, texts, purpose, dialect)),
            None => Box::pin(std::future::ready(Err(
                self.unsupported(model, "embeddings")
            ))),
        }
    }

    fn rerank<'a>(
        &'a self,
        model: &'a Model,
        query: &'a str,
        documents: &'a [String],
        top_n: usize,
    ) -> BoxFuture<'a, Result<Vec<Ranked>, ProviderError>> {
        match self.api.reranking(&self.client) {
            Some(dialect) => Box::pin(self.rerank_batch(model, query, documents, top_n, dialect)),
            None => Box::pin(std::future::ready(
                Err(self.unsupported(model, "reranking")),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client(credentials: Credentials) -> ApiClient {
        let settings = HttpSettings::new("c", None, None);
        ApiClient::new("https://api.example.com/v1/", settings, credentials)
    }

    async fn authorized(client: &ApiClient, header: KeyHeader) -> Result<Outgoing, ProviderError> {
        let outgoing = Outgoing::new(format!("{}/chat", client.api_base()), Value::Null);
        client.authorize(outgoing, header).await
    }

    #[tokio::test]
    async fn keys_go_in_the_header_the_api_names() {
        let mut credentials = Credentials::key(Some("k".into()), None);
        credentials
            .headers
            .push(("openai-organization", "org".into()));
        let client = client(credentials);
        assert_eq!(client.api_base(), "https://api.example.com/v1");
        let bearer = authorized(&client, KeyHeader::Bearer).await.unwrap();
        assert_eq!(
            bearer.headers,
            vec![
                ("authorization".to_string(), "Bearer k".to_string()),
                ("openai-organization".to_string(), "org".to_string()),
            ]
        );
        let named = authorized(&client, KeyHeader::Named("x-api-key"))
            .await
            .unwrap();
        assert_eq!(named.headers[0], ("x-api-key".into(), "k".into()));
    }

    #[tokio::test]
    async fn a_missing_key_is_named_before_anything_is_sent() {
        let missing = client(Credentials::key(None, Some("OPENAI_API_KEY".into())));
        let err = authorized(&missing, KeyHeader::Bearer).await.unwrap_err();
        assert!(matches!(err, ProviderError::MissingApiKey { env, .. } if env == "OPENAI_API_KEY"));
        let keyless = client(Credentials::default());
        let outgoing = authorized(&keyless, KeyHeader::Bearer).await.unwrap();
        assert!(outgoing.headers.is_empty());
    }
}
