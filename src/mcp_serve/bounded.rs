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
        id: id_in(&String::from_utf8_lossy(&line)),
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

/// The JSON-RPC id at the top level of a request's beginning (a number or a string):
/// a scan that follows nesting and strings, so an `"id"` inside `params` is not taken
/// for it.
fn id_in(text: &str) -> Option<Value> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.checked_sub(1)?,
            b'"' => {
                let end = string_end(bytes, at)?;
                let after = skip_space(bytes, end + 1);
                if depth == 1 && &bytes[at + 1..end] == b"id" && bytes.get(after) == Some(&b':') {
                    return value_at(text, skip_space(bytes, after + 1));
                }
                at = end;
            }
            _ => {}
        }
        at += 1;
    }
    None
}

/// The index of the quote closing the string that opens at `start`.
fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut at = start + 1;
    while at < bytes.len() {
        match bytes[at] {
            b'\\' => at += 2,
            b'"' => return Some(at),
            _ => at += 1,
        }
    }
    None
}

fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(u8::is_ascii_whitespace) {
        at += 1;
    }
    at
}

/// The number or string at `at` (an id of another kind is no id).
fn value_at(text: &str, at: usize) -> Option<Value> {
    let bytes = text.as_bytes();
    let end = match bytes.get(at)? {
        b'"' => string_end(bytes, at)? + 1,
        b'-' | b'0'..=b'9' => {
            at + 1
                + bytes[at + 1..]
                    .iter()
                    .take_while(|b| b.is_ascii_digit())
                    .count()
        }
        _ => return None,
    };
    serde_json::from_str(text.get(at..end)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_found_at_the_start_of_a_request() {
        let head = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"t":"aaaa"#;
        assert_eq!(id_in(head), Some(Value::from(7)));
        let head = r#"{"id":"req-1","jsonrpc":"2.0","method":"x"#;
        assert_eq!(id_in(head), Some(Value::from("req-1")));
        assert_eq!(
            id_in(r#"{"jsonrpc":"2.0","method":"notifications/x","params":{"a"#),
            None
        );
        // An "id" inside the params, or as a value, is not the request's.
        let head = r#"{"method":"id","params":{"id":5,"s":"\"id\":6"},"id" : "r\"7","x":"aaa"#;
        assert_eq!(id_in(head), Some(Value::from("r\"7")));
        assert_eq!(id_in(r#"{"method":"x","params":{"id":5,"t":"aaaa"#), None);
    }

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
