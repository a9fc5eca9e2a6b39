//! The age v1 file format (age-encryption.org/v1), for the one recipient type the vault
//! uses: a passphrase (an `scrypt` stanza), optionally in ASCII armour.
//!
//! A file is a text header — the version line, one stanza carrying the file key wrapped
//! under a key derived from the passphrase, and a MAC over the header — followed by the
//! payload: a 16-byte nonce and the plaintext in 64 KiB ChaCha20-Poly1305 chunks, the
//! last one flagged. Everything read is untrusted: the work factor is checked before any
//! scrypt work, the scrypt stanza must be the only one (as the format requires), base64
//! must be canonical, and a chunk that does not authenticate ends the read.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use secrecy::{ExposeSecret, SecretString};
use sha2::Sha256;
use zeroize::Zeroizing;

const VERSION_LINE: &str = "age-encryption.org/v1";
const SCRYPT_LABEL: &[u8] = b"age-encryption.org/v1/scrypt";
const ARMOR_BEGIN: &str = "-----BEGIN AGE ENCRYPTED FILE-----";
const ARMOR_END: &str = "-----END AGE ENCRYPTED FILE-----";
/// Plaintext bytes per payload chunk; each chunk carries a 16-byte tag.
const CHUNK: usize = 64 * 1024;
const TAG: usize = 16;
/// Columns of a stanza body line and of an armour line.
const COLUMNS: usize = 64;

/// Why a file could not be read.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AgeError {
    #[error("not an age file")]
    NotAge,
    #[error("the header is malformed: {0}")]
    Header(&'static str),
    #[error("it is not encrypted to a passphrase")]
    NoPassphraseStanza,
    #[error("it asks for scrypt work 2^{required}, more than the limit 2^{max}")]
    ExcessiveWork { required: u8, max: u8 },
    #[error("the passphrase does not open it")]
    WrongPassphrase,
    #[error("the header was altered")]
    HeaderMac,
    #[error("the contents are truncated or altered")]
    Payload,
    #[error("the system random number generator failed")]
    Random,
}

/// `plain` encrypted to `passphrase` with scrypt work 2^`log_n`, in ASCII armour.
pub fn encrypt_armored(
    plain: &[u8],
    passphrase: &SecretString,
    log_n: u8,
) -> Result<String, AgeError> {
    let file_key = Zeroizing::new(random::<16>()?);
    let salt = random::<16>()?;
    let wrap_key = scrypt_key(passphrase, &salt, log_n)?;
    let wrapped = ChaCha20Poly1305::new(Key::from_slice(wrap_key.as_slice()))
        .encrypt(Nonce::from_slice(&[0; 12]), file_key.as_slice())
        .map_err(|_| AgeError::Payload)?;

    let mut header = format!(
        "{VERSION_LINE}\n-> scrypt {} {log_n}\n",
        STANDARD_NO_PAD.encode(salt)
    );
    push_wrapped(&mut header, &STANDARD_NO_PAD.encode(wrapped));
    header.push_str("---");
    let mac = header_mac(file_key.as_slice(), header.as_bytes())?
        .finalize()
        .into_bytes();
    header.push(' ');
    header.push_str(&STANDARD_NO_PAD.encode(mac));
    header.push('\n');

    let nonce = random::<16>()?;
    let mut binary = header.into_bytes();
    binary.extend_from_slice(&nonce);
    let payload = ChaCha20Poly1305::new(Key::from_slice(
        payload_key(file_key.as_slice(), &nonce)?.as_slice(),
    ));
    let count = plain.len().div_ceil(CHUNK).max(1);
    for index in 0..count {
        let piece =
            &plain[(index * CHUNK).min(plain.len())..((index + 1) * CHUNK).min(plain.len())];
        let sealed = payload
            .encrypt(&chunk_nonce(index, index + 1 == count)?, piece)
            .map_err(|_| AgeError::Payload)?;
        binary.extend_from_slice(&sealed);
    }

    let mut armored = format!("{ARMOR_BEGIN}\n");
    // Armour lines are full but for the last; unlike a stanza body, no empty line.
    for line in STANDARD.encode(&binary).as_bytes().chunks(COLUMNS) {
        armored.push_str(std::str::from_utf8(line).map_err(|_| AgeError::Payload)?);
        armored.push('\n');
    }
    armored.push_str(ARMOR_END);
    armored.push('\n');
    Ok(armored)
}

