//! A server-sent-events decoder shared by every HTTP provider.
//!
//! Bytes arrive in arbitrary pieces (a frame, a UTF-8 character or a `\r\n` pair can be
//! split anywhere); the decoder keeps only the unfinished line and the event being
//! assembled, and returns complete events. It follows the WHATWG event-stream rules that
//! matter to LLM APIs: `data:` lines joined with `\n`, `event:` names, `:` comments, `\n`,
//! `\r\n` and `\r` line ends. It knows nothing about JSON or any provider.
//!
//! Every byte is looked at once (a `memchr` scan for line ends), so the cost is linear in
//! the size of the stream however it is split: one 20 MB event arriving in 16 KB reads costs
//! the same as 20 MB of small events. An event (its data plus the unfinished line) that
//! grows past the limit set with [`SseDecoder::set_max_event`] is refused as soon as it
//! does, so a line that never ends cannot eat memory.
//!
//! Written here rather than taken from a crate: it sits on the hottest path (one call per
//! network read) and needs the byte-split tests below anyway. `sse-stream` (already in the
//! dependency tree through rmcp) is linear too but has no size limit and wants an
//! `http_body::Body`; wrapping it would not make this file smaller.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, empty when absent.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// One event grew past the decoder's limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventTooLarge {
    /// The limit, in bytes.
    pub limit: usize,
}

