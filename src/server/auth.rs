//! Who may call the server: bearer keys checked against argon2id hashes (a key that
//! verified once is remembered by its SHA-256, so argon2 runs once per key, not per
//! request), their scopes, and a per-key rate limit per minute.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};

use crate::config::api::{AuthConfig, KeyEntry};

/// Who a request comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The key's subject (`anonymous` with auth disabled).
    pub subject: String,
    /// What it may do (`config::api::SCOPES`).
    pub scopes: Vec<String>,
    /// Its requests per minute, if limited.
    pub rate_limit: Option<u32>,
}

impl Caller {
    /// Whether it holds `scope` (`read:sessions`, `run:models`, …): the scope itself,
    /// `*` or `admin`, or the coarse `read` (for `read:…`) or `write` (for `write:…` and
    /// `run:…`).
    pub fn may(&self, scope: &str) -> bool {
        let family = scope.split_once(':').map_or(scope, |(family, _)| family);
        self.scopes.iter().any(|held| {
            held == scope
                || held == "*"
                || held == "admin"
                || (held == "read" && family == "read")
                || (held == "write" && (family == "write" || family == "run"))
        })
    }

    /// Whether it may use sessions other subjects created.
    pub fn sees_all_sessions(&self) -> bool {
        self.scopes
            .iter()
            .any(|s| s == "*" || s == "admin" || s == "admin:sessions")
    }

    /// Whether it may use a session owned by `owner`. A session made outside the server
    /// (the CLI, the REPL: no owner) is the machine owner's, so only an admin key
    /// reaches it.
    pub fn owns(&self, owner: Option<&str>) -> bool {
        owner.is_some_and(|owner| owner == self.subject) || self.sees_all_sessions()
    }
}

/// Why a request was not let in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No key, or not a configured one.
    Unknown,
    /// Too many wrong keys from this address lately: retry in this many seconds.
    Throttled(u64),
}

/// The configured keys.
pub struct Keys {
    disabled: bool,
    entries: Arc<Vec<KeyEntry>>,
    default_limit: Option<u32>,
    /// SHA-256 of keys that verified → their entry.
    verified: Mutex<HashMap<[u8; 32], usize>>,
    /// SHA-256 of keys that did not (bounded), so a wrong key costs argon2 once.
    rejected: Mutex<VecDeque<[u8; 32]>>,
    /// One argon2 check at a time, on a blocking thread: a flood of keys waits here
    /// instead of taking the request threads.
    argon2: Arc<tokio::sync::Semaphore>,
    /// argon2 checks made (each key at most once).
    checks: std::sync::atomic::AtomicUsize,
    /// Wrong keys per client address in the current minute, and when a throttled
    /// address last had a new key checked anyway.
    failures: Mutex<HashMap<IpAddr, Failures>>,
    /// With `mode: Jwt`, the tokens' verifier.
    jwt: Option<Arc<super::jwt::Verifier>>,
}

/// Wrong keys from one address.
struct Failures {
    /// When the current minute began.
    since: Instant,
    /// Wrong keys in it.
    count: u32,
    /// When a new key from this throttled address was last checked anyway.
    probed: Option<Instant>,
}

/// How often a throttled address may still have one new key checked: a valid key behind
/// the same NAT as a flood gets in after a short wait, while the flood stays bounded.
const PROBE_GAP: Duration = Duration::from_secs(2);

/// How many wrong keys are remembered.
const REJECTED_MEMORY: usize = 1024;
/// Wrong keys a client address may present per minute before it is refused unchecked.
pub const FAILURES_PER_MINUTE: u32 = 20;
/// How many client addresses the failure count remembers.
const FAILURE_MEMORY: usize = 4096;

impl Keys {
    /// The keys of `auth`, with `default_limit` per minute for keys without their own.
    pub fn new(auth: &AuthConfig, default_limit: Option<u32>) -> Self {
        let (disabled, entries, jwt) = match auth {
            AuthConfig::Disabled => (true, Vec::new(), None),
            AuthConfig::StaticKeys { keys } => (false, keys.clone(), None),
            AuthConfig::Jwt(config) => (
                false,
                Vec::new(),
                Some(super::jwt::Verifier::new(config.clone())),
            ),
        };
        Self {
            disabled,
            entries: Arc::new(entries),
            default_limit,
            verified: Mutex::new(HashMap::new()),
            rejected: Mutex::new(VecDeque::new()),
            argon2: Arc::new(tokio::sync::Semaphore::new(1)),
            checks: std::sync::atomic::AtomicUsize::new(0),
            failures: Mutex::new(HashMap::new()),
            jwt,
        }
    }

