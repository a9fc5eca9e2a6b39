//! Google Cloud access tokens for Vertex AI, from application-default credentials: a
//! service-account key (a JWT signed with its RSA key, RS256, exchanged at `token_uri`)
//! or an authorized-user file from `gcloud auth application-default login` (a refresh
//! token). Tokens are cached until a minute before they expire.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use serde::Deserialize;
use tokio::sync::Mutex;

/// The scope Vertex AI needs.
const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// Google's token endpoint, when the credentials file names none.
const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
/// Renew this long before the token expires.
const EARLY: Duration = Duration::from_secs(60);

/// A credentials file.
#[derive(Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Credentials {
    /// A service-account key.
    ServiceAccount {
        /// Account e-mail (the JWT issuer).
        client_email: String,
        /// PKCS#8 PEM private key.
        private_key: String,
        /// Token endpoint.
        #[serde(default)]
        token_uri: Option<String>,
    },
    /// `gcloud auth application-default login` output.
    AuthorizedUser {
        /// OAuth client id.
        client_id: String,
        /// OAuth client secret.
        client_secret: String,
        /// Long-lived refresh token.
        refresh_token: String,
        /// Token endpoint (not in gcloud's files; accepted for other issuers).
        #[serde(default)]
        token_uri: Option<String>,
    },
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ServiceAccount { client_email, .. } => {
                write!(f, "ServiceAccount({client_email})")
            }
            Self::AuthorizedUser { client_id, .. } => write!(f, "AuthorizedUser({client_id})"),
        }
    }
}

/// Where application-default credentials live: `adc_file`, else
/// `GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's well-known file.
pub fn adc_path(configured: Option<&str>, env: &crate::config::Env) -> Option<PathBuf> {
    if let Some(path) = configured.filter(|p| !p.trim().is_empty()) {
        return Some(match path.strip_prefix("~/") {
            Some(rest) => dirs::home_dir().map_or_else(|| PathBuf::from(path), |h| h.join(rest)),
            None => PathBuf::from(path),
        });
    }
    if let Some(path) = env.get("GOOGLE_APPLICATION_CREDENTIALS") {
        return Some(PathBuf::from(path));
    }
    dirs::config_dir().map(|d| d.join("gcloud/application_default_credentials.json"))
}

/// Why Google credentials gave no access token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GoogleAuthError {
    /// The credentials file cannot be read.
    #[error(
        "cannot read Google credentials {path}: {message} — set `adc_file` or run `gcloud auth application-default login`"
    )]
    Read { path: String, message: String },
    /// It is not a credentials file.
    #[error("{path} is not a service-account or authorized-user credentials file: {message}")]
    Format { path: String, message: String },
    /// The token endpoint cannot be reached.
    #[error("cannot reach {uri}: {message}")]
    Unreachable { uri: String, message: String },
    /// The token endpoint refused.
    #[error("token request failed (HTTP {status}): {message}")]
    Refused { status: u16, message: String },
    /// Its answer was not a token.
    #[error("unexpected token response: {0}")]
    Response(String),
    /// The service account's key cannot sign.
    #[error("the service-account private key is {0}")]
    Key(String),
}

