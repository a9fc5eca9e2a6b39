//! Request lines with a size limit. A line longer than [`MAX_LINE`] is skipped whole and
//! answered with an error naming its size, under the id found at its start, so the
//! client is not left waiting for an answer that never comes.

use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};

/// The longest request read, on stdio and over HTTP: 16 MiB.
pub const MAX_LINE: usize = 16 * 1024 * 1024;

/// Bytes at the start of an oversized line searched for its id.
const HEAD: usize = 64 * 1024;

/// One line of input.
#[derive(Debug, PartialEq)]
pub enum Line {
    /// A line within the limit, without its newline.
    Message(Vec<u8>),
    /// A line over the limit: its id, when one was found at its start, and its size.
    TooLong { id: Option<Value>, bytes: usize },
}

/// The next line of `input`; `None` at the end.
pub async fn next_line(input: &mut (impl AsyncBufRead + Unpin)) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let n = (&mut *input)
        .take(MAX_LINE as u64 + 1)
        .read_until(b'\n', &mut line)
        .await?;
    if n == 0 {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
        return Ok(Some(Line::Message(line)));
    }
    if line.len() <= MAX_LINE {
        // The last line, without a newline.
        return Ok(Some(Line::Message(line)));
    }
    let rest = skip_line(input).await?;
    let bytes = line.len() + rest;
    tracing::warn!("an MCP request of {bytes} bytes is over {MAX_LINE}; answered with an error");
    line.truncate(HEAD);
    Ok(Some(Line::TooLong {
        id: crate::term::stdin_lines::key_in(&String::from_utf8_lossy(&line), "id", 1),
        bytes,
    }))
}

/// What the client is told about a request of `bytes` bytes.
pub fn too_large(bytes: usize) -> String {
    format!(
        "the request was {bytes} bytes, more than the {MAX_LINE} bytes loki reads in one message; nothing was done"
    )
}

/// Reads to the end of the current line; the bytes skipped.
async fn skip_line(input: &mut (impl AsyncBufRead + Unpin)) -> std::io::Result<usize> {
    let mut skipped = 0;
    loop {
        let buf = input.fill_buf().await?;
        if buf.is_empty() {
            return Ok(skipped);
        }
        match memchr::memchr(b'\n', buf) {
            Some(at) => {
                input.consume(at + 1);
                return Ok(skipped + at + 1);
            }
            None => {
                let len = buf.len();
                input.consume(len);
                skipped += len;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_under_the_limit_pass_and_an_oversized_one_is_measured_and_skipped() {
        let ping = |id: u8| format!("{{\"id\":{id},\"method\":\"ping\"}}").into_bytes();
        let mut input = ping(1);
        input.push(b'\n');
        input.extend_from_slice(
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"x\":\"",
        );
        input.extend(std::iter::repeat_n(b'a', MAX_LINE + 10));
        input.extend_from_slice(b"\"}}\n");
        let long = input.len() - ping(1).len() - 1;
        input.extend_from_slice(&ping(3));
        let mut reader = tokio::io::BufReader::new(std::io::Cursor::new(input));
        let first = next_line(&mut reader).await.unwrap();
        assert_eq!(first, Some(Line::Message(ping(1))));
        let Some(Line::TooLong { id, bytes }) = next_line(&mut reader).await.unwrap() else {
            panic!("the long line was not refused");
        };
        assert_eq!(id, Some(Value::from(2)));
        assert_eq!(bytes, long);
        assert_eq!(
            next_line(&mut reader).await.unwrap(),
            Some(Line::Message(ping(3)))
        );
        assert_eq!(next_line(&mut reader).await.unwrap(), None);
    }
}