/// The plaintext of `file` (armoured or binary), opened with `passphrase`; a work factor
/// above 2^`max_log_n` is refused before any work.
pub fn decrypt(
    file: &[u8],
    passphrase: &SecretString,
    max_log_n: u8,
) -> Result<Zeroizing<Vec<u8>>, AgeError> {
    let binary = dearmor(file)?;
    let (header, mac, payload) = split_header(&binary)?;
    let stanza = passphrase_stanza(header)?;
    if stanza.log_n > max_log_n {
        return Err(AgeError::ExcessiveWork {
            required: stanza.log_n,
            max: max_log_n,
        });
    }
    let wrap_key = scrypt_key(passphrase, &stanza.salt, stanza.log_n)?;
    let file_key = Zeroizing::new(
        ChaCha20Poly1305::new(Key::from_slice(wrap_key.as_slice()))
            .decrypt(Nonce::from_slice(&[0; 12]), stanza.wrapped.as_slice())
            .map_err(|_| AgeError::WrongPassphrase)?,
    );
    header_mac(&file_key, header)?
        .verify_slice(&mac)
        .map_err(|_| AgeError::HeaderMac)?;

    if payload.len() < 16 + TAG {
        return Err(AgeError::Payload);
    }
    let (nonce, sealed) = payload.split_at(16);
    let key = ChaCha20Poly1305::new(Key::from_slice(payload_key(&file_key, nonce)?.as_slice()));
    let pieces: Vec<&[u8]> = sealed.chunks(CHUNK + TAG).collect();
    let mut plain = Zeroizing::new(Vec::with_capacity(sealed.len()));
    for (index, piece) in pieces.iter().enumerate() {
        let last = index + 1 == pieces.len();
        // Only the first chunk of an empty file may be empty.
        if piece.len() < TAG || (last && index > 0 && piece.len() == TAG) {
            return Err(AgeError::Payload);
        }
        let opened = key
            .decrypt(&chunk_nonce(index, last)?, *piece)
            .map_err(|_| AgeError::Payload)?;
        plain.extend_from_slice(&opened);
    }
    Ok(plain)
}

/// The scrypt stanza of a header.
struct Stanza {
    salt: Vec<u8>,
    log_n: u8,
    wrapped: Vec<u8>,
}

/// A file cut into the header through `---`, the header MAC, and the payload.
type Parts<'a> = (&'a [u8], Vec<u8>, &'a [u8]);

/// The header through `---`, the MAC, and the payload after the MAC line.
fn split_header(binary: &[u8]) -> Result<Parts<'_>, AgeError> {
    if !binary.starts_with(VERSION_LINE.as_bytes()) {
        return Err(AgeError::NotAge);
    }
    let marker = b"\n--- ";
    let at = binary
        .windows(marker.len())
        .position(|w| w == marker)
        .ok_or(AgeError::Header("no MAC line"))?;
    let header_end = at + 4; // through "---"
    let line_end = binary[header_end..]
        .iter()
        .position(|b| *b == b'\n')
        .ok_or(AgeError::Header("no end of the MAC line"))?
        + header_end;
    let mac = STANDARD_NO_PAD
        .decode(&binary[header_end + 1..line_end])
        .map_err(|_| AgeError::Header("the MAC is not base64"))?;
    if mac.len() != 32 {
        return Err(AgeError::Header("the MAC has the wrong length"));
    }
    Ok((&binary[..header_end], mac, &binary[line_end + 1..]))
}

/// The one scrypt stanza of `header` (text through `---`).
fn passphrase_stanza(header: &[u8]) -> Result<Stanza, AgeError> {
    let text = std::str::from_utf8(header).map_err(|_| AgeError::Header("not text"))?;
    let mut lines = text.split('\n');
    if lines.next() != Some(VERSION_LINE) {
        return Err(AgeError::NotAge);
    }
    let mut stanzas: Vec<(Vec<&str>, String)> = Vec::new();
    let mut open = false;
    for line in lines {
        if line == "---" {
            break;
        }
        if let Some(args) = line.strip_prefix("-> ") {
            if open {
                return Err(AgeError::Header("a stanza body is not closed"));
            }
            stanzas.push((args.split(' ').collect(), String::new()));
            open = true;
            continue;
        }
        let Some((_, body)) = stanzas.last_mut().filter(|_| open) else {
            return Err(AgeError::Header("a line outside any stanza"));
        };
        if line.len() > COLUMNS {
            return Err(AgeError::Header("a stanza line is too long"));
        }
        body.push_str(line);
        // A body ends with its first line shorter than a full one.
        open = line.len() == COLUMNS;
    }
    if open {
        return Err(AgeError::Header("a stanza body is not closed"));
    }
    let scrypt = stanzas
        .iter()
        .filter(|(args, _)| args.first() == Some(&"scrypt"));
    let [(args, body)] = scrypt.collect::<Vec<_>>()[..] else {
        return Err(AgeError::NoPassphraseStanza);
    };
    if stanzas.len() != 1 {
        return Err(AgeError::Header("a passphrase stanza must be the only one"));
    }
    let [_, salt, log_n] = args[..] else {
        return Err(AgeError::Header(
            "the scrypt stanza has the wrong arguments",
        ));
    };
    let salt = base64_bytes(salt, 16, "the scrypt salt is not 16 bytes of base64")?;
    let canonical = !log_n.starts_with('0') && log_n.bytes().all(|b| b.is_ascii_digit());
    let log_n: u8 = log_n
        .parse()
        .ok()
        .filter(|n| canonical && (1..64).contains(n))
        .ok_or(AgeError::Header("the scrypt work factor is not a number"))?;
    let wrapped = base64_bytes(body, 32, "the wrapped key is not 32 bytes of base64")?;
    Ok(Stanza {
        salt,
        log_n,
        wrapped,
    })
}

