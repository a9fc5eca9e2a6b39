//! The vault file format: an ASCII-armoured age file, scrypt passphrase recipient, whose
//! plaintext is a YAML mapping `NAME: value`.

use std::collections::BTreeMap;
use std::path::Path;

use age::secrecy::SecretString;

use super::VaultError;

/// The secrets as an armoured age file.
pub(super) fn encrypt(
    entries: &BTreeMap<String, String>,
    passphrase: &SecretString,
) -> Result<String, VaultError> {
    let plain = serde_yaml::to_string(entries).map_err(|e| VaultError::Corrupted {
        path: "vault".into(),
        reason: e.to_string(),
    })?;
    let recipient = age::scrypt::Recipient::new(passphrase.clone());
    age::encrypt_and_armor(&recipient, plain.as_bytes()).map_err(|e| VaultError::Corrupted {
        path: "vault".into(),
        reason: format!("cannot encrypt: {e}"),
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
    let identity = age::scrypt::Identity::new(passphrase.clone());
    let plain = age::decrypt(&identity, bytes).map_err(|e| match e {
        age::DecryptError::DecryptionFailed
        | age::DecryptError::KeyDecryptionFailed
        | age::DecryptError::NoMatchingKeys => VaultError::WrongPassword(path.to_path_buf()),
        age::DecryptError::InvalidHeader | age::DecryptError::UnknownFormat => {
            corrupted("not an age file".into())
        }
        age::DecryptError::Io(_) => corrupted("truncated, or not an age file".into()),
        other => corrupted(other.to_string()),
    })?;
    let text = String::from_utf8(plain).map_err(|_| corrupted("not UTF-8 inside".into()))?;
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
}
