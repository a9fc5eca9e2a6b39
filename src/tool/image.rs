//! Image files a model asks `fs_read` or `fs_cat` for (png, jpg, gif, webp): a model
//! with vision is given the image itself (through [`super::ToolEnv::images`], which the
//! turn sends as an image part after the tool results) and a one-line result; a model
//! without vision gets only the line, saying it cannot see the image. The size in pixels
//! comes from the file's header, so no image library is linked in.

use std::path::Path;

use super::{ToolEnv, ToolError};

/// The largest image handed to a model: the most the big APIs take in one image part
/// (OpenAI's is 20 MB; larger ones are refused by the provider anyway).
const MAX_IMAGE_BYTES: u64 = 20 * 1024 * 1024;

/// Extensions read as images rather than text.
const EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp"];

/// Whether `path` names an image by its extension.
fn is_image_path(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| EXTENSIONS.iter().any(|x| e.eq_ignore_ascii_case(x)))
}

/// The image at `path` for the model: queued for a vision model, described for one
/// without. `Ok(None)` when `path` is not an image (by its extension, or its bytes: a
/// `.png` that holds text), so the caller reads it as text.
pub(super) fn read(env: &ToolEnv<'_>, path: &Path) -> Result<Option<String>, ToolError> {
    if !is_image_path(path) {
        return Ok(None);
    }
    let io = |e: std::io::Error| ToolError::Failed(format!("{}: {e}", path.display()));
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Ok(None);
    }
    let shown = path.file_name().map_or_else(
        || path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    if meta.len() > MAX_IMAGE_BYTES {
        return Err(ToolError::Failed(format!(
            "{shown} is an image of {} bytes, over the {MAX_IMAGE_BYTES}-byte limit for images given to a model",
            meta.len()
        )));
    }
    let bytes = std::fs::read(path).map_err(io)?;
    let Some(info) = ImageInfo::of(&bytes) else {
        return Ok(None);
    };
    let about = format!(
        "{shown}: {} image, {}×{}, {} bytes",
        info.format,
        info.width,
        info.height,
        bytes.len()
    );
    match env.images {
        Some(images) => {
            let url = crate::input::data_url(info.mime, &bytes);
            images
                .lock()
                .map_err(|_| ToolError::Failed("the image queue is unusable".into()))?
                .push(url);
            Ok(Some(format!("{about}; the image follows the tool results")))
        }
        None => Ok(Some(format!("{about}; this model cannot see images"))),
    }
}

/// What an image's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageInfo {
    /// `PNG`, `JPEG`, `GIF` or `WebP`.
    pub format: &'static str,
    /// Its MIME type.
    pub mime: &'static str,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl ImageInfo {
    /// The format and size of an image from its first bytes; `None` for anything that is
    /// not a PNG, JPEG, GIF or WebP image.
    pub fn of(bytes: &[u8]) -> Option<Self> {
        let info = |format, mime, (width, height)| Self {
            format,
            mime,
            width,
            height,
        };
        if bytes.starts_with(b"\x89PNG\r\n\x1a\n") {
            return Some(info(
                "PNG",
                "image/png",
                (be32(bytes, 16)?, be32(bytes, 20)?),
            ));
        }
        if bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a") {
            let size = (u32::from(le16(bytes, 6)?), u32::from(le16(bytes, 8)?));
            return Some(info("GIF", "image/gif", size));
        }
        if bytes.starts_with(b"\xff\xd8") {
            return Some(info("JPEG", "image/jpeg", jpeg_size(bytes)?));
        }
        if bytes.len() >= 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
            return Some(info("WebP", "image/webp", webp_size(bytes)?));
        }
        None
    }
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn le16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn be32(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 4)?;
    Some(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
}

fn le24(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 3)?;
    Some(u32::from(s[0]) | u32::from(s[1]) << 8 | u32::from(s[2]) << 16)
}

