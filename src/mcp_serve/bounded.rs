//! Requests too large to read, answered instead of dropped. rmcp's stdio transport drops
//! a line over its 16 MiB limit without a word, so a client waits forever for the answer
//! to that request. Here stdin passes through a task that hands rmcp each line whole when
//! it is under [`MAX_LINE`], and otherwise a small stand-in request with the same id,
//! which the server answers with an error naming the size.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};

/// The longest request line passed on (under rmcp's own limit of 16 MiB).
pub const MAX_LINE: usize = 16 * 1024 * 1024 - 4096;

/// The tool name of the stand-in request.
pub const TOO_LARGE: &str = "loki_request_too_large";

/// Bytes at the start of an oversized line searched for its id.
const HEAD: usize = 64 * 1024;

/// `input` with oversized lines replaced, as a reader for rmcp.
pub fn stdin_bounded(input: impl AsyncRead + Unpin + Send + 'static) -> tokio::io::DuplexStream {
    let (reader, mut writer) = tokio::io::duplex(256 * 1024);
    tokio::spawn(async move {
        let mut input = BufReader::new(input);
        loop {
            let mut line = Vec::new();
            let Ok(n) = (&mut input)
                .take(MAX_LINE as u64 + 1)
                .read_until(b'\n', &mut line)
                .await
            else {
                break;
            };
            if n == 0 {
                break;
            }
            if line.len() <= MAX_LINE || line.ends_with(b"\n") && line.len() <= MAX_LINE + 1 {
                if writer.write_all(&line).await.is_err() {
                    break;
                }
                continue;
            }
            let Ok(rest) = skip_line(&mut input).await else {
                break;
            };
            let total = line.len() + rest;
            tracing::warn!(
                "an MCP request of {total} bytes is over {MAX_LINE}; answered with an error"
            );
            line.truncate(HEAD);
            if let Some(stand_in) = stand_in(&line, total)
                && writer.write_all(stand_in.as_bytes()).await.is_err()
            {
                break;
            }
        }
    });
    reader
}

/// Reads to the end of the current line; the bytes skipped.
async fn skip_line(input: &mut (impl tokio::io::AsyncBufRead + Unpin)) -> std::io::Result<usize> {
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

/// The stand-in for an oversized request whose beginning is `head`: a `tools/call` of
/// [`TOO_LARGE`] with the same id. `None` for a notification (no id: nothing to answer).
fn stand_in(head: &[u8], bytes: usize) -> Option<String> {
    let text = String::from_utf8_lossy(head);
    let id = id_in(&text)?;
    Some(format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/call\",\"params\":{{\"name\":\"{TOO_LARGE}\",\"arguments\":{{\"bytes\":{bytes}}}}}}}\n"
    ))
}

/// The JSON-RPC id at the top level of a request's text: a number or a string.
fn id_in(text: &str) -> Option<String> {
    let re = regex::Regex::new(r#"^\s*\{.*?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")"#).ok()?;
    let found = re.captures(text)?.get(1)?.as_str();
    Some(found.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stand_in_keeps_the_id() {
        let head = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"t":"aaaa"#;
        let line = stand_in(head, 20_000_000).unwrap();
        let value: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["id"], 7);
        assert_eq!(value["params"]["name"], TOO_LARGE);
        assert_eq!(value["params"]["arguments"]["bytes"], 20_000_000);
        let head = br#"{"id":"req-1","jsonrpc":"2.0","method":"x"#;
        assert!(stand_in(head, 1).unwrap().contains(r#""id":"req-1""#));
        assert!(
            stand_in(
                br#"{"jsonrpc":"2.0","method":"notifications/x","params":{"a"#,
                1
            )
            .is_none()
        );
    }

    #[tokio::test]
    async fn lines_under_the_limit_pass_and_an_oversized_one_becomes_its_stand_in() {
        let mut input = b"{\"id\":1,\"method\":\"ping\"}\n".to_vec();
        input.extend_from_slice(
            b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"x\":\"",
        );
        input.extend(std::iter::repeat_n(b'a', MAX_LINE + 10));
        input.extend_from_slice(b"\"}}\n{\"id\":3,\"method\":\"ping\"}\n");
        let mut out = String::new();
        stdin_bounded(std::io::Cursor::new(input))
            .read_to_string(&mut out)
            .await
            .unwrap();
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 3, "{}", &out[..out.len().min(300)]);
        assert!(
            lines[1].contains(TOO_LARGE) && lines[1].contains("\"id\":2"),
            "{}",
            lines[1]
        );
        assert_eq!(lines[2], "{\"id\":3,\"method\":\"ping\"}");
    }
}
