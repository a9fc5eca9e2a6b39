//! A streamed reply body turned into batches of events: one network read at a time,
//! through a provider's [`Decoder`], within the read, idle and total time limits. This is
//! the loop every streamed token goes through, so it is here, not generic over the
//! decoder (one `dyn` call per read), and compiled at full optimisation. What a failure
//! means for the user (which error, which message) is `loki::client::wire`'s.

use std::pin::Pin;
use std::time::{Duration, Instant};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

use crate::provider_event::ProviderEvent;
use crate::sse::{SseDecoder, SseEvent};

/// Why a streamed body could not be decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    /// Bytes that do not follow the provider's protocol.
    #[error("{0}")]
    Malformed(String),
    /// The provider reported an error inside the stream.
    #[error("{0}")]
    Upstream(String),
    /// One event is larger than the limit (bytes) set with [`Decoder::set_max_event`].
    #[error("an event larger than {0} bytes")]
    TooLarge(usize),
}

/// Turns the bytes of a streamed reply into events.
pub trait Decoder: Send + 'static {
    /// Feeds one network read.
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError>;
    /// The body ended; flush anything buffered.
    fn finish(&mut self, out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError>;
    /// Whether the provider's end-of-answer marker has been seen.
    fn complete(&self) -> bool;
    /// Sets the largest single event (SSE event, NDJSON line, event-stream frame) the
    /// decoder accepts; a larger one makes `feed` fail with [`DecodeError::TooLarge`] as
    /// soon as it is known, so one endless line cannot eat memory.
    fn set_max_event(&mut self, max: Option<usize>);
}

/// The JSON half of an SSE protocol: one dispatched event at a time.
pub trait SseParser: Send + 'static {
    /// Decodes one event.
    fn event(&mut self, event: &SseEvent, out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError>;
    /// Whether the end-of-answer marker has been seen.
    fn complete(&self) -> bool;
}

/// A [`Decoder`] for SSE bodies, delegating each event to `P`.
pub struct Sse<P> {
    framing: SseDecoder,
    parser: P,
    scratch: Vec<SseEvent>,
}

impl<P: SseParser> Sse<P> {
    /// Wraps an event parser.
    pub fn new(parser: P) -> Self {
        Self {
            framing: SseDecoder::new(),
            parser,
            scratch: Vec::new(),
        }
    }

    fn drain(&mut self, out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        let mut result = Ok(());
        for event in self.scratch.drain(..) {
            if let Err(e) = self.parser.event(&event, out) {
                result = Err(e);
                break;
            }
        }
        self.scratch.clear();
        result
    }
}

impl<P: SseParser> Decoder for Sse<P> {
    fn feed(&mut self, bytes: &[u8], out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        let fed = self.framing.feed(bytes, &mut self.scratch);
        // Events completed before an oversized one are still delivered.
        self.drain(out)?;
        fed.map_err(|e| DecodeError::TooLarge(e.limit))
    }

    fn finish(&mut self, out: &mut Vec<ProviderEvent>) -> Result<(), DecodeError> {
        self.framing.finish(&mut self.scratch);
        self.drain(out)
    }

    fn complete(&self) -> bool {
        self.parser.complete()
    }

    fn set_max_event(&mut self, max: Option<usize>) {
        self.framing.set_max_event(max);
    }
}

/// A streamed response body.
pub type Body = Pin<Box<dyn Stream<Item = reqwest::Result<Bytes>> + Send>>;

/// Batches of events, then the failure that ended the stream, if any.
pub type Batches = Pin<Box<dyn Stream<Item = Result<Vec<ProviderEvent>, Box<Failure>>> + Send>>;

/// Which limit a wait for the next read ran into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// `extra.read_timeout`: not a single byte.
    Silence,
    /// `stream_idle_timeout`: no answer content.
    Idle,
    /// `request_timeout`: the whole request.
    Total,
}

/// The time limits of one streamed body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// Longest wait for any byte.
    pub read: Duration,
    /// Longest time without a decoded event.
    pub idle: Option<Duration>,
    /// Longest time for the whole request.
    pub total: Option<Duration>,
    /// When the request was sent.
    pub started: Instant,
}

/// The shortest of the waits that apply, and which limit it is.
pub fn next_wait(
    read: Duration,
    idle_left: Option<Duration>,
    total_left: Option<Duration>,
) -> (Duration, Waited) {
    let mut wait = (read, Waited::Silence);
    for (left, kind) in [(idle_left, Waited::Idle), (total_left, Waited::Total)] {
        if let Some(left) = left
            && left <= wait.0
        {
            wait = (left, kind);
        }
    }
    wait
}

