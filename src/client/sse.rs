//! A server-sent-events decoder shared by every HTTP provider.
//!
//! Bytes arrive in arbitrary pieces (a frame, a UTF-8 character or a `\r\n` pair can be
//! split anywhere); the decoder buffers only the incomplete line and returns complete
//! events. It follows the WHATWG event-stream rules that matter to LLM APIs: `data:` lines
//! joined with `\n`, `event:` names, `:` comments, `\n`, `\r\n` and `\r` line ends. It
//! knows nothing about JSON or any provider.
//!
//! Written here rather than taken from a crate because it is small, sits on the hottest
//! path (one call per network read) and needs the byte-split tests below anyway.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field, empty when absent.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Incremental decoder state.
#[derive(Debug, Default)]
pub struct SseDecoder {
    buf: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
}

impl SseDecoder {
    /// A decoder with empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds bytes; complete events are appended to `out`.
    pub fn feed(&mut self, chunk: &[u8], out: &mut Vec<SseEvent>) {
        self.buf.extend_from_slice(chunk);
        let mut start = 0;
        let mut i = 0;
        while i < self.buf.len() {
            match self.buf[i] {
                b'\n' => {
                    let end = if i > start && self.buf[i - 1] == b'\r' {
                        i - 1
                    } else {
                        i
                    };
                    self.line(start, end, out);
                    start = i + 1;
                }
                b'\r' => {
                    match self.buf.get(i + 1) {
                        // `\r\n`: the `\n` arm ends the line.
                        Some(b'\n') => {}
                        Some(_) => {
                            self.line(start, i, out);
                            start = i + 1;
                        }
                        // A trailing `\r` may be the first half of `\r\n`: wait.
                        None => break,
                    }
                }
                _ => {}
            }
            i += 1;
        }
        self.buf.drain(..start);
    }

    /// End of stream: an event that was not terminated by a blank line is dispatched
    /// anyway (some servers omit the final blank line).
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        if !self.buf.is_empty() {
            let len = self.buf.len();
            let end = if self.buf[len - 1] == b'\r' {
                len - 1
            } else {
                len
            };
            self.line(0, end, out);
            self.buf.clear();
        }
        self.dispatch(out);
    }

    fn line(&mut self, start: usize, end: usize, out: &mut Vec<SseEvent>) {
        if start == end {
            self.dispatch(out);
            return;
        }
        let line = String::from_utf8_lossy(&self.buf[start..end]);
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.find(':') {
            Some(pos) => {
                let value = &line[pos + 1..];
                (&line[..pos], value.strip_prefix(' ').unwrap_or(value))
            }
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => {
                self.event.clear();
                self.event.push_str(value);
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
            d.feed(&bytes[pos..pos + n], &mut out);
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
    fn invalid_utf8_is_replaced_not_fatal() {
        let got = decode_in_pieces(b"data: \xff\xfe ok\n\n", &mut || 2);
        assert_eq!(got.len(), 1);
        assert!(got[0].data.ends_with(" ok"));
    }
}
