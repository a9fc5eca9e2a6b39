//! `auth: {mode: Jwt, …}`: bearer tokens signed by an identity provider, checked against
//! its JWKS (RS256 or ES256).
//!
//! - The key set is fetched on the first token and kept as a snapshot every check reads
//!   without waiting: a token whose key is known never waits for a fetch.
//! - A token naming a key id the snapshot lacks refetches the set — one fetch at a time
//!   (others with unknown ids wait for that one, at most [`FETCH_TIMEOUT`]), each unknown
//!   id once, and never twice within [`REFETCH_GAP`] — which is how a provider's key
//!   rotation is seen without letting made-up ids flood the provider or stall anyone else.
//! - The set is refreshed on its own every `Cache-Control: max-age` (10 minutes without
//!   one, between 1 minute and 1 hour), so a key the provider removed stops being trusted;
//!   a failed refresh keeps the last set.
//!
//! The subject and the scopes come from the claims the config names.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant, SystemTime};

use base64::Engine;
use serde_json::Value;

use crate::config::api::JwtConfig;

/// The shortest time between two fetches of the key set for unknown key ids.
const REFETCH_GAP: Duration = Duration::from_secs(1);
/// How long a fetch of the key set may take.
const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a key set is used without `Cache-Control: max-age`.
const DEFAULT_FRESH: Duration = Duration::from_secs(600);
/// The bounds of a provider's `max-age`.
const FRESH_BOUNDS: (Duration, Duration) = (Duration::from_secs(60), Duration::from_secs(3600));
/// How many key ids that were not in a fresh set are remembered (each refetches once).
const MISSED_MEMORY: usize = 256;
/// The largest key set read.
const MAX_JWKS: usize = 1024 * 1024;

/// Why a token was refused (logged; the caller only sees 401).
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JwtError {
    #[error("not a JWT (three base64url parts)")]
    Malformed,
    #[error("algorithm `{0}` is not accepted (RS256, ES256)")]
    Algorithm(String),
    #[error("no key `{0}` in the key set")]
    UnknownKey(String),
    #[error("the signature does not verify")]
    Signature,
    #[error("claim `{0}` is wrong or missing")]
    Claim(&'static str),
    #[error("expired")]
    Expired,
    #[error("the key set could not be fetched: {0}")]
    Jwks(String),
}

/// Checks tokens against one provider's key set.
pub struct Verifier {
    config: JwtConfig,
    http: reqwest::Client,
    /// The keys as last fetched; read without waiting.
    keys: RwLock<Arc<KeySet>>,
    /// Held by the one fetch in flight.
    fetching: tokio::sync::Mutex<()>,
    /// When a fetch for an unknown id was last tried, and the ids a fetch did not find.
    misses: Mutex<Misses>,
}

#[derive(Default)]
struct KeySet {
    by_id: HashMap<String, Value>,
    /// How long it may be used before a refresh.
    fresh_for: Option<Duration>,
    /// Bumped by each fetch, so a waiter sees that another fetch already happened.
    generation: u64,
}

#[derive(Default)]
struct Misses {
    last_attempt: Option<Instant>,
    /// Ids a refetch did not find.
    ids: std::collections::VecDeque<String>,
}

/// A token's holder: its subject and scopes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    pub subject: String,
    pub scopes: Vec<String>,
}

impl Verifier {
    /// A verifier for `config`; within a runtime it also refreshes the key set on its own
    /// (until it is dropped).
    pub fn new(config: JwtConfig) -> Arc<Self> {
        crate::client::http::install_crypto_provider();
        let http = reqwest::Client::builder()
            .user_agent(crate::client::http::USER_AGENT)
            .connect_timeout(Duration::from_secs(3))
            .timeout(FETCH_TIMEOUT)
            .build()
            .unwrap_or_default();
        let verifier = Arc::new(Self {
            config,
            http,
            keys: RwLock::new(Arc::default()),
            fetching: tokio::sync::Mutex::new(()),
            misses: Mutex::new(Misses::default()),
        });
        if tokio::runtime::Handle::try_current().is_ok() {
            tokio::spawn(refresh_periodically(Arc::downgrade(&verifier)));
        }
        verifier
    }