    /// Whether requests are not checked at all.
    pub fn disabled(&self) -> bool {
        self.disabled
    }

    /// The caller presenting `bearer` (the `Authorization: Bearer` value) from
    /// `client`. A key seen before costs a hash lookup; a new one one argon2 check
    /// against the one entry its id names (or the entries without ids), off the request
    /// threads; a client that presented too many wrong keys is refused unchecked.
    pub async fn check(&self, bearer: Option<&str>, client: IpAddr) -> Result<Caller, Refusal> {
        if self.disabled {
            return Ok(Caller {
                subject: "anonymous".into(),
                scopes: vec!["admin".into()],
                rate_limit: self.default_limit,
            });
        }
        let key = bearer.map(str::trim).unwrap_or_default();
        if key.is_empty() {
            return Err(Refusal::Unknown);
        }
        if let Some(verifier) = &self.jwt {
            // A token costs a signature check against cached keys: no throttle (an
            // unknown key id is what the verifier rate-limits itself).
            return match verifier.verify(key).await {
                Ok(holder) => Ok(Caller {
                    subject: holder.subject,
                    scopes: holder.scopes,
                    rate_limit: self.default_limit,
                }),
                Err(why) => {
                    tracing::info!(%why, "token refused");
                    self.failed(client);
                    Err(Refusal::Unknown)
                }
            };
        }
        let digest = sha256(key);
        let known = lock(&self.verified).get(&digest).copied();
        let index = match known {
            Some(index) => index,
            None => {
                self.throttled(client)?;
                if lock(&self.rejected).contains(&digest) {
                    self.failed(client);
                    return Err(Refusal::Unknown);
                }
                match self.verify_new(key, &digest).await {
                    Checked::Known(index) => index,
                    Checked::Rejected => {
                        self.failed(client);
                        return Err(Refusal::Unknown);
                    }
                }
            }
        };
        let entry = self.entries.get(index).ok_or(Refusal::Unknown)?;
        Ok(Caller {
            subject: entry.subject.clone(),
            scopes: entry.scopes.clone(),
            rate_limit: entry.rate_limit_per_minute.or(self.default_limit),
        })
    }

    /// The entry `key` matches, checked with argon2 against only the candidates its id
    /// allows — once: a burst of first requests with one key waits for one check, not
    /// one each (each argon2 check takes 19 MiB), and the verdict is cached.
    async fn verify_new(&self, key: &str, digest: &[u8; 32]) -> Checked {
        let found = self.argon2_check(key, digest).await;
        match found {
            Checked::Known(index) => {
                lock(&self.verified).insert(*digest, index);
            }
            Checked::Rejected => {
                let mut rejected = lock(&self.rejected);
                if !rejected.contains(digest) {
                    if rejected.len() >= REJECTED_MEMORY {
                        rejected.pop_front();
                    }
                    rejected.push_back(*digest);
                }
            }
        }
        found
    }

    async fn argon2_check(&self, key: &str, digest: &[u8; 32]) -> Checked {
        let id = key_id(key);
        let candidates: Vec<usize> = self
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| match (&e.id, id) {
                (Some(wanted), Some(id)) => wanted == id,
                (None, _) => true,
                (Some(_), None) => false,
            })
            .map(|(n, _)| n)
            .collect();
        if candidates.is_empty() {
            return Checked::Rejected;
        }
        let Ok(_permit) = Arc::clone(&self.argon2).acquire_owned().await else {
            return Checked::Rejected;
        };
        // Another request may have checked the same key while this one waited.
        if let Some(index) = lock(&self.verified).get(digest).copied() {
            return Checked::Known(index);
        }
        if lock(&self.rejected).contains(digest) {
            return Checked::Rejected;
        }
        self.checks
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let entries = Arc::clone(&self.entries);
        let key = key.to_string();
        tokio::task::spawn_blocking(move || {
            candidates
                .into_iter()
                .find(|n| entries.get(*n).is_some_and(|e| verify(&key, &e.key_hash)))
        })
        .await
        .ok()
        .flatten()
        .map_or(Checked::Rejected, Checked::Known)
    }

    /// Refuses a client over its wrong-key allowance, saying when to retry.
    fn throttled(&self, client: IpAddr) -> Result<(), Refusal> {
        let mut failures = lock(&self.failures);
        match failures.get_mut(&client) {
            Some(seen) if seen.count >= FAILURES_PER_MINUTE => {
                let left = Duration::from_secs(60).saturating_sub(seen.since.elapsed());
                if left.is_zero() {
                    return Ok(());
                }
                // One new key every PROBE_GAP is still checked.
                let due = seen.probed.is_none_or(|at| at.elapsed() >= PROBE_GAP);
                if due {
                    seen.probed = Some(Instant::now());
                    Ok(())
                } else {
                    Err(Refusal::Throttled(PROBE_GAP.as_secs().max(1)))
                }
            }
            _ => Ok(()),
        }
    }

    /// Counts a wrong key from `client`.
    fn failed(&self, client: IpAddr) {
        let mut failures = lock(&self.failures);
        if failures.len() >= FAILURE_MEMORY && !failures.contains_key(&client) {
            failures.retain(|_, seen| seen.since.elapsed() < Duration::from_secs(60));
            if failures.len() >= FAILURE_MEMORY {
                return;
            }
        }
        let now = Instant::now();
        let window = failures.entry(client).or_insert(Failures {
            since: now,
            count: 0,
            probed: None,
        });
        if now.duration_since(window.since) >= Duration::from_secs(60) {
            *window = Failures {
                since: now,
                count: 0,
                probed: None,
            };
        }
        window.count += 1;
    }
}