/// `len` bytes written as unpadded base64 (the header's encoding); `Header(why)` when
/// they are not.
fn base64_bytes(text: &str, len: usize, why: &'static str) -> Result<Vec<u8>, AgeError> {
    STANDARD_NO_PAD
        .decode(text)
        .ok()
        .filter(|bytes| bytes.len() == len)
        .ok_or(AgeError::Header(why))
}

/// The binary file inside ASCII armour, or `file` itself when it is not armoured.
fn dearmor(file: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, AgeError> {
    let trimmed = file.trim_ascii_start();
    if !trimmed.starts_with(ARMOR_BEGIN.as_bytes()) {
        return Ok(std::borrow::Cow::Borrowed(file));
    }
    let text = std::str::from_utf8(trimmed).map_err(|_| AgeError::NotAge)?;
    let inner = text[ARMOR_BEGIN.len()..]
        .split_once(ARMOR_END)
        .map(|(inner, _)| inner)
        .ok_or(AgeError::Header("the armour has no end line"))?;
    let base64: String = inner.split_whitespace().collect();
    STANDARD
        .decode(base64)
        .map(std::borrow::Cow::Owned)
        .map_err(|_| AgeError::Header("the armour is not base64"))
}

/// `text` in lines of [`COLUMNS`], the last one shorter (empty when `text` fills whole
/// lines), each ending in a newline.
fn push_wrapped(out: &mut String, text: &str) {
    let mut rest = text;
    loop {
        let (line, tail) = rest.split_at(rest.len().min(COLUMNS));
        out.push_str(line);
        out.push('\n');
        if line.len() < COLUMNS {
            return;
        }
        rest = tail;
    }
}

fn scrypt_key(
    passphrase: &SecretString,
    salt: &[u8],
    log_n: u8,
) -> Result<Zeroizing<[u8; 32]>, AgeError> {
    let mut label = SCRYPT_LABEL.to_vec();
    label.extend_from_slice(salt);
    let params = scrypt::Params::new(log_n, 8, 1, 32)
        .map_err(|_| AgeError::Header("the scrypt work factor is out of range"))?;
    let mut key = Zeroizing::new([0u8; 32]);
    scrypt::scrypt(
        passphrase.expose_secret().as_bytes(),
        &label,
        &params,
        key.as_mut_slice(),
    )
    .map_err(|_| AgeError::Header("the scrypt parameters are invalid"))?;
    Ok(key)
}

fn header_mac(file_key: &[u8], header: &[u8]) -> Result<Hmac<Sha256>, AgeError> {
    let key = hkdf(None, file_key, b"header")?;
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(key.as_slice()).map_err(|_| AgeError::HeaderMac)?;
    mac.update(header);
    Ok(mac)
}

fn payload_key(file_key: &[u8], nonce: &[u8]) -> Result<Zeroizing<[u8; 32]>, AgeError> {
    hkdf(Some(nonce), file_key, b"payload")
}

fn hkdf(salt: Option<&[u8]>, ikm: &[u8], info: &[u8]) -> Result<Zeroizing<[u8; 32]>, AgeError> {
    let mut out = Zeroizing::new([0u8; 32]);
    Hkdf::<Sha256>::new(salt, ikm)
        .expand(info, out.as_mut_slice())
        .map_err(|_| AgeError::Payload)?;
    Ok(out)
}

/// The STREAM nonce of chunk `index`: an 11-byte big-endian counter and the last-chunk
/// flag.
fn chunk_nonce(index: usize, last: bool) -> Result<Nonce, AgeError> {
    let counter = u64::try_from(index).map_err(|_| AgeError::Payload)?;
    let mut nonce = [0u8; 12];
    nonce[3..11].copy_from_slice(&counter.to_be_bytes());
    nonce[11] = u8::from(last);
    Ok(*Nonce::from_slice(&nonce))
}

fn random<const N: usize>() -> Result<[u8; N], AgeError> {
    let mut bytes = [0u8; N];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
        .map_err(|_| AgeError::Random)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pass(text: &str) -> SecretString {
        SecretString::from(text.to_string())
    }

    #[test]
    fn round_trips_empty_small_and_chunk_boundary_plaintexts() {
        for len in [0, 1, 100, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK] {
            let plain: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let file = encrypt_armored(&plain, &pass("p"), 2).unwrap();
            assert!(file.starts_with(ARMOR_BEGIN), "{len}");
            assert_eq!(
                *decrypt(file.as_bytes(), &pass("p"), 10).unwrap(),
                plain,
                "{len}"
            );
            let binary = dearmor(file.as_bytes()).unwrap().into_owned();
            assert_eq!(*decrypt(&binary, &pass("p"), 10).unwrap(), plain, "{len}");
        }
    }

    /// Every armour and stanza layout (lengths crossing whole base64 lines) opens in the
    /// reference implementation.
    #[test]
    fn the_reference_age_crate_opens_every_length() {
        use std::io::Read as _;
        for len in 0..120 {
            let plain = vec![b'v'; len];
            let file = encrypt_armored(&plain, &pass("p"), 2).unwrap();
            let identity = age::scrypt::Identity::new(pass("p"));
            let reader = age::armor::ArmoredReader::new(file.as_bytes());
            let decryptor = age::Decryptor::new_buffered(reader).unwrap();
            let mut opened = Vec::new();
            decryptor
                .decrypt(std::iter::once(&identity as &dyn age::Identity))
                .unwrap()
                .read_to_end(&mut opened)
                .unwrap();
            assert_eq!(opened, plain, "{len}");
        }
    }

    #[test]
    fn a_wrong_passphrase_altered_header_or_payload_is_told_apart() {
        let file = encrypt_armored(b"secret", &pass("right"), 2).unwrap();
        let binary = dearmor(file.as_bytes()).unwrap().into_owned();
        assert_eq!(
            decrypt(&binary, &pass("wrong"), 10).unwrap_err(),
            AgeError::WrongPassphrase
        );
        let mut payload = binary.clone();
        let last = payload.len() - 1;
        payload[last] ^= 1;
        assert_eq!(
            decrypt(&payload, &pass("right"), 10).unwrap_err(),
            AgeError::Payload
        );
        let truncated = &binary[..binary.len() - 5];
        assert_eq!(
            decrypt(truncated, &pass("right"), 10).unwrap_err(),
            AgeError::Payload
        );
        let header = String::from_utf8_lossy(&binary).replacen(" 2\n", " 3\n", 1);
        let altered = [header.as_bytes()].concat();
        assert!(decrypt(&altered, &pass("right"), 10).is_err());
        assert_eq!(
            decrypt(b"garbage", &pass("right"), 10).unwrap_err(),
            AgeError::NotAge
        );
    }

    #[test]
    fn too_much_work_is_refused_before_any_is_done() {
        let file = encrypt_armored(b"x", &pass("p"), 2).unwrap();
        let binary = dearmor(file.as_bytes()).unwrap().into_owned();
        let at = binary.windows(3).position(|w| w == b" 2\n").unwrap();
        let crafted = [&binary[..at], b" 40\n", &binary[at + 3..]].concat();
        let started = std::time::Instant::now();
        assert_eq!(
            decrypt(&crafted, &pass("p"), 12).unwrap_err(),
            AgeError::ExcessiveWork {
                required: 40,
                max: 12
            }
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
    }

    #[test]
    fn a_second_stanza_beside_the_passphrase_is_refused() {
        let file = encrypt_armored(b"x", &pass("p"), 2).unwrap();
        let binary = dearmor(file.as_bytes()).unwrap().into_owned();
        let text = String::from_utf8_lossy(&binary).into_owned();
        let doubled = text.replacen("-> scrypt", "-> X25519 abc\nAAAA\n-> scrypt", 1);
        assert!(matches!(
            decrypt(doubled.as_bytes(), &pass("p"), 10),
            Err(AgeError::Header(_))
        ));
    }
}
