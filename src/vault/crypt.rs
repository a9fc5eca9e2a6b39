//! The vault file format: an ASCII-armoured age file, scrypt passphrase recipient, whose
//! plaintext is a YAML mapping `NAME: value`.

use std::collections::BTreeMap;
use std::path::Path;

use secrecy::SecretString;

use super::VaultError;
use super::age_file::{self, AgeError};

/// The scrypt work factor (log2 N) of every vault loki writes: the same on every machine
/// and under any load (age would otherwise time this machine), about a quarter of a
/// second and 256 MiB. Debug builds (the test suite), whose unoptimised scrypt is a
/// hundred times slower, write 2^12.
pub(super) const WORK_FACTOR: u8 = if cfg!(debug_assertions) { 12 } else { 18 };

/// The most work a vault may ask for. Fixed, so an intact file loki wrote opens whatever
/// the machine is doing (age's own limit follows a timing taken at each start, and a busy
/// machine once refused a good file); high enough for files other age tools wrote on
/// fast machines, low enough that a crafted file cannot ask for hours and tens of GiB.
pub(super) const MAX_WORK_FACTOR: u8 = 22;

/// The secrets as an armoured age file.
pub(super) fn encrypt(
    entries: &BTreeMap<String, String>,
    passphrase: &SecretString,
) -> Result<String, VaultError> {
    let plain = serde_yaml::to_string(entries).map_err(|e| VaultError::Corrupted {
        path: "vault".into(),
        reason: e.to_string(),
    })?;
    age_file::encrypt_armored(plain.as_bytes(), passphrase, WORK_FACTOR).map_err(|e| {
        VaultError::Corrupted {
            path: "vault".into(),
            reason: format!("cannot encrypt: {e}"),
        }
    })
}

/// The secrets in `bytes` (armoured or binary age).
pub(super) fn decrypt(
    bytes: &[u8],
    passphrase: &SecretString,
    path: &Path,
) -> Result<BTreeMap<String, String>, VaultError> {
    let corrupted = |reason: String| VaultError::Corrupted {
        path: path.to_path_buf(),
        reason,
    };
    let plain = age_file::decrypt(bytes, passphrase, MAX_WORK_FACTOR).map_err(|e| match e {
        AgeError::WrongPassphrase => VaultError::WrongPassword(path.to_path_buf()),
        AgeError::ExcessiveWork { required, .. } => VaultError::ExcessiveWork {
            path: path.to_path_buf(),
            log_n: required,
            max: MAX_WORK_FACTOR,
            written: WORK_FACTOR,
        },
        other => corrupted(other.to_string()),
    })?;
    let text =
        String::from_utf8(plain.to_vec()).map_err(|_| corrupted("not UTF-8 inside".into()))?;
    if text.trim().is_empty() {
        return Ok(BTreeMap::new());
    }
    serde_yaml::from_str(&text).map_err(|_| corrupted("not a mapping of names to values".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_wrong_passphrase() {
        let pass = SecretString::from("correct horse".to_string());
        let mut entries = BTreeMap::new();
        entries.insert("TOKEN".to_string(), "value: with colon".to_string());
        let armoured = encrypt(&entries, &pass).unwrap();
        assert!(armoured.starts_with("-----BEGIN AGE ENCRYPTED FILE-----"));
        let path = Path::new("vault.age");
        assert_eq!(decrypt(armoured.as_bytes(), &pass, path).unwrap(), entries);
        let wrong = SecretString::from("battery staple".to_string());
        assert!(matches!(
            decrypt(armoured.as_bytes(), &wrong, path),
            Err(VaultError::WrongPassword(_))
        ));
        assert!(matches!(
            decrypt(b"garbage", &pass, path),
            Err(VaultError::Corrupted { .. })
        ));
    }

    /// The binary age file inside an armoured one.
    fn unarmour(armoured: &str) -> Vec<u8> {
        use base64::Engine;
        let body: String = armoured
            .lines()
            .filter(|l| !l.starts_with("-----"))
            .collect();
        base64::engine::general_purpose::STANDARD
            .decode(body)
            .unwrap()
    }

    #[test]
    fn vaults_are_written_with_the_fixed_work_factor_and_excess_is_not_called_damage() {
        let pass = SecretString::from("correct horse".to_string());
        let entries = BTreeMap::from([("K".to_string(), "v".to_string())]);
        let binary = unarmour(&encrypt(&entries, &pass).unwrap());
        let header = String::from_utf8_lossy(&binary[..120]).to_string();
        let stanza = header
            .lines()
            .find(|l| l.starts_with("-> scrypt "))
            .unwrap()
            .to_string();
        assert!(stanza.ends_with(&format!(" {WORK_FACTOR}")), "{stanza}");
        // The same file asking for 2^23: refused by the fixed limit, before any work,
        // and said as what it is.
        let at = binary
            .windows(stanza.len())
            .position(|w| w == stanza.as_bytes())
            .unwrap();
        let mut crafted = binary.clone();
        let digits = at + stanza.len() - WORK_FACTOR.to_string().len();
        crafted.splice(digits..at + stanza.len(), b"23".iter().copied());
        let err = decrypt(&crafted, &pass, Path::new("vault.age")).unwrap_err();
        assert!(
            matches!(
                err,
                VaultError::ExcessiveWork {
                    log_n: 23,
                    max: 22,
                    ..
                }
            ),
            "{err}"
        );
        assert!(!err.to_string().contains("damaged"), "{err}");
        assert_eq!(
            decrypt(&binary, &pass, Path::new("vault.age")).unwrap(),
            entries
        );
    }
}