/// Why a stream stopped before its end-of-answer marker.
#[derive(Debug)]
pub enum Stop {
    /// The decoder refused the bytes.
    Decode(DecodeError),
    /// A time limit ran out.
    Waited(Waited),
    /// The HTTP library's own read timeout.
    ReadTimeout,
    /// The connection failed.
    Read(reqwest::Error),
    /// The body ended without the end-of-answer marker.
    Cut,
}

/// A stream's failure, with what is needed to describe a body that was not a stream.
#[derive(Debug)]
pub struct Failure {
    /// What happened.
    pub stop: Stop,
    /// Whether any event was decoded before it.
    pub decoded_any: bool,
    /// The first bytes of the body.
    pub head: Vec<u8>,
}

/// How much of a body is kept to describe it when it turns out not to be a stream.
const HEAD_BYTES: usize = 2048;

struct State {
    body: Body,
    decoder: Box<dyn Decoder>,
    timing: Timing,
    finished: bool,
    pending: Option<Stop>,
    /// When the last event was decoded, or the stream began (for the idle limit).
    last_content: Instant,
    decoded_any: bool,
    head: Vec<u8>,
}

impl State {
    fn failure(&mut self, stop: Stop) -> Box<Failure> {
        Box::new(Failure {
            stop,
            decoded_any: self.decoded_any,
            head: std::mem::take(&mut self.head),
        })
    }

    fn feed(&mut self, bytes: &[u8], events: &mut Vec<ProviderEvent>) -> Result<(), Stop> {
        if self.head.len() < HEAD_BYTES {
            let take = bytes.len().min(HEAD_BYTES - self.head.len());
            self.head.extend_from_slice(&bytes[..take]);
        }
        let fed = self.decoder.feed(bytes, events);
        self.decoded_any |= !events.is_empty();
        fed.map_err(Stop::Decode)
    }

    /// Waits for the next read, bounded by the silence, idle and total limits.
    async fn next(&mut self) -> Result<Option<Bytes>, Stop> {
        let now = Instant::now();
        let timing = self.timing;
        let idle_left = timing
            .idle
            .map(|d| d.saturating_sub(now.duration_since(self.last_content)));
        let total_left = timing
            .total
            .map(|d| d.saturating_sub(now.duration_since(timing.started)));
        let (wait, waited) = next_wait(timing.read, idle_left, total_left);
        if wait.is_zero() {
            return Err(Stop::Waited(waited));
        }
        match tokio::time::timeout(wait, self.body.next()).await {
            Err(_) => Err(Stop::Waited(waited)),
            Ok(None) => Ok(None),
            Ok(Some(Ok(bytes))) => Ok(Some(bytes)),
            Ok(Some(Err(e))) if e.is_timeout() => Err(Stop::ReadTimeout),
            Ok(Some(Err(e))) => Err(Stop::Read(e)),
        }
    }
}

/// Streams `body` through `decoder`: one batch of events per network read. Events that
/// decoded before a failure are delivered first; the failure follows on the next poll. A
/// body that ends before the decoder saw the end-of-answer marker fails with
/// [`Stop::Cut`]. `max_event` is passed to [`Decoder::set_max_event`].
pub fn stream(
    body: Body,
    mut decoder: Box<dyn Decoder>,
    timing: Timing,
    max_event: Option<usize>,
) -> Batches {
    decoder.set_max_event(max_event);
    let state = State {
        body,
        decoder,
        timing,
        finished: false,
        pending: None,
        last_content: Instant::now(),
        decoded_any: false,
        head: Vec::new(),
    };
    Box::pin(futures_util::stream::unfold(state, |mut st| async move {
        if let Some(stop) = st.pending.take() {
            let failure = st.failure(stop);
            return Some((Err(failure), st));
        }
        if st.finished {
            return None;
        }
        let mut events = Vec::new();
        loop {
            let decoded = match st.next().await {
                Ok(Some(bytes)) => st.feed(&bytes, &mut events),
                Ok(None) => {
                    st.finished = true;
                    let finished = st.decoder.finish(&mut events);
                    st.decoded_any |= !events.is_empty();
                    finished.map_err(Stop::Decode)
                }
                Err(e) => Err(e),
            };
            if !events.is_empty() {
                st.decoded_any = true;
                st.last_content = Instant::now();
            }
            if let Err(stop) = decoded {
                st.finished = true;
                st.pending = Some(stop);
                break;
            }
            if st.finished {
                if !st.decoder.complete() {
                    st.pending = Some(Stop::Cut);
                }
                break;
            }
            if !events.is_empty() {
                break;
            }
        }
        if events.is_empty() {
            let stop = st.pending.take()?;
            let failure = st.failure(stop);
            return Some((Err(failure), st));
        }
        Some((Ok(events), st))
    }))
}
