//! LSP's base protocol: JSON-RPC messages framed by `Content-Length:` headers.
//!
//! Reading is bounded everywhere: a header line longer than [`MAX_HEADER_LINE`], more than
//! [`MAX_HEADERS`] header lines, or a body announced larger than [`MAX_MESSAGE`] is an
//! error before anything of that size is allocated.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// The largest message body accepted from a server.
pub const MAX_MESSAGE: usize = 16 * 1024 * 1024;
/// The longest header line accepted.
pub const MAX_HEADER_LINE: u64 = 8 * 1024;
/// The most header lines in one message.
pub const MAX_HEADERS: usize = 32;

/// Why a message could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FrameError {
    /// Reading the stream failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The stream ended inside a message.
    #[error("the stream ended inside a message")]
    Truncated,
    /// A header line without its end, or too many header lines.
    #[error("malformed header: {0}")]
    Header(String),
    /// The headers named no length.
    #[error("message without a Content-Length header")]
    NoLength,
    /// The announced body is larger than [`MAX_MESSAGE`].
    #[error("message of {0} bytes is larger than the limit of {MAX_MESSAGE} bytes")]
    TooLarge(u64),
    /// The body is not JSON.
    #[error("message is not JSON: {0}")]
    Json(#[from] serde_json::Error),
}

/// Reads one message; `None` when the stream ends cleanly between messages.
pub async fn read_message<R>(reader: &mut R) -> Result<Option<Value>, FrameError>
where
    R: AsyncBufRead + Unpin,
{
    let mut length: Option<u64> = None;
    let mut lines = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut *reader)
            .take(MAX_HEADER_LINE)
            .read_until(b'\n', &mut line)
            .await?;
        if read == 0 {
            if lines == 0 {
                return Ok(None);
            }
            return Err(FrameError::Truncated);
        }
        if line.last() != Some(&b'\n') {
            return Err(FrameError::Header(if read as u64 >= MAX_HEADER_LINE {
                format!("a header line is longer than {MAX_HEADER_LINE} bytes")
            } else {
                "the stream ended inside a header".into()
            }));
        }
        lines += 1;
        if lines > MAX_HEADERS {
            return Err(FrameError::Header(format!(
                "more than {MAX_HEADERS} header lines"
            )));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            break;
        }
        let Some((name, value)) = text.split_once(':') else {
            return Err(FrameError::Header(format!("`{}`", shorten(text))));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            let value = value.trim();
            length =
                Some(value.parse().map_err(|_| {
                    FrameError::Header(format!("Content-Length `{}`", shorten(value)))
                })?);
        }
    }
    let length = length.ok_or(FrameError::NoLength)?;
    if length > MAX_MESSAGE as u64 {
        return Err(FrameError::TooLarge(length));
    }
    let mut body = vec![0; usize::try_from(length).map_err(|_| FrameError::TooLarge(length))?];
    reader
        .read_exact(&mut body)
        .await
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => FrameError::Truncated,
            _ => e.into(),
        })?;
    Ok(Some(serde_json::from_slice(&body)?))
}

/// `message` framed for sending.
pub fn encode(message: &Value) -> Vec<u8> {
    let body = message.to_string();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body.as_bytes());
    out
}

/// The start of `text`, for error messages.
fn shorten(text: &str) -> String {
    text.chars().take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// One [`read_message`] result.
    type Read = Result<Option<Value>, FrameError>;

    async fn read_all(bytes: &[u8]) -> Vec<Read> {
        let mut reader = tokio::io::BufReader::new(bytes);
        let mut out = Vec::new();
        loop {
            let next = read_message(&mut reader).await;
            let stop = !matches!(next, Ok(Some(_)));
            out.push(next);
            if stop {
                return out;
            }
        }
    }

    /// The messages of reads that all succeeded.
    fn messages(read: Vec<Read>) -> Vec<Option<Value>> {
        read.into_iter()
            .map(|r| r.unwrap_or_else(|e| panic!("{e}")))
            .collect()
    }

    /// The error of a failed read, as shown.
    fn shown_error(read: &Read) -> String {
        match read {
            Ok(message) => panic!("not an error: {message:?}"),
            Err(e) => e.to_string(),
        }
    }

    fn block_on<F: std::future::Future>(future: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(future)
    }

    #[test]
    fn messages_round_trip_and_follow_each_other() {
        let first =
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"é": "ü"}});
        let second = json!({"jsonrpc": "2.0", "method": "initialized", "params": {}});
        let mut bytes = encode(&first);
        let text = String::from_utf8(bytes.clone()).unwrap();
        // The length counts bytes, not characters.
        let body = first.to_string();
        assert!(text.starts_with(&format!("Content-Length: {}\r\n\r\n{{", body.len())));
        bytes.extend(encode(&second));
        let read = block_on(read_all(&bytes));
        assert_eq!(messages(read), [Some(first), Some(second), None]);
    }

    #[test]
    fn headers_are_case_insensitive_and_others_are_ignored() {
        let bytes = b"content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}";
        assert_eq!(messages(block_on(read_all(bytes))), [Some(json!({})), None]);
        // A bare `\n` ends lines too.
        assert_eq!(
            messages(block_on(read_all(b"Content-Length: 2\n\n[]"))),
            [Some(json!([])), None]
        );
    }

    #[test]
    fn a_huge_length_is_refused_before_allocating() {
        let read = block_on(read_all(b"Content-Length: 1099511627776\r\n\r\n{}"));
        assert_eq!(read.len(), 1);
        assert!(matches!(read[0], Err(FrameError::TooLarge(1099511627776))));
        let error = shown_error(&read[0]);
        assert!(
            error.contains("1099511627776 bytes is larger than the limit"),
            "{error}"
        );
        let just_over = format!("Content-Length: {}\r\n\r\n", MAX_MESSAGE + 1);
        assert!(block_on(read_all(just_over.as_bytes()))[0].is_err());
    }

    #[test]
    fn malformed_frames_are_errors() {
        for (bytes, expected) in [
            (
                &b"Content-Type: x\r\n\r\n{}"[..],
                "without a Content-Length",
            ),
            (b"Content-Length: ten\r\n\r\n{}", "Content-Length `ten`"),
            (b"Content-Length: 10\r\n\r\n{}", "ended inside a message"),
            (b"Content-Length: 2\r\n", "ended inside a message"),
            (b"Content-Length: 2", "ended inside a header"),
            (b"Content-Length: 2\r\n\r\nno", "not JSON"),
            (b"garbage\r\n\r\n", "`garbage`"),
        ] {
            let read = block_on(read_all(bytes));
            let error = shown_error(read.last().unwrap()).to_lowercase();
            assert!(
                error.contains(&expected.to_lowercase()),
                "{error} for {bytes:?}"
            );
        }
        let long = format!("X-Long: {}\r\n", "a".repeat(MAX_HEADER_LINE as usize));
        let error_text = shown_error(&block_on(read_all(long.as_bytes()))[0]);
        assert!(error_text.contains("longer than"), "{error_text}");
        let many = "X-A: b\r\n".repeat(MAX_HEADERS + 1);
        let error_text = shown_error(&block_on(read_all(many.as_bytes()))[0]);
        assert!(error_text.contains("header lines"), "{error_text}");
    }
}
