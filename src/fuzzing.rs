//! Entry points for the fuzz targets in `fuzz/` (`scripts/fuzz` runs them): each takes
//! arbitrary bytes, drives one parser that reads untrusted input, and panics when an
//! invariant breaks, which the fuzzer reports as a crash.
//!
//! Owns: what each parser must guarantee whatever it is fed — no panic, bounded buffers,
//! the same result however the bytes are split across reads, and, for everything that
//! reaches a terminal, no control sequence but loki's own styling.
//! Does not own: the parsers themselves, or the fuzzing engine (cargo fuzz, libFuzzer).
//!
//! The unit tests below run every entry point over a small seed corpus, so the
//! invariants are checked by `cargo test` too.

// A broken invariant must panic: that is how the fuzzer sees it.
#![allow(clippy::expect_used, clippy::panic)]

use std::path::Path;

use crate::render::markdown::{MarkdownRenderer, RenderOptions};
use loki_wire::body_stream::{Decoder, Sse};
use loki_wire::sanitize;
use loki_wire::sse::{SseDecoder, SseEvent};

/// Splits `data` into pieces whose sizes come from `seed` (1 to 16 bytes, then the rest
/// as one piece when the seed runs out), the way network reads split a body.
fn pieces<'a>(data: &'a [u8], seed: &[u8]) -> Vec<&'a [u8]> {
    let mut out = Vec::new();
    let mut rest = data;
    for &s in seed {
        if rest.is_empty() {
            break;
        }
        let n = (usize::from(s % 16) + 1).min(rest.len());
        out.push(&rest[..n]);
        rest = &rest[n..];
    }
    if !rest.is_empty() {
        out.push(rest);
    }
    out
}

/// The first byte of the input chooses the split; the rest is the payload.
fn split_input(data: &[u8]) -> (&[u8], &[u8]) {
    match data.split_first() {
        Some((&n, rest)) => rest.split_at(usize::from(n).min(rest.len())),
        None => (&[], &[]),
    }
}

fn sse_events(pieces: &[&[u8]], max: Option<usize>) -> (Vec<SseEvent>, bool) {
    let mut decoder = SseDecoder::new();
    decoder.set_max_event(max);
    let mut events = Vec::new();
    for piece in pieces {
        if decoder.feed(piece, &mut events).is_err() {
            return (events, true);
        }
        if let Some(limit) = max {
            assert!(decoder.buffered() <= limit, "SSE buffer past its limit");
        }
    }
    decoder.finish(&mut events);
    (events, false)
}

/// The SSE decoder, and the OpenAI, Anthropic and Gemini event parsers on top of it.
/// The events must not depend on how the body was split into reads.
pub fn sse(data: &[u8]) {
    let (seed, body) = split_input(data);
    let (whole, _) = sse_events(&[body], None);
    let (split, _) = sse_events(&pieces(body, seed), None);
    assert_eq!(whole, split, "SSE events depend on how the body was split");
    // With a limit, the decoder stops instead of buffering more.
    let _ = sse_events(&pieces(body, seed), Some(64));

    let mut decoders: Vec<Box<dyn Decoder>> = vec![
        Box::new(Sse::new(loki_wire::openai_wire::ChunkParser::default())),
        Box::new(Sse::new(crate::client::claude::EventParser::default())),
        Box::new(Sse::new(crate::client::gemini::ResponseParser::default())),
        Box::new(Sse::new(crate::client::cohere::EventParser::default())),
    ];
    for decoder in &mut decoders {
        decoder.set_max_event(Some(4096));
        let mut out = Vec::new();
        let mut failed = false;
        for piece in pieces(body, seed) {
            if decoder.feed(piece, &mut out).is_err() {
                failed = true;
                break;
            }
        }
        if !failed {
            let _ = decoder.finish(&mut out);
        }
    }
}

/// The AWS event-stream decoder (Bedrock): no panic, and a declared frame length past
/// the limit is refused before its bytes are buffered.
pub fn event_stream(data: &[u8]) {
    let (seed, body) = split_input(data);
    let mut decoder = crate::client::bedrock::EventStream::default();
    decoder.set_max_event(Some(4096));
    let mut out = Vec::new();
    let mut fed = 0usize;
    for piece in pieces(body, seed) {
        fed += piece.len();
        if decoder.feed(piece, &mut out).is_err() {
            return;
        }
        assert!(
            decoder.buffered() <= 4096,
            "event-stream buffer past its limit after {fed} bytes"
        );
    }
    let _ = decoder.finish(&mut out);
}

