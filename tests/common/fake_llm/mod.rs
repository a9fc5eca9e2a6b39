//! A scriptable fake LLM provider server for loki's integration tests and benchmarks.
//!
//! [`FakeLlm::start`] binds `127.0.0.1:0` and serves every connection on its own thread
//! (HTTP/1.1 with keep-alive). Each request is recorded (see [`Recorded`]) *before* it is
//! answered, then answered with the next scripted [`Reply`]:
//!
//! 1. the queue registered with [`FakeLlm::push_for`] whose prefix matches the request path
//!    (path including the query string, e.g. `/v1/chat/completions`); when several prefixes
//!    match and have replies queued, the longest prefix wins;
//! 2. otherwise the general FIFO queue filled by [`FakeLlm::push`];
//! 3. otherwise a clone of the default reply ([`FakeLlm::set_default`]; initially
//!    `openai::text_stream(&["Hello", " from", " fake"])`).
//!
//! Routing is deliberately uniform: every method and path (including `GET /v1/models`)
//! consumes the queues/default the same way; tests script whatever they expect.
//!
//! The core (this file and `http.rs`) is wire-format-agnostic: a reply is a status, headers and
//! a body made of byte [`Frame`]s with optional delays, sent with Content-Length or as one HTTP
//! chunk per frame. Provider formats live in sibling builder files (`openai.rs`; Anthropic,
//! Gemini and Bedrock event-stream builders can be added the same way).
#![allow(dead_code)]

pub mod anthropic;
pub mod bedrock;
pub mod cohere;
pub mod embeddings;
pub mod gemini;
pub mod http;
pub mod openai;

use std::collections::VecDeque;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

/// One request as received by the server.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    /// Request target in origin form, including the query string (`/v1/x?a=b`).
    pub path: String,
    /// Header names lowercased, values trimmed, in the order received.
    pub headers: Vec<(String, String)>,
    /// The body, already de-chunked if it was sent with `Transfer-Encoding: chunked`.
    pub body: Vec<u8>,
}

impl Recorded {
    /// First value of the header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// All values of the header `name` (case-insensitive), in order.
    pub fn header_all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The body parsed as JSON; panics (showing the body) if it is not JSON.
    pub fn json(&self) -> serde_json::Value {
        match serde_json::from_slice(&self.body) {
            Ok(value) => value,
            Err(e) => panic!(
                "request {} {} body is not JSON ({e}): {:?}",
                self.method,
                self.path,
                self.body_str()
            ),
        }
    }

    /// The body as text (lossy UTF-8).
    pub fn body_str(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The path without the query string.
    pub fn path_only(&self) -> &str {
        self.path
            .split_once('?')
            .map_or(self.path.as_str(), |(p, _)| p)
    }

    /// The query string (after `?`), if any.
    pub fn query(&self) -> Option<&str> {
        self.path.split_once('?').map(|(_, q)| q)
    }
}

/// A piece of a reply body, written after `delay` (delays only apply in chunked mode).
#[derive(Clone, Debug)]
pub struct Frame {
    pub delay: Duration,
    pub bytes: Vec<u8>,
}

impl Frame {
    pub fn new(bytes: impl Into<Vec<u8>>) -> Frame {
        Frame {
            delay: Duration::ZERO,
            bytes: bytes.into(),
        }
    }

    pub fn delayed(delay: Duration, bytes: impl Into<Vec<u8>>) -> Frame {
        Frame {
            delay,
            bytes: bytes.into(),
        }
    }

    /// `bytes` cut into frames of at most `size` bytes, each sent after `delay` (one HTTP
    /// chunk each): a large event arrives in many reads, or a slow one byte by byte.
    pub fn pieces(bytes: &[u8], size: usize, delay: Duration) -> Vec<Frame> {
        bytes
            .chunks(size.max(1))
            .map(|piece| Frame::delayed(delay, piece.to_vec()))
            .collect()
    }
}

/// How the body is framed on the wire.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BodyMode {
    /// All frames concatenated into one body with `Content-Length` (frame delays ignored).
    ContentLength,
    /// `Transfer-Encoding: chunked`, one HTTP chunk per non-empty frame, each sent after its
    /// delay, then the terminating zero-size chunk. Zero-delay frames may be batched into one
    /// socket write; the buffer is flushed before every delay and at the end.
    Chunked,
}

/// A scripted response.
///
/// `status == 0` is a sentinel meaning "send no response at all" (see [`Reply::no_response`]).
/// `Content-Length` / `Transfer-Encoding` headers are always computed from `mode` and `frames`;
/// such headers in `headers` are ignored. If both `cut_after` and `hang_after` are set, the
/// smaller count applies (hang wins a tie).
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub frames: Vec<Frame>,
    pub mode: BodyMode,
    pub delay_before_headers: Duration,
    pub cut_after_frames: Option<usize>,
    pub hang_after_frames: Option<usize>,
}