    fn snapshot(&self) -> Arc<KeySet> {
        Arc::clone(
            &self
                .keys
                .read()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Fetches the set unless a fetch newer than `seen` already happened; the snapshot
    /// after. One fetch at a time; a failed one keeps the old set.
    async fn refetch(&self, seen: u64) -> Result<Arc<KeySet>, JwtError> {
        let _one = self.fetching.lock().await;
        let now = self.snapshot();
        if now.generation != seen {
            return Ok(now);
        }
        let (by_id, fresh_for) = self.fetch().await?;
        let next = Arc::new(KeySet {
            by_id,
            fresh_for,
            generation: seen + 1,
        });
        *self
            .keys
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Arc::clone(&next);
        Ok(next)
    }

    /// The holder of `token`, if its signature, issuer, audience and times check out.
    pub async fn verify(&self, token: &str) -> Result<Holder, JwtError> {
        let mut parts = token.split('.');
        let (Some(head), Some(body), Some(signature), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(JwtError::Malformed);
        };
        let header = decode_json(head)?;
        let alg = header["alg"].as_str().unwrap_or_default().to_string();
        if alg != "RS256" && alg != "ES256" {
            return Err(JwtError::Algorithm(alg));
        }
        let kid = header["kid"].as_str().unwrap_or_default().to_string();
        let key = self.key(&kid).await?;
        let signed = &token[..head.len() + 1 + body.len()];
        let signature = decode(signature)?;
        check_signature(&alg, &key, signed.as_bytes(), &signature)?;
        let claims = decode_json(body)?;
        self.holder(&claims)
    }

    /// The key `kid`: from the snapshot, else from a refetch (each unknown id once, not
    /// twice within the gap).
    async fn key(&self, kid: &str) -> Result<Value, JwtError> {
        let keys = self.snapshot();
        if let Some(key) = keys.by_id.get(kid) {
            return Ok(key.clone());
        }
        let may_fetch = {
            let mut misses = self
                .misses
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let due = keys.generation == 0
                || (!misses.ids.iter().any(|m| m == kid)
                    && misses
                        .last_attempt
                        .is_none_or(|at| at.elapsed() >= REFETCH_GAP));
            if due {
                misses.last_attempt = Some(Instant::now());
            }
            due
        };
        if !may_fetch {
            return Err(JwtError::UnknownKey(kid.to_string()));
        }
        let keys = self.refetch(keys.generation).await?;
        match keys.by_id.get(kid) {
            Some(key) => Ok(key.clone()),
            None => {
                let mut misses = self
                    .misses
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if misses.ids.len() >= MISSED_MEMORY {
                    misses.ids.pop_front();
                }
                misses.ids.push_back(kid.to_string());
                Err(JwtError::UnknownKey(kid.to_string()))
            }
        }
    }

    /// The key set and how long it may be used (`Cache-Control: max-age`, bounded).
    async fn fetch(&self) -> Result<(HashMap<String, Value>, Option<Duration>), JwtError> {
        let response = self
            .http
            .get(&self.config.jwks_url)
            .send()
            .await
            .map_err(|e| JwtError::Jwks(e.to_string()))?;
        if !response.status().is_success() {
            return Err(JwtError::Jwks(format!("HTTP {}", response.status())));
        }
        let fresh_for = match self.config.jwks_refresh_seconds {
            Some(seconds) => Some(Duration::from_secs(seconds.max(1))),
            None => response
                .headers()
                .get(reqwest::header::CACHE_CONTROL)
                .and_then(|v| v.to_str().ok())
                .and_then(max_age)
                .map(|age| age.clamp(FRESH_BOUNDS.0, FRESH_BOUNDS.1)),
        };
        let body = crate::client::http::read_prefix(response, MAX_JWKS).await;
        let set: Value =
            serde_json::from_slice(&body).map_err(|e| JwtError::Jwks(e.to_string()))?;
        let by_id = set["keys"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|k| (k["kid"].as_str().unwrap_or_default().to_string(), k.clone()))
            .collect();
        Ok((by_id, fresh_for))
    }

    fn holder(&self, claims: &Value) -> Result<Holder, JwtError> {
        let config = &self.config;
        if claims["iss"].as_str() != Some(config.issuer.as_str()) {
            return Err(JwtError::Claim("iss"));
        }
        let audience_ok = match &claims["aud"] {
            Value::String(aud) => *aud == config.audience,
            Value::Array(auds) => auds.iter().any(|a| *a == config.audience.as_str()),
            _ => false,
        };
        if !audience_ok {
            return Err(JwtError::Claim("aud"));
        }
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let leeway = config.leeway_seconds;
        let exp = claims["exp"].as_u64().ok_or(JwtError::Claim("exp"))?;
        if exp.saturating_add(leeway) < now {
            return Err(JwtError::Expired);
        }
        if claims["nbf"]
            .as_u64()
            .is_some_and(|nbf| nbf > now.saturating_add(leeway))
        {
            return Err(JwtError::Claim("nbf"));
        }
        let subject = claims[config.subject_claim.as_str()]
            .as_str()
            .filter(|s| !s.is_empty())
            .ok_or(JwtError::Claim("sub"))?
            .to_string();
        let scopes = match &claims[config.scopes_claim.as_str()] {
            Value::String(text) => text.split_whitespace().map(str::to_string).collect(),
            Value::Array(list) => list
                .iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect(),
            _ => Vec::new(),
        };
        Ok(Holder { subject, scopes })
    }
}

/// `max-age=N` of a `Cache-Control` value.
fn max_age(value: &str) -> Option<Duration> {
    value.split(',').find_map(|part| {
        let seconds = part.trim().strip_prefix("max-age=")?;
        seconds.trim().parse::<u64>().ok().map(Duration::from_secs)
    })
}

/// Refreshes the key set when it has been used as long as it may be, until the verifier
/// is gone (a reload replaces it). A set never fetched yet waits for its first token.
async fn refresh_periodically(verifier: Weak<Verifier>) {
    loop {
        let wait = match verifier.upgrade() {
            Some(v) => {
                let keys = v.snapshot();
                if keys.generation == 0 {
                    Duration::from_secs(5)
                } else {
                    keys.fresh_for.unwrap_or(DEFAULT_FRESH)
                }
            }
            None => return,
        };
        tokio::time::sleep(wait).await;
        let Some(v) = verifier.upgrade() else {
            return;
        };
        let keys = v.snapshot();
        if keys.generation > 0
            && let Err(e) = v.refetch(keys.generation).await
        {
            tracing::warn!("refreshing the JWT key set failed, the last one stays: {e}");
        }
    }
}

fn decode(part: &str) -> Result<Vec<u8>, JwtError> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part.trim_end_matches('='))
        .map_err(|_| JwtError::Malformed)
}