/// `--input-format stream-json`: lines are read with a bound, each line is parsed on its
/// own, and a bad line never stops the lines after it.
pub fn stream_json(data: &[u8]) {
    use crate::term::stdin_lines::{Read, read_line};
    const MAX: usize = 1024;
    let mut reader = std::io::BufReader::with_capacity(7, data);
    let mut first = true;
    let mut number = 0;
    let mut consumed_lines = 0;
    loop {
        let read = match read_line(&mut reader, MAX, first) {
            Ok(Some(read)) => read,
            Ok(None) => break,
            Err(e) => panic!("reading from memory failed: {e}"),
        };
        first = false;
        number += 1;
        consumed_lines += 1;
        match read {
            Read::Line(line) => {
                assert!(line.len() <= MAX, "a line longer than the limit was kept");
                let _ = crate::cli::headless::parse_input_line(&line, number);
            }
            Read::TooLong { bytes, head } => assert!(bytes > MAX && head.len() <= bytes),
            Read::NotUtf8 => {}
        }
    }
    let newlines = data.iter().filter(|&&b| b == b'\n').count();
    let unterminated = usize::from(!data.is_empty() && data.last() != Some(&b'\n'));
    assert_eq!(
        consumed_lines,
        newlines + unterminated,
        "every line is read, good or bad"
    );
}

/// Session YAML: parsing never panics, and a session that loads saves to YAML that loads
/// back to the same YAML (a save never changes what the next load sees).
pub fn session_yaml(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("fuzz.yaml");
    let Ok(session) = crate::session::file_store::parse_yaml(path, text) else {
        return;
    };
    let Ok(saved) = loki_wire::session_yaml::to_yaml(&session) else {
        return;
    };
    let again = crate::session::file_store::parse_yaml(path, &saved)
        .unwrap_or_else(|e| panic!("a saved session does not load: {e}\n{saved}"));
    let resaved = loki_wire::session_yaml::to_yaml(&again).expect("second save");
    assert_eq!(saved, resaved, "saving a loaded session changed it");
}

/// Script-tool annotations (`# @describe`, `# @option`, docstrings, JSDoc) for the three
/// languages: errors, never panics, and a parsed tool's schema is an object.
pub fn script_annotations(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for file in ["fuzz_tool.sh", "fuzz_tool.py", "fuzz_tool.ts"] {
        if let Ok(tool) = crate::tool::script::parse_text(Path::new(file), &text) {
            assert!(
                tool.parameters.is_object(),
                "schema is not an object: {}",
                tool.parameters
            );
        }
    }
}

/// Whether every byte of terminal output is text or loki's own styling: CSI sequences
/// (`ESC [` parameters, final byte) and nothing else — no OSC, DCS or other escape, no
/// C0 control but tab, line feed and carriage return, no DEL, no C1 control.
fn assert_only_own_sequences(out: &[u8]) {
    let text = String::from_utf8_lossy(out);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => {
                assert_eq!(
                    chars.next(),
                    Some('['),
                    "an escape that is not CSI: {text:?}"
                );
                loop {
                    match chars.next() {
                        Some('0'..='9' | ';' | '?' | ':') => {}
                        Some('m' | 'K' | 'J' | 'A' | 'B' | 'C' | 'D' | 'G' | 'H' | 'F' | 'E') => {
                            break;
                        }
                        other => panic!("unexpected CSI byte {other:?} in {text:?}"),
                    }
                }
            }
            '\t' | '\n' | '\r' => {}
            c if c.is_control() => panic!("control character {c:?} reached the terminal"),
            _ => {}
        }
    }
}

fn render(text: &str, seed: &[u8], highlight: bool, wrap: Option<usize>) -> Vec<u8> {
    let mut renderer = MarkdownRenderer::new(RenderOptions {
        highlight,
        light: false,
        wrap,
        wrap_code: wrap.is_some(),
        term_width: wrap.unwrap_or(80),
        term_height: 24,
    });
    let mut filter = sanitize::StreamSanitizer::new();
    let mut out = Vec::new();
    for piece in pieces(text.as_bytes(), seed) {
        // The pieces are cut on bytes; the stream gives whole characters.
        let piece = String::from_utf8_lossy(piece);
        let safe = filter.push(&piece).to_string();
        renderer.push(&safe, &mut out);
    }
    let tail = filter.finish();
    renderer.push(tail, &mut out);
    renderer.finish(&mut out);
    out
}