/// Incremental decoder state.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Largest accepted event (data plus unfinished line), in bytes.
    max_event: Option<usize>,
    /// The line being received (no line end seen yet).
    line: Vec<u8>,
    /// The previous piece ended with `\r`: a `\n` starting the next one belongs to it.
    skip_lf: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl SseDecoder {
    /// A decoder with empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the largest event accepted (`None`: no limit).
    pub fn set_max_event(&mut self, max: Option<usize>) {
        self.max_event = max;
    }

    /// Bytes held for the event being assembled: its `data` so far plus the unfinished
    /// line.
    pub fn buffered(&self) -> usize {
        self.line.len() + self.data.len()
    }

    fn check(&self, extra: usize) -> Result<(), EventTooLarge> {
        match self.max_event {
            Some(limit) if self.buffered() + extra > limit => Err(EventTooLarge { limit }),
            _ => Ok(()),
        }
    }

    /// Feeds bytes; complete events are appended to `out`. Fails once the event being
    /// assembled is larger than the limit (events completed before it are in `out`).
    pub fn feed(&mut self, mut chunk: &[u8], out: &mut Vec<SseEvent>) -> Result<(), EventTooLarge> {
        if std::mem::take(&mut self.skip_lf) && chunk.first() == Some(&b'\n') {
            chunk = &chunk[1..];
        }
        while let Some(end) = memchr::memchr2(b'\n', b'\r', chunk) {
            self.check(end)?;
            if self.line.is_empty() {
                self.line_done(&chunk[..end], out);
            } else {
                self.line.extend_from_slice(&chunk[..end]);
                let line = std::mem::take(&mut self.line);
                self.line_done(&line, out);
                // Keep the allocation for the next long line.
                self.line = line;
                self.line.clear();
            }
            let was_cr = chunk[end] == b'\r';
            chunk = &chunk[end + 1..];
            if was_cr {
                match chunk.first() {
                    Some(b'\n') => chunk = &chunk[1..],
                    Some(_) => {}
                    None => self.skip_lf = true,
                }
            }
        }
        self.check(chunk.len())?;
        self.line.extend_from_slice(chunk);
        Ok(())
    }

    /// End of stream: an event that was not terminated by a blank line is dispatched
    /// anyway (some servers omit the final blank line).
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, out);
        }
        self.dispatch(out);
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match memchr::memchr(b':', line) {
            Some(pos) => {
                let value = &line[pos + 1..];
                (&line[..pos], value.strip_prefix(b" ").unwrap_or(value))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&String::from_utf8_lossy(value));
                self.has_data = true;
            }
            b"event" => {
                self.event.clear();
                self.event.push_str(&String::from_utf8_lossy(value));
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        if self.has_data {
            out.push(SseEvent {
                event: std::mem::take(&mut self.event),
                data: std::mem::take(&mut self.data),
            });
        }
        self.event.clear();
        self.has_data = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_pieces(bytes: &[u8], sizes: &mut dyn FnMut() -> usize) -> Vec<SseEvent> {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        let mut pos = 0;
        while pos < bytes.len() {
            let n = sizes().max(1).min(bytes.len() - pos);
            d.feed(&bytes[pos..pos + n], &mut out).unwrap();
            pos += n;
        }
        d.finish(&mut out);
        out
    }

    const STREAM: &str = "event: message_start\ndata: {\"a\":1}\n\n: keep-alive comment\n\ndata: line one\ndata: line two\n\r\ndata:no-space\r\n\r\ndata: h\u{e9}llo \u{1F600}\r\rdata: [DONE]\n\n";

    fn expected() -> Vec<SseEvent> {
        let ev = |event: &str, data: &str| SseEvent {
            event: event.into(),
            data: data.into(),
        };
        vec![
            ev("message_start", "{\"a\":1}"),
            ev("", "line one\nline two"),
            ev("", "no-space"),
            ev("", "h\u{e9}llo \u{1F600}"),
            ev("", "[DONE]"),
        ]
    }

    #[test]
    fn whole_stream() {
        assert_eq!(
            decode_in_pieces(STREAM.as_bytes(), &mut || usize::MAX),
            expected()
        );
    }

    #[test]
    fn every_split_size_gives_the_same_events() {
        for size in 1..=STREAM.len() {
            let got = decode_in_pieces(STREAM.as_bytes(), &mut || size);
            assert_eq!(got, expected(), "split size {size}");
        }
    }

    #[test]
    fn pseudo_random_splits() {
        let mut seed: u64 = 0x2545_F491_4F6C_DD1D;
        for _ in 0..200 {
            let got = decode_in_pieces(STREAM.as_bytes(), &mut || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed % 9) as usize + 1
            });
            assert_eq!(got, expected());
        }
    }

    #[test]
    fn unterminated_final_event_is_dispatched() {
        let got = decode_in_pieces(b"data: tail", &mut || 3);
        assert_eq!(
            got,
            vec![SseEvent {
                event: String::new(),
                data: "tail".into()
            }]
        );
    }

    #[test]
    fn a_huge_event_in_small_pieces_is_linear_and_measured() {
        // 8 MB in 4 KB pieces: quadratic rescanning took minutes for this; linear is
        // milliseconds even in a debug build.
        let payload = "x".repeat(8 * 1024 * 1024);
        let bytes = format!("data: {payload}\n\n");
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        let mut peak = 0;
        let started = std::time::Instant::now();
        for piece in bytes.as_bytes().chunks(4096) {
            d.feed(piece, &mut out).unwrap();
            peak = peak.max(d.buffered());
        }
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data.len(), payload.len());
        assert!(peak >= payload.len(), "{peak}");
        assert_eq!(d.buffered(), 0);
    }

    #[test]
    fn a_cr_at_the_end_of_a_piece_pairs_with_the_next_lf() {
        let mut d = SseDecoder::new();
        let mut out = Vec::new();
        for piece in [&b"data: a\r"[..], b"\ndata: b\r", b"\n\r", b"\n"] {
            d.feed(piece, &mut out).unwrap();
        }
        assert_eq!(
            out,
            vec![SseEvent {
                event: String::new(),
                data: "a\nb".into()
            }]
        );
    }

    #[test]
    fn an_event_over_the_limit_is_refused_as_soon_as_it_is_too_large() {
        let mut d = SseDecoder::new();
        d.set_max_event(Some(100));
        let mut out = Vec::new();
        // A complete small event, then a line that never ends.
        d.feed(b"data: ok\n\ndata: ", &mut out).unwrap();
        assert_eq!(out.len(), 1);
        let piece = [b'x'; 40];
        d.feed(&piece, &mut out).unwrap();
        d.feed(&piece, &mut out).unwrap();
        assert_eq!(d.feed(&piece, &mut out), Err(EventTooLarge { limit: 100 }));
        // Many data lines that add up count too, even when each arrives whole.
        let mut d = SseDecoder::new();
        d.set_max_event(Some(100));
        let line = format!("data: {}\n", "y".repeat(30));
        let many = line.repeat(4);
        assert!(d.feed(many.as_bytes(), &mut out).is_err());
        // Exactly at the limit is fine.
        let mut d = SseDecoder::new();
        d.set_max_event(Some(100));
        let mut out = Vec::new();
        let event = format!("data: {}\n\n", "z".repeat(94));
        d.feed(event.as_bytes(), &mut out).unwrap();
        assert_eq!(out[0].data.len(), 94);
    }

    #[test]
    fn invalid_utf8_is_replaced_not_fatal() {
        let got = decode_in_pieces(b"data: \xff\xfe ok\n\n", &mut || 2);
        assert_eq!(got.len(), 1);
        assert!(got[0].data.ends_with(" ok"));
    }
}