impl Reply {
    fn base(status: u16, content_type: &str, frames: Vec<Frame>, mode: BodyMode) -> Reply {
        Reply {
            status,
            headers: vec![("Content-Type".to_string(), content_type.to_string())],
            frames,
            mode,
            delay_before_headers: Duration::ZERO,
            cut_after_frames: None,
            hang_after_frames: None,
        }
    }

    /// JSON body with `Content-Type: application/json`, Content-Length framing.
    pub fn json(status: u16, value: serde_json::Value) -> Reply {
        Reply::raw(status, "application/json", value.to_string())
    }

    /// `200`, `Content-Type: text/event-stream`, `Cache-Control: no-cache`, chunked framing.
    pub fn sse(frames: Vec<Frame>) -> Reply {
        Reply::base(200, "text/event-stream", frames, BodyMode::Chunked)
            .header("Cache-Control", "no-cache")
    }

    /// Arbitrary body with the given content type, Content-Length framing, one frame.
    pub fn raw(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Reply {
        Reply::base(
            status,
            content_type,
            vec![Frame::new(body)],
            BodyMode::ContentLength,
        )
    }

    /// A reply that closes the connection without sending a single byte (simulates a server
    /// dying before answering). Combine with `.hang_after(0)` to accept the request and then
    /// stay silent instead of closing.
    pub fn no_response() -> Reply {
        Reply {
            status: 0,
            headers: Vec::new(),
            frames: Vec::new(),
            mode: BodyMode::ContentLength,
            delay_before_headers: Duration::ZERO,
            cut_after_frames: None,
            hang_after_frames: None,
        }
    }

    /// Sets a header, replacing any existing header of the same name (case-insensitive).
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// The value of header `name` (case-insensitive), if set.
    pub fn header_value(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Appends a header even if one of the same name exists.
    pub fn add_header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// Sets the status code.
    pub fn status(mut self, status: u16) -> Reply {
        self.status = status;
        self
    }

    /// Sets the body framing.
    pub fn mode(mut self, mode: BodyMode) -> Reply {
        self.mode = mode;
        self
    }

    /// Sleeps this long before sending the status line.
    pub fn delay_headers(mut self, d: Duration) -> Reply {
        self.delay_before_headers = d;
        self
    }

    /// Sets the delay of every frame (only effective in chunked mode).
    pub fn frame_delay(mut self, d: Duration) -> Reply {
        for frame in &mut self.frames {
            frame.delay = d;
        }
        self
    }

    /// After `n` frames, close the connection without the rest of the body (no terminating
    /// chunk in chunked mode; fewer bytes than `Content-Length` otherwise).
    pub fn cut_after(mut self, n: usize) -> Reply {
        self.cut_after_frames = Some(n);
        self
    }

    /// After `n` frames, keep the socket open and send nothing more until the client
    /// disconnects, the server is dropped, or 60 s pass.
    pub fn hang_after(mut self, n: usize) -> Reply {
        self.hang_after_frames = Some(n);
        self
    }

    /// The body bytes as the client will see them after de-framing (all frames concatenated).
    pub fn body_bytes(&self) -> Vec<u8> {
        self.frames
            .iter()
            .flat_map(|f| f.bytes.iter().copied())
            .collect()
    }
}

/// Computes a reply from the request (deterministic embeddings, static pages).
pub type Responder = Arc<dyn Fn(&Recorded) -> Reply + Send + Sync>;

struct State {
    queue: VecDeque<Reply>,
    routes: Vec<(String, VecDeque<Reply>)>,
    responders: Vec<(String, Responder)>,
    default: Reply,
    requests: Vec<Recorded>,
}

struct Shared {
    state: Mutex<State>,
    arrived: Condvar,
    stop: AtomicBool,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic elsewhere must never make recorded requests unreachable.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records the request, then picks its reply (route queue, general queue, default).
    fn record_and_pick(&self, request: Recorded) -> Reply {
        let mut state = self.lock();
        let path = request.path.clone();
        state.requests.push(request);
        self.arrived.notify_all();
        let route = state
            .routes
            .iter_mut()
            .filter(|(prefix, queue)| !queue.is_empty() && path.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len());
        if let Some(reply) = route.and_then(|(_, queue)| queue.pop_front()) {
            return reply;
        }
        let responder = state
            .responders
            .iter()
            .filter(|(prefix, _)| path.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, r)| Arc::clone(r));
        if let Some(responder) = responder {
            let request = state.requests.last().cloned();
            drop(state);
            if let Some(request) = request {
                return responder(&request);
            }
            state = self.lock();
        }
        if let Some(reply) = state.queue.pop_front() {
            return reply;
        }
        state.default.clone()
    }
}

/// The fake server. Dropping it stops accepting connections and makes in-flight delays and
/// hangs end early (best effort).
pub struct FakeLlm {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: Option<JoinHandle<()>>,
}

impl FakeLlm {
    /// Binds `127.0.0.1:0` and starts serving.
    pub fn start() -> FakeLlm {
        let listener = match TcpListener::bind("127.0.0.1:0") {
            Ok(listener) => listener,
            Err(e) => panic!("fake LLM: cannot bind 127.0.0.1:0: {e}"),
        };
        let addr = match listener.local_addr() {
            Ok(addr) => addr,
            Err(e) => panic!("fake LLM: no local address: {e}"),
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                routes: Vec::new(),
                responders: Vec::new(),
                default: openai::text_stream(&["Hello", " from", " fake"]),
                requests: Vec::new(),
            }),
            arrived: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let accept_shared = Arc::clone(&shared);
        let acceptor = thread::Builder::new()
            .name(format!("fake-llm-accept-{}", addr.port()))
            .spawn(move || accept_loop(&listener, &accept_shared));
        let acceptor = match acceptor {
            Ok(handle) => handle,
            Err(e) => panic!("fake LLM: cannot spawn accept thread: {e}"),
        };
        FakeLlm {
            addr,
            shared,
            acceptor: Some(acceptor),
        }
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT/v1`
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.addr.port())
    }

    /// `http://127.0.0.1:PORT` (no `/v1`), for providers with other path layouts.
    pub fn root_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.addr.port())
    }

    /// Queues a reply for the next request (any path) not served by a `push_for` queue.
    pub fn push(&self, reply: Reply) {
        self.shared.lock().queue.push_back(reply);
    }

    /// Queues a reply for the next request whose path starts with `path_prefix`; these take
    /// precedence over the general queue.
    pub fn push_for(&self, path_prefix: &str, reply: Reply) {
        let mut state = self.shared.lock();
        match state
            .routes
            .iter_mut()
            .find(|(prefix, _)| prefix == path_prefix)
        {
            Some((_, queue)) => queue.push_back(reply),
            None => state
                .routes
                .push((path_prefix.to_string(), VecDeque::from([reply]))),
        }
    }

    /// Answers requests whose path starts with `path_prefix` by calling `responder` (after
    /// `push_for` queues, before the general queue); the longest prefix wins.
    pub fn respond_for(
        &self,
        path_prefix: &str,
        responder: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
    ) {
        self.shared
            .lock()
            .responders
            .push((path_prefix.to_string(), Arc::new(responder)));
    }

    /// Sets the reply used when no queued reply applies.
    pub fn set_default(&self, reply: Reply) {
        self.shared.lock().default = reply;
    }

    /// Number of queued replies not yet consumed (general queue plus all `push_for` queues).
    pub fn pending_replies(&self) -> usize {
        let state = self.shared.lock();
        state.queue.len() + state.routes.iter().map(|(_, q)| q.len()).sum::<usize>()
    }

    /// All requests so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.lock().requests.clone()
    }

    /// Number of requests so far.
    pub fn request_count(&self) -> usize {
        self.shared.lock().requests.len()
    }

    /// Forgets the recorded requests.
    pub fn clear_requests(&self) {
        self.shared.lock().requests.clear();
    }

    /// The most recent request; panics if there is none.
    pub fn last_request(&self) -> Recorded {
        match self.shared.lock().requests.last() {
            Some(request) => request.clone(),
            None => panic!("fake LLM at {} has received no request", self.base_url()),
        }
    }

    /// Blocks until at least `n` requests have been recorded and returns all of them; panics
    /// after `timeout`.
    pub fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<Recorded> {
        let deadline = Instant::now() + timeout;
        let mut state = self.shared.lock();
        loop {
            if state.requests.len() >= n {
                return state.requests.clone();
            }
            let now = Instant::now();
            if now >= deadline {
                let seen: Vec<String> = state
                    .requests
                    .iter()
                    .map(|r| format!("{} {}", r.method, r.path))
                    .collect();
                drop(state);
                panic!(
                    "fake LLM: timed out after {timeout:?} waiting for {n} request(s); got {}: {seen:?}",
                    seen.len()
                );
            }
            state = match self.shared.arrived.wait_timeout(state, deadline - now) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        self.shared.arrived.notify_all();
        // Wake the blocking accept() so the acceptor sees the stop flag and exits.
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
        if let Some(handle) = self.acceptor.take() {
            let _ = handle.join();
        }
    }
}

fn accept_loop(listener: &TcpListener, shared: &Arc<Shared>) {
    for stream in listener.incoming() {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        let stream = match stream {
            Ok(stream) => stream,
            Err(_) => {
                // E.g. EMFILE: back off instead of spinning.
                thread::sleep(Duration::from_millis(10));
                continue;
            }
        };
        let conn_shared = Arc::clone(shared);
        let _ = thread::Builder::new()
            .name("fake-llm-conn".to_string())
            .spawn(move || {
                let handler = |request: Recorded| conn_shared.record_and_pick(request);
                http::serve_connection(stream, &conn_shared.stop, &handler);
            });
    }
}
