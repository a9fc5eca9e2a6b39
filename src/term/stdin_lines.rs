//! Lines of stdin for the drivers that read a protocol from it (`--input-format
//! stream-json`, `--acp`, the Claude Agent SDK's stream-json): each line is bounded, so a
//! program (or a bug in one) that sends a 3 GB line gets that line skipped instead of
//! loki aborting with every open session lost.

use tokio::sync::mpsc::Receiver;

/// What reading one line of stdin gave.
#[derive(Debug)]
pub enum Read {
    /// A line of text (without its line break; a BOM on the first line dropped).
    Line(String),
    /// A line longer than the bound: skipped, read to its end without keeping it. The
    /// line's length in bytes.
    TooLong(usize),
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
            line = Vec::new();
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
        return Ok(Some(Read::TooLong(seen)));
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
                "TooLong(16)",
                "Line(\"ok\")",
                "NotUtf8",
                "Line(\"last\")"
            ]
        );
    }
}