/// Reads a credentials file.
pub fn load(path: &Path) -> Result<Credentials, GoogleAuthError> {
    let text = std::fs::read_to_string(path).map_err(|e| GoogleAuthError::Read {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let credentials: Credentials =
        serde_json::from_str(&text).map_err(|e| GoogleAuthError::Format {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
    if let Credentials::AuthorizedUser {
        client_secret,
        refresh_token,
        ..
    } = &credentials
    {
        loki_wire::secrets::remember("GOOGLE_CLIENT_SECRET", client_secret);
        loki_wire::secrets::remember("GOOGLE_REFRESH_TOKEN", refresh_token);
    }
    Ok(credentials)
}

/// A cached access token source.
#[derive(Debug)]
pub struct TokenSource {
    credentials: Credentials,
    cached: Mutex<Option<(String, Instant)>>,
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

impl TokenSource {
    /// A source for `credentials`; nothing is fetched until [`TokenSource::token`].
    pub fn new(credentials: Credentials) -> Self {
        Self {
            credentials,
            cached: Mutex::new(None),
        }
    }

    /// A valid access token, fetched or renewed when needed.
    pub async fn token(&self, http: &reqwest::Client) -> Result<String, GoogleAuthError> {
        let mut cached = self.cached.lock().await;
        if let Some((token, until)) = cached.as_ref()
            && Instant::now() < *until
        {
            return Ok(token.clone());
        }
        let (uri, form) = self.request()?;
        let response = http
            .post(&uri)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .map_err(|e| GoogleAuthError::Unreachable {
                uri: uri.clone(),
                message: super::http::error_chain(&e),
            })?;
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| GoogleAuthError::Unreachable {
                uri: uri.clone(),
                message: e.to_string(),
            })?;
        if !status.is_success() {
            return Err(GoogleAuthError::Refused {
                status: status.as_u16(),
                message: loki_wire::secrets::redact(&loki_wire::error_text::error_message(&body))
                    .into_owned(),
            });
        }
        let parsed: TokenResponse =
            serde_json::from_slice(&body).map_err(|e| GoogleAuthError::Response(e.to_string()))?;
        loki_wire::secrets::remember("GOOGLE_ACCESS_TOKEN", &parsed.access_token);
        let lifetime = Duration::from_secs(parsed.expires_in.unwrap_or(3600));
        let until = Instant::now() + lifetime.saturating_sub(EARLY);
        *cached = Some((parsed.access_token.clone(), until));
        Ok(parsed.access_token)
    }

    fn request(&self) -> Result<(String, String), GoogleAuthError> {
        let mut form = form_urlencoded::Serializer::new(String::new());
        let uri = match &self.credentials {
            Credentials::ServiceAccount {
                client_email,
                private_key,
                token_uri,
            } => {
                let uri = token_uri
                    .clone()
                    .unwrap_or_else(|| DEFAULT_TOKEN_URI.into());
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs());
                let assertion = signed_jwt(client_email, &uri, private_key, now)?;
                form.append_pair("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer")
                    .append_pair("assertion", &assertion);
                uri
            }
            Credentials::AuthorizedUser {
                client_id,
                client_secret,
                refresh_token,
                token_uri,
            } => {
                form.append_pair("grant_type", "refresh_token")
                    .append_pair("client_id", client_id)
                    .append_pair("client_secret", client_secret)
                    .append_pair("refresh_token", refresh_token);
                token_uri
                    .clone()
                    .unwrap_or_else(|| DEFAULT_TOKEN_URI.into())
            }
        };
        Ok((uri, form.finish()))
    }
}

/// A service-account JWT assertion (RS256), valid for an hour from `now`.
pub fn signed_jwt(
    issuer: &str,
    audience: &str,
    pem: &str,
    now: u64,
) -> Result<String, GoogleAuthError> {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"RS256","typ":"JWT"}"#);
    let claims = serde_json::json!({
        "iss": issuer,
        "scope": SCOPE,
        "aud": audience,
        "iat": now,
        "exp": now + 3600,
    });
    let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
    let message = format!("{header}.{claims}");
    let der = pem_to_der(pem)?;
    let key = ring::signature::RsaKeyPair::from_pkcs8(&der)
        .map_err(|e| GoogleAuthError::Key(format!("not a usable RSA key: {e}")))?;
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        message.as_bytes(),
        &mut signature,
    )
    .map_err(|_| GoogleAuthError::Key("unable to sign the token request".into()))?;
    Ok(format!("{message}.{}", URL_SAFE_NO_PAD.encode(signature)))
}

fn pem_to_der(pem: &str) -> Result<Vec<u8>, GoogleAuthError> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with("-----") && !l.is_empty())
        .collect();
    STANDARD
        .decode(body)
        .map_err(|e| GoogleAuthError::Key(format!("not valid PEM: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = include_str!("../../tests/data/test_service_account_key.pem");

    #[test]
    fn jwt_is_rs256_signed_and_verifiable() {
        let jwt = signed_jwt("sa@p.iam.gserviceaccount.com", "https://t/token", KEY, 1000).unwrap();
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["iss"], "sa@p.iam.gserviceaccount.com");
        assert_eq!(claims["aud"], "https://t/token");
        assert_eq!(claims["exp"], 4600);
        // Verify with the public half of the key.
        let der = pem_to_der(KEY).unwrap();
        let pair = ring::signature::RsaKeyPair::from_pkcs8(&der).unwrap();
        let public = ring::signature::UnparsedPublicKey::new(
            &ring::signature::RSA_PKCS1_2048_8192_SHA256,
            ring::signature::KeyPair::public_key(&pair)
                .as_ref()
                .to_vec(),
        );
        let signature = URL_SAFE_NO_PAD.decode(parts[2]).unwrap();
        public
            .verify(format!("{}.{}", parts[0], parts[1]).as_bytes(), &signature)
            .unwrap();
        assert!(signed_jwt("a", "b", "not a key", 0).is_err());
    }

    #[test]
    fn credentials_files_parse_by_type() {
        let sa: Credentials = serde_json::from_str(
            r#"{"type":"service_account","client_email":"a@b","private_key":"k","project_id":"p"}"#,
        )
        .unwrap();
        assert!(matches!(sa, Credentials::ServiceAccount { .. }));
        let user: Credentials = serde_json::from_str(
            r#"{"type":"authorized_user","client_id":"i","client_secret":"s","refresh_token":"r"}"#,
        )
        .unwrap();
        assert_eq!(format!("{user:?}"), "AuthorizedUser(i)");
    }
}
