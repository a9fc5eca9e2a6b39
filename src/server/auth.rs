//! Who may call the server: bearer keys checked against argon2id hashes (a key that
//! verified once is remembered by its SHA-256, so argon2 runs once per key, not per
//! request), their scopes, and a per-key rate limit per minute.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

use crate::config::api::{AuthConfig, KeyEntry};

/// Who a request comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The key's subject (`anonymous` with auth disabled).
    pub subject: String,
    /// What it may do.
    pub scopes: Vec<String>,
    /// Its requests per minute, if limited.
    pub rate_limit: Option<u32>,
}

impl Caller {
    /// Whether it holds `scope`.
    pub fn may(&self, scope: &str) -> bool {
        self.scopes.iter().any(|s| s == scope || s == "admin")
    }
}

/// The configured keys.
pub struct Keys {
    disabled: bool,
    entries: Vec<KeyEntry>,
    default_limit: Option<u32>,
    /// SHA-256 of keys that verified → their entry.
    verified: Mutex<HashMap<[u8; 32], usize>>,
    /// SHA-256 of keys that did not (bounded), so a wrong key costs argon2 once.
    rejected: Mutex<Vec<[u8; 32]>>,
}

/// How many wrong keys are remembered.
const REJECTED_MEMORY: usize = 1024;

impl Keys {
    /// The keys of `auth`, with `default_limit` per minute for keys without their own.
    pub fn new(auth: &AuthConfig, default_limit: Option<u32>) -> Self {
        let (disabled, entries) = match auth {
            AuthConfig::Disabled => (true, Vec::new()),
            AuthConfig::StaticKeys { keys } => (false, keys.clone()),
        };
        Self {
            disabled,
            entries,
            default_limit,
            verified: Mutex::new(HashMap::new()),
            rejected: Mutex::new(Vec::new()),
        }
    }

    /// Whether requests are not checked at all.
    pub fn disabled(&self) -> bool {
        self.disabled
    }

    /// The caller presenting `bearer` (the `Authorization: Bearer` value); `None` when
    /// the key is not one of the configured ones.
    pub fn check(&self, bearer: Option<&str>) -> Option<Caller> {
        if self.disabled {
            return Some(Caller {
                subject: "anonymous".into(),
                scopes: vec!["admin".into()],
                rate_limit: self.default_limit,
            });
        }
        let key = bearer?.trim();
        if key.is_empty() {
            return None;
        }
        let digest = sha256(key);
        let known = self
            .verified
            .lock()
            .ok()
            .and_then(|v| v.get(&digest).copied());
        let index = match known {
            Some(index) => index,
            None => {
                if self.rejected.lock().is_ok_and(|r| r.contains(&digest)) {
                    return None;
                }
                let found = self.entries.iter().position(|e| verify(key, &e.key_hash));
                match found {
                    Some(index) => {
                        if let Ok(mut v) = self.verified.lock() {
                            v.insert(digest, index);
                        }
                        index
                    }
                    None => {
                        if let Ok(mut r) = self.rejected.lock() {
                            if r.len() >= REJECTED_MEMORY {
                                r.remove(0);
                            }
                            r.push(digest);
                        }
                        return None;
                    }
                }
            }
        };
        let entry = self.entries.get(index)?;
        Some(Caller {
            subject: entry.subject.clone(),
            scopes: entry.scopes.clone(),
            rate_limit: entry.rate_limit_per_minute.or(self.default_limit),
        })
    }
}

fn sha256(text: &str) -> [u8; 32] {
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.as_ref());
    out
}

/// Whether `key` matches the argon2 `hash`.
fn verify(key: &str, hash: &str) -> bool {
    PasswordHash::new(hash).is_ok_and(|parsed| {
        argon2::Argon2::default()
            .verify_password(key.as_bytes(), &parsed)
            .is_ok()
    })
}

/// A new random key and its argon2id hash (`loki --api-key-hash`).
pub fn new_key() -> Result<(String, String), String> {
    use ring::rand::SecureRandom;
    let random = ring::rand::SystemRandom::new();
    let mut key_bytes = [0u8; 24];
    let mut salt_bytes = [0u8; 16];
    random
        .fill(&mut key_bytes)
        .and_then(|()| random.fill(&mut salt_bytes))
        .map_err(|_| "no randomness available".to_string())?;
    let key = format!(
        "lk_{}",
        key_bytes
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    let hash = hash_key(&key, &salt_bytes)?;
    Ok((key, hash))
}

fn hash_key(key: &str, salt: &[u8]) -> Result<String, String> {
    let salt = SaltString::encode_b64(salt).map_err(|e| e.to_string())?;
    argon2::Argon2::default()
        .hash_password(key.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| e.to_string())
}

/// Requests per subject in the current minute.
#[derive(Default)]
pub struct RateLimiter {
    windows: Mutex<HashMap<String, (Instant, u32)>>,
}

impl RateLimiter {
    /// Counts a request of `caller`; the seconds to wait when it is over its limit.
    pub fn admit(&self, caller: &Caller) -> Result<(), u64> {
        let Some(limit) = caller.rate_limit else {
            return Ok(());
        };
        let Ok(mut windows) = self.windows.lock() else {
            return Ok(());
        };
        let now = Instant::now();
        let window = windows.entry(caller.subject.clone()).or_insert((now, 0));
        if now.duration_since(window.0) >= Duration::from_secs(60) {
            *window = (now, 0);
        }
        if window.1 >= limit {
            let left = Duration::from_secs(60).saturating_sub(now.duration_since(window.0));
            return Err(left.as_secs().max(1));
        }
        window.1 += 1;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_verify_by_hash_once_and_carry_their_scopes() {
        let hash = hash_key("lk_secret", b"0123456789abcdef").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        let keys = Keys::new(
            &AuthConfig::StaticKeys {
                keys: vec![KeyEntry {
                    subject: "ci".into(),
                    key_hash: hash,
                    scopes: vec!["read".into()],
                    rate_limit_per_minute: Some(2),
                }],
            },
            None,
        );
        let caller = keys.check(Some("lk_secret")).unwrap();
        assert_eq!(caller.subject, "ci");
        assert!(caller.may("read") && !caller.may("write"));
        assert!(keys.check(Some("lk_secret")).is_some(), "cached");
        assert!(keys.check(Some("wrong")).is_none());
        assert!(keys.check(Some("wrong")).is_none(), "remembered");
        assert!(keys.check(None).is_none());
        let limiter = RateLimiter::default();
        assert!(limiter.admit(&caller).is_ok());
        assert!(limiter.admit(&caller).is_ok());
        assert!(limiter.admit(&caller).unwrap_err() > 0);
    }

    #[test]
    fn new_keys_are_random_and_verify() {
        let (key, hash) = new_key().unwrap();
        let (other, _) = new_key().unwrap();
        assert_ne!(key, other);
        assert!(verify(&key, &hash));
        assert!(!verify(&other, &hash));
    }
}