/// What checking a new key found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Checked {
    /// The entry it matches.
    Known(usize),
    /// None.
    Rejected,
}

/// The id in a key made by `--api-key-hash` (`lk_<id>_<secret>`).
fn key_id(key: &str) -> Option<&str> {
    let rest = key.strip_prefix("lk_")?;
    let (id, secret) = rest.split_once('_')?;
    (!id.is_empty() && !secret.is_empty()).then_some(id)
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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

/// A new key made by `loki --api-key-hash`.
#[derive(Debug, Clone)]
pub struct NewKey {
    /// `lk_<id>_<secret>`, given to the client.
    pub key: String,
    /// The id the key carries, for the config entry.
    pub id: String,
    /// Its argon2id hash, for the config entry.
    pub hash: String,
}

/// Why a key could not be made.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("no randomness available")]
    NoRandomness,
    #[error("cannot hash the key: {0}")]
    Hash(String),
}

/// A new random key, its id and its argon2id hash (`loki --api-key-hash`).
pub fn new_key() -> Result<NewKey, KeyError> {
    use ring::rand::SecureRandom;
    let random = ring::rand::SystemRandom::new();
    let mut id_bytes = [0u8; 4];
    let mut key_bytes = [0u8; 24];
    let mut salt_bytes = [0u8; 16];
    random
        .fill(&mut id_bytes)
        .and_then(|()| random.fill(&mut key_bytes))
        .and_then(|()| random.fill(&mut salt_bytes))
        .map_err(|_| KeyError::NoRandomness)?;
    let id = hex(&id_bytes);
    let key = format!("lk_{id}_{}", hex(&key_bytes));
    let hash = hash_key(&key, &salt_bytes)?;
    Ok(NewKey { key, id, hash })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hash_key(key: &str, salt: &[u8]) -> Result<String, KeyError> {
    let salt = SaltString::encode_b64(salt).map_err(|e| KeyError::Hash(e.to_string()))?;
    argon2::Argon2::default()
        .hash_password(key.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| KeyError::Hash(e.to_string()))
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

    fn local() -> IpAddr {
        IpAddr::from([127, 0, 0, 1])
    }

    fn entry(subject: &str, id: Option<&str>, hash: String, scopes: &[&str]) -> KeyEntry {
        KeyEntry {
            subject: subject.into(),
            id: id.map(str::to_string),
            key_hash: hash,
            scopes: scopes.iter().map(ToString::to_string).collect(),
            rate_limit_per_minute: Some(2),
        }
    }

    #[tokio::test]
    async fn keys_verify_by_hash_once_and_carry_their_scopes() {
        let hash = hash_key("lk_secret", b"0123456789abcdef").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        let keys = Keys::new(
            &AuthConfig::StaticKeys {
                keys: vec![entry("ci", None, hash, &["read"])],
            },
            None,
        );
        let caller = keys.check(Some("lk_secret"), local()).await.unwrap();
        assert_eq!(caller.subject, "ci");
        assert!(caller.may("read:sessions") && !caller.may("write:sessions"));
        assert!(
            keys.check(Some("lk_secret"), local()).await.is_ok(),
            "cached"
        );
        assert_eq!(
            keys.check(Some("wrong"), local()).await,
            Err(Refusal::Unknown)
        );
        assert_eq!(keys.check(None, local()).await, Err(Refusal::Unknown));
        let limiter = RateLimiter::default();
        assert!(limiter.admit(&caller).is_ok());
        assert!(limiter.admit(&caller).is_ok());
        assert!(limiter.admit(&caller).unwrap_err() > 0);
    }

    #[tokio::test]
    async fn a_key_with_an_id_is_checked_against_its_entry_only_and_floods_are_throttled() {
        let made = new_key().unwrap();
        let keys = Keys::new(
            &AuthConfig::StaticKeys {
                keys: vec![entry("ci", Some(&made.id), made.hash.clone(), &["*"])],
            },
            None,
        );
        assert_eq!(key_id(&made.key), Some(made.id.as_str()));
        assert!(keys.check(Some(&made.key), local()).await.is_ok());
        // A key naming no entry costs no argon2 at all; after the allowance the address
        // is refused unchecked, even with the right key, until the minute is over.
        let started = Instant::now();
        for n in 0..FAILURES_PER_MINUTE {
            let wrong = format!("lk_ffffffff_{n}");
            assert_eq!(
                keys.check(Some(&wrong), local()).await,
                Err(Refusal::Unknown)
            );
        }
        assert!(started.elapsed() < Duration::from_secs(1));
        // Over the allowance, one new key every PROBE_GAP is still checked (a valid
        // key behind the same NAT gets in), the rest are refused unchecked.
        assert_eq!(
            keys.check(Some("lk_ffffffff_more"), local()).await,
            Err(Refusal::Unknown)
        );
        assert!(matches!(
            keys.check(Some("lk_ffffffff_again"), local()).await,
            Err(Refusal::Throttled(_))
        ));
        // A key seen before still works; other addresses are not affected.
        assert!(keys.check(Some(&made.key), local()).await.is_ok());
        let other = IpAddr::from([127, 0, 0, 2]);
        assert_eq!(
            keys.check(Some("lk_ffffffff_x"), other).await,
            Err(Refusal::Unknown)
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_burst_of_first_requests_checks_a_key_once_and_a_nat_s_valid_key_gets_in() {
        let made = new_key().unwrap();
        let keys = Arc::new(Keys::new(
            &AuthConfig::StaticKeys {
                keys: vec![entry("ci", None, made.hash.clone(), &["*"])],
            },
            None,
        ));
        let burst: Vec<_> = (0..20)
            .map(|_| {
                let (keys, key) = (Arc::clone(&keys), made.key.clone());
                tokio::spawn(async move { keys.check(Some(&key), local()).await.is_ok() })
            })
            .collect();
        for one in burst {
            assert!(one.await.unwrap());
        }
        assert_eq!(keys.checks.load(std::sync::atomic::Ordering::Relaxed), 1);
        // An address over the wrong-key allowance (a NAT shared with a flood) still gets
        // a valid key it never used checked.
        let other = new_key().unwrap();
        let keys = Keys::new(
            &AuthConfig::StaticKeys {
                keys: vec![entry("ci", None, other.hash.clone(), &["*"])],
            },
            None,
        );
        for _ in 0..FAILURES_PER_MINUTE {
            keys.failed(local());
        }
        assert!(keys.check(Some(&other.key), local()).await.is_ok());
    }

    #[test]
    fn scopes_coarse_fine_and_sessions_of_others() {
        let caller = |scopes: &[&str]| Caller {
            subject: "a".into(),
            scopes: scopes.iter().map(ToString::to_string).collect(),
            rate_limit: None,
        };
        assert!(caller(&["*"]).may("write:sessions") && caller(&["*"]).sees_all_sessions());
        assert!(caller(&["write"]).may("run:models") && !caller(&["write"]).may("read:models"));
        assert!(caller(&["read:sessions"]).may("read:sessions"));
        assert!(!caller(&["read:sessions"]).may("read:models"));
        assert!(caller(&["read"]).owns(Some("a")) && !caller(&["read"]).owns(Some("b")));
        assert!(!caller(&["read"]).owns(None) && caller(&["admin"]).owns(None));
        assert!(caller(&["admin:sessions"]).owns(Some("b")));
    }

    #[test]
    fn new_keys_are_random_and_verify() {
        let made = new_key().unwrap();
        let other = new_key().unwrap();
        assert_ne!(made.key, other.key);
        assert!(made.key.starts_with(&format!("lk_{}_", made.id)));
        assert!(verify(&made.key, &made.hash));
        assert!(!verify(&other.key, &made.hash));
    }
}