/// The streaming Markdown renderer behind the sanitiser, as answers reach a terminal:
/// whatever the model sends, only loki's own styling sequences come out.
pub fn markdown(data: &[u8]) {
    let (seed, body) = split_input(data);
    let text = String::from_utf8_lossy(body);
    let wrap = seed.first().map(|w| usize::from(*w % 60) + 10);
    assert_only_own_sequences(&render(&text, seed, true, wrap));
    assert_only_own_sequences(&render(&text, seed, true, None));
    let plain = render(&text, seed, false, None);
    assert!(
        !plain.contains(&0x1b),
        "ANSI in plain output (NO_COLOR, not a terminal)"
    );
}

/// The sanitiser: no control character survives any strength (but tab and line breaks
/// where a strength keeps them), the one-line form has no line break, and the streamed
/// form equals the whole-text form however the text is split.
pub fn sanitizer(data: &[u8]) {
    let (seed, body) = split_input(data);
    let text = String::from_utf8_lossy(body);
    let shown = sanitize::display(&text);
    for c in shown.chars() {
        assert!(
            !c.is_control() || matches!(c, '\t' | '\n' | '\r'),
            "display kept {c:?}"
        );
    }
    assert!(
        !shown.replace("\r\n", "").contains('\r'),
        "display kept a lone carriage return"
    );
    for c in sanitize::approval(&text).chars() {
        assert!(
            !c.is_control() || matches!(c, '\t' | '\n'),
            "approval kept {c:?}"
        );
        assert!(
            !matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200b}'..='\u{200f}'),
            "approval kept a bidi or invisible character {c:?}"
        );
    }
    let line = sanitize::approval_line(&text);
    assert!(
        !line.contains('\n') && !line.contains('\r'),
        "approval_line has a line break"
    );
    let mut stream = sanitize::StreamSanitizer::new();
    let mut streamed = String::new();
    let mut chars = text.char_indices().peekable();
    let mut start = 0;
    for &s in seed {
        let want = start + usize::from(s % 8) + 1;
        let mut end = start;
        while let Some(&(i, c)) = chars.peek() {
            if i >= want {
                break;
            }
            end = i + c.len_utf8();
            chars.next();
        }
        if end > start {
            streamed.push_str(stream.push(&text[start..end]));
            start = end;
        }
    }
    streamed.push_str(stream.push(&text[start..]));
    streamed.push_str(stream.finish());
    assert_eq!(
        streamed, shown,
        "streamed sanitising differs from whole-text"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A few inputs per target, hostile ones among them; the fuzz corpus starts from
    /// the same kind of bytes.
    const SEEDS: &[&[u8]] = &[
        b"",
        b"\x03data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\ndata: [DONE]\n\n",
        b"\x05event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\r\n\r\n",
        b"\x01\x1b]52;c;ZWNobyBoaQ==\x07 # title\n```rust\nfn main() {}\n```\n| a | b |\n|---|---|\n",
        b"\x00{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n\xff\xfe\n\xef\xbb\xbf{}\n",
        b"\x02model: x\nmessages:\n  - role: user\n    content: hi\n",
        b"\x02# @describe hi\n# @option --name! <NAME> the name\n# @flag --verbose\n",
        b"\x04def run(a: int, b: str = 'x'):\n    \"\"\"Does.\n\n    Args:\n        a: one\n    \"\"\"\n",
        b"\x06/**\n * Does.\n * @param a one\n */\nexport function run(a: string, b?: number) {}\n",
        b"\x00\x00\x00\x10\x00\x00\x00\x00\xff\xff\xff\xff\x00\x00\x00\x00",
        b"\x07\r\r\n\xc2\x9b31m\xe2\x80\xaeabc\t\t\x7f\x1b[2J",
        b"\x09---\n- [x] done\n> quote\n1. one\n   ```\n   code\n",
    ];

    #[test]
    fn every_target_holds_its_invariants_on_the_seed_corpus() {
        for seed in SEEDS {
            sse(seed);
            event_stream(seed);
            stream_json(seed);
            session_yaml(seed);
            script_annotations(seed);
            markdown(seed);
            sanitizer(seed);
        }
    }

    #[test]
    fn the_checker_catches_a_foreign_sequence() {
        let caught = std::panic::catch_unwind(|| assert_only_own_sequences(b"a\x1b]0;x\x07"));
        assert!(caught.is_err());
        assert_only_own_sequences(b"\x1b[1;38;2;1;2;3mhi\x1b[0m\x1b[2K\r\n");
    }
}
