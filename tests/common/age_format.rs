//! A decryptor for the age v1 file format (scrypt recipients, ASCII armour), written from
//! the specification (age-encryption.org/v1) with RustCrypto primitives — independent of
//! the `age` crate loki uses, so a test can check that the vault is a standard age file.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use chacha20poly1305::aead::Aead;
use chacha20poly1305::{ChaCha20Poly1305, KeyInit, Nonce};
use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use sha2::Sha256;

const CHUNK: usize = 64 * 1024;

/// Decrypts an (optionally armoured) age file encrypted to `passphrase`.
pub fn decrypt_with_passphrase(file: &[u8], passphrase: &str) -> Result<Vec<u8>, String> {
    let binary = dearmor(file)?;
    // The header is text up to and including the `---` line.
    let mac_at = find(&binary, b"\n--- ").ok_or("no header MAC line")? + 1;
    let line_end = binary[mac_at..]
        .iter()
        .position(|b| *b == b'\n')
        .ok_or("unterminated MAC line")?
        + mac_at;
    let header = std::str::from_utf8(&binary[..mac_at]).map_err(|e| e.to_string())?;
    let mac_line = std::str::from_utf8(&binary[mac_at..line_end]).map_err(|e| e.to_string())?;
    let payload = &binary[line_end + 1..];

    let mut lines = header.lines();
    if lines.next() != Some("age-encryption.org/v1") {
        return Err("not an age v1 file".into());
    }
    let mut file_key = None;
    let mut stanza: Option<Vec<String>> = None;
    let mut body = String::new();
    for line in lines {
        if let Some(args) = line.strip_prefix("-> ") {
            stanza = Some(args.split(' ').map(str::to_string).collect());
            body.clear();
            continue;
        }
        body.push_str(line);
        // A body ends with its first line shorter than 64 columns.
        if line.len() < 64
            && let Some(args) = stanza.take()
            && args.first().map(String::as_str) == Some("scrypt")
        {
            let salt = STANDARD_NO_PAD
                .decode(&args[1])
                .map_err(|e| e.to_string())?;
            let log_n: u8 = args[2].parse().map_err(|_| "bad work factor")?;
            let mut label = b"age-encryption.org/v1/scrypt".to_vec();
            label.extend_from_slice(&salt);
            let params = scrypt::Params::new(log_n, 8, 1, 32).map_err(|e| e.to_string())?;
            let mut wrap_key = [0u8; 32];
            scrypt::scrypt(passphrase.as_bytes(), &label, &params, &mut wrap_key)
                .map_err(|e| e.to_string())?;
            let wrapped = STANDARD_NO_PAD.decode(&body).map_err(|e| e.to_string())?;
            let key = ChaCha20Poly1305::new_from_slice(&wrap_key).map_err(|e| e.to_string())?;
            file_key = Some(
                key.decrypt(Nonce::from_slice(&[0; 12]), wrapped.as_slice())
                    .map_err(|_| "wrong passphrase")?,
            );
        }
    }
    let file_key = file_key.ok_or("no scrypt recipient")?;

    // Header MAC: HMAC-SHA-256 keyed with HKDF(file key, "header") over the header text
    // through `---`.
    let mut mac_key = [0u8; 32];
    Hkdf::<Sha256>::new(None, &file_key)
        .expand(b"header", &mut mac_key)
        .map_err(|e| e.to_string())?;
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&mac_key).map_err(|e| e.to_string())?;
    mac.update(format!("{header}---").as_bytes());
    let expected = STANDARD_NO_PAD
        .decode(mac_line.trim_start_matches("--- "))
        .map_err(|e| e.to_string())?;
    mac.verify_slice(&expected)
        .map_err(|_| "header MAC mismatch")?;

    // Payload: a 16-byte nonce, then STREAM chunks of 64 KiB (+16-byte tags).
    let (nonce, chunks) = payload.split_at(16);
    let mut payload_key = [0u8; 32];
    Hkdf::<Sha256>::new(Some(nonce), &file_key)
        .expand(b"payload", &mut payload_key)
        .map_err(|e| e.to_string())?;
    let key = ChaCha20Poly1305::new_from_slice(&payload_key).map_err(|e| e.to_string())?;
    let pieces: Vec<&[u8]> = chunks.chunks(CHUNK + 16).collect();
    let mut plain = Vec::new();
    for (i, piece) in pieces.iter().enumerate() {
        let mut chunk_nonce = [0u8; 12];
        chunk_nonce[3..11].copy_from_slice(&(i as u64).to_be_bytes());
        if i + 1 == pieces.len() {
            chunk_nonce[11] = 1;
        }
        plain.extend(
            key.decrypt(Nonce::from_slice(&chunk_nonce), *piece)
                .map_err(|_| format!("chunk {i} does not authenticate"))?,
        );
    }
    Ok(plain)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The binary file inside `-----BEGIN AGE ENCRYPTED FILE-----` armour (or the input).
fn dearmor(file: &[u8]) -> Result<Vec<u8>, String> {
    let text = String::from_utf8_lossy(file);
    let Some(rest) = text
        .trim_start()
        .strip_prefix("-----BEGIN AGE ENCRYPTED FILE-----")
    else {
        return Ok(file.to_vec());
    };
    let inner = rest
        .split("-----END AGE ENCRYPTED FILE-----")
        .next()
        .ok_or("unterminated armour")?;
    let b64: String = inner.split_whitespace().collect();
    STANDARD.decode(b64).map_err(|e| e.to_string())
}