/// The size in a JPEG's first start-of-frame segment (SOF0–SOF15 but DHT, JPG, DAC).
fn jpeg_size(b: &[u8]) -> Option<(u32, u32)> {
    let mut at = 2;
    loop {
        while *b.get(at)? == 0xff && b.get(at + 1) == Some(&0xff) {
            at += 1;
        }
        if *b.get(at)? != 0xff {
            return None;
        }
        let marker = *b.get(at + 1)?;
        let len = usize::from(be16(b, at + 2)?);
        if (0xc0..=0xcf).contains(&marker) && !matches!(marker, 0xc4 | 0xc8 | 0xcc) {
            let height = be16(b, at + 5)?;
            let width = be16(b, at + 7)?;
            return Some((u32::from(width), u32::from(height)));
        }
        at += 2 + len;
    }
}

/// The size in a WebP's first chunk: lossy (`VP8 `), lossless (`VP8L`) or extended
/// (`VP8X`).
fn webp_size(b: &[u8]) -> Option<(u32, u32)> {
    match b.get(12..16)? {
        b"VP8 " => {
            let w = le16(b, 26)? & 0x3fff;
            let h = le16(b, 28)? & 0x3fff;
            Some((u32::from(w), u32::from(h)))
        }
        b"VP8L" => {
            let bits = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
            Some(((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1))
        }
        b"VP8X" => Some((le24(b, 24)? + 1, le24(b, 27)? + 1)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1×1 PNG, as a screenshot tool would write it (header only matters here).
    fn png(width: u32, height: u32) -> Vec<u8> {
        let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR".to_vec();
        bytes.extend_from_slice(&width.to_be_bytes());
        bytes.extend_from_slice(&height.to_be_bytes());
        bytes.extend_from_slice(b"\x08\x06\0\0\0");
        bytes
    }

    #[test]
    fn sizes_come_from_each_formats_header() {
        let png = ImageInfo::of(&png(640, 480)).unwrap();
        assert_eq!((png.format, png.width, png.height), ("PNG", 640, 480));
        let gif = ImageInfo::of(b"GIF89a\x20\x00\x10\x00\x00").unwrap();
        assert_eq!((gif.mime, gif.width, gif.height), ("image/gif", 32, 16));
        // SOI, an APP0 segment, then SOF0 with height 2, width 3.
        let jpeg = b"\xff\xd8\xff\xe0\x00\x04AB\xff\xc0\x00\x11\x08\x00\x02\x00\x03\x03";
        let jpeg = ImageInfo::of(jpeg).unwrap();
        assert_eq!((jpeg.format, jpeg.width, jpeg.height), ("JPEG", 3, 2));
        let mut webp = b"RIFF\0\0\0\0WEBPVP8X\x0a\0\0\0\0\0\0\0".to_vec();
        webp.extend_from_slice(&[99, 0, 0, 49, 0, 0]);
        let webp = ImageInfo::of(&webp).unwrap();
        assert_eq!((webp.width, webp.height), (100, 50));
        assert_eq!(ImageInfo::of(b"just text"), None);
        assert_eq!(ImageInfo::of(b"\x89PNG\r\n\x1a\n"), None, "a cut header");
    }

    #[test]
    fn a_vision_model_gets_the_image_and_a_blind_one_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shot.PNG");
        std::fs::write(&path, png(4, 3)).unwrap();
        assert!(is_image_path(&path));
        let queue = std::sync::Mutex::new(Vec::new());
        let env = ToolEnv {
            images: Some(&queue),
            ..crate::tool::tests::test_env(dir.path())
        };
        let seen = read(&env, &path).unwrap().unwrap();
        assert_eq!(
            seen,
            "shot.PNG: PNG image, 4×3, 29 bytes; the image follows the tool results"
        );
        let queued = queue.lock().unwrap().clone();
        assert_eq!(queued.len(), 1);
        assert!(queued[0].starts_with("data:image/png;base64,iVBORw0KGgo"));
        let blind = crate::tool::tests::test_env(dir.path());
        let told = read(&blind, &path).unwrap().unwrap();
        assert!(
            told.ends_with("4×3, 29 bytes; this model cannot see images"),
            "{told}"
        );
        std::fs::write(&path, "not an image").unwrap();
        assert_eq!(read(&blind, &path).unwrap(), None);
    }
}