fn decode_json(part: &str) -> Result<Value, JwtError> {
    serde_json::from_slice(&decode(part)?).map_err(|_| JwtError::Malformed)
}

/// Checks `signature` over `signed` with the JWK `key`.
fn check_signature(
    alg: &str,
    key: &Value,
    signed: &[u8],
    signature: &[u8],
) -> Result<(), JwtError> {
    use ring::signature;
    let field = |name: &str| {
        key[name]
            .as_str()
            .ok_or(JwtError::Signature)
            .and_then(decode)
    };
    let verified = match alg {
        "RS256" if key["kty"] == "RSA" => signature::RsaPublicKeyComponents {
            n: field("n")?,
            e: field("e")?,
        }
        .verify(&signature::RSA_PKCS1_2048_8192_SHA256, signed, signature),
        "ES256" if key["kty"] == "EC" && key["crv"] == "P-256" => {
            let mut point = vec![4u8];
            point.extend(field("x")?);
            point.extend(field("y")?);
            signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, point)
                .verify(signed, signature)
        }
        _ => return Err(JwtError::Signature),
    };
    verified.map_err(|_| JwtError::Signature)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn b64(bytes: &[u8]) -> String {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
    }

    #[test]
    fn an_rs256_signature_verifies_with_the_jwk_and_a_changed_token_does_not() {
        let pem = include_str!("../../tests/data/test_service_account_key.pem");
        let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
        let der = base64::engine::general_purpose::STANDARD
            .decode(body)
            .unwrap();
        let pair = ring::signature::RsaKeyPair::from_pkcs8(&der).unwrap();
        let public: ring::rsa::PublicKeyComponents<Vec<u8>> = pair.public().into();
        let jwk = json!({"kty": "RSA", "kid": "r1", "n": b64(&public.n), "e": b64(&public.e)});
        let signed = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhIn0";
        let mut signature = vec![0; pair.public().modulus_len()];
        pair.sign(
            &ring::signature::RSA_PKCS1_SHA256,
            &ring::rand::SystemRandom::new(),
            signed.as_bytes(),
            &mut signature,
        )
        .unwrap();
        assert_eq!(
            check_signature("RS256", &jwk, signed.as_bytes(), &signature),
            Ok(())
        );
        assert_eq!(
            check_signature(
                "RS256",
                &jwk,
                b"eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJiIn0",
                &signature
            ),
            Err(JwtError::Signature)
        );
        assert_eq!(
            check_signature("ES256", &jwk, signed.as_bytes(), &signature),
            Err(JwtError::Signature),
            "a key is used only for its own kind"
        );
    }
}
