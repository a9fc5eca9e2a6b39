//! Lines of stdin for the drivers that read a protocol from it (`--input-format
//! stream-json`, `--acp`, the Claude Agent SDK's stream-json): each line is bounded, so a
//! program (or a bug in one) that sends a 3 GB line gets that line skipped instead of
//! loki aborting with every open session lost.

use serde_json::Value;
use tokio::sync::mpsc::Receiver;

/// Bytes kept of a line over the bound, to find out what it was (its id).
const HEAD: usize = 64 * 1024;

/// What reading one line of stdin gave.
#[derive(Debug)]
pub enum Read {
    /// A line of text (without its line break; a BOM on the first line dropped).
    Line(String),
    /// A line longer than the bound: skipped, read to its end keeping only its first
    /// 64 KiB (`head`, to find its id with [`key_in`]); `bytes` is its length.
    TooLong { bytes: usize, head: String },
    /// A line that is not UTF-8: skipped.
    NotUtf8,
}

/// The lines of stdin, read on a thread of its own (a line may take as long as the
/// program driving loki likes). Each line is bounded by `max_bytes`. The channel ends
/// after the end of stdin or after an error reading it (sent as the last item).
pub fn stdin_lines(max_bytes: usize) -> Receiver<std::io::Result<Read>> {
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin().lock();
        let mut first = true;
        loop {
            let read = read_line(&mut stdin, max_bytes, first);
            first = false;
            let stop = !matches!(read, Ok(Some(_)));
            let item = match read {
                Ok(Some(line)) => Ok(line),
                Ok(None) => break,
                Err(e) => Err(e),
            };
            if tx.blocking_send(item).is_err() || stop {
                break;
            }
        }
    });
    rx
}

/// One line of `reader`, keeping at most `max_bytes` of it; `None` at the end.
pub fn read_line(
    reader: &mut impl std::io::BufRead,
    max_bytes: usize,
    first: bool,
) -> std::io::Result<Option<Read>> {
    let mut line = Vec::new();
    let mut too_long = false;
    let mut seen = 0usize;
    let mut head = Vec::new();
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if buf.is_empty() {
            if seen == 0 {
                return Ok(None);
            }
            break;
        }
        let (chunk, done) = match memchr_newline(buf) {
            Some(i) => (&buf[..i], i + 1),
            None => (buf, buf.len()),
        };
        let ended = done > chunk.len();
        seen += chunk.len();
        if !too_long && line.len() + chunk.len() > max_bytes {
            too_long = true;
            line.truncate(HEAD);
            head = std::mem::take(&mut line);
        }
        if too_long && head.len() < HEAD {
            let room = HEAD - head.len();
            head.extend_from_slice(&chunk[..chunk.len().min(room)]);
        }
        if !too_long {
            line.extend_from_slice(chunk);
        }
        reader.consume(done);
        if ended {
            break;
        }
    }
    if too_long {
        return Ok(Some(Read::TooLong {
            bytes: seen,
            head: String::from_utf8_lossy(&head).into_owned(),
        }));
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    let bytes = if first {
        line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&line).to_vec()
    } else {
        line
    };
    Ok(Some(match String::from_utf8(bytes) {
        Ok(text) => Read::Line(text),
        Err(_) => Read::NotUtf8,
    }))
}

/// The value of `key` in an object `depth` levels deep (1: the top level) at the
/// beginning of a JSON message — a number or a string, such as a JSON-RPC `id` — found by
/// a scan that follows nesting and strings, so a key of that name deeper down, or inside
/// a string, is not taken for it. For a message too long to be read whole.
pub fn key_in(text: &str, key: &str, depth_wanted: usize) -> Option<Value> {
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
                if depth == depth_wanted
                    && &bytes[at + 1..end] == key.as_bytes()
                    && bytes.get(after) == Some(&b':')
                {
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

fn memchr_newline(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max: usize) -> Vec<String> {
        let mut reader = std::io::BufReader::with_capacity(8, input);
        let mut out = Vec::new();
        let mut first = true;
        while let Some(read) = read_line(&mut reader, max, first).unwrap() {
            first = false;
            out.push(format!("{read:?}"));
        }
        out
    }

    #[test]
    fn lines_are_bounded_checked_and_a_bom_dropped() {
        let input = b"\xEF\xBB\xBFfirst\r\n0123456789abcdef\nok\n\xFF\xFE\nlast";
        assert_eq!(
            lines(input, 10),
            [
                "Line(\"first\")",
                "TooLong { bytes: 16, head: \"0123456789abcdef\" }",
                "Line(\"ok\")",
                "NotUtf8",
                "Line(\"last\")"
            ]
        );
    }
    #[test]
    fn a_key_is_found_at_its_depth_at_the_start_of_a_message() {
        let head = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"t":"aaaa"#;
        assert_eq!(key_in(head, "id", 1), Some(Value::from(7)));
        let head = r#"{"id":"req-1","jsonrpc":"2.0","method":"x"#;
        assert_eq!(key_in(head, "id", 1), Some(Value::from("req-1")));
        assert_eq!(
            key_in(
                r#"{"jsonrpc":"2.0","method":"notifications/x","params":{"a"#,
                "id",
                1
            ),
            None
        );
        // An "id" inside the params, or as a value, is not the request's.
        let head = r#"{"method":"id","params":{"id":5,"s":"\"id\":6"},"id" : "r\"7","x":"aaa"#;
        assert_eq!(key_in(head, "id", 1), Some(Value::from("r\"7")));
        assert_eq!(
            key_in(r#"{"method":"x","params":{"id":5,"t":"aaaa"#, "id", 1),
            None
        );
    }

    #[test]
    fn a_key_deeper_down_is_found_at_the_depth_asked() {
        let head = r#"{"type":"control_response","response":{"subtype":"success","request_id":"loki_3","response":{"request_id":"no","x":"aaa"#;
        assert_eq!(key_in(head, "request_id", 2), Some(Value::from("loki_3")));
        assert_eq!(key_in(head, "request_id", 1), None);
    }
}
