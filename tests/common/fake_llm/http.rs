//! Wire-format-agnostic HTTP/1.1 plumbing for the fake LLM server.
//!
//! This file knows nothing about any LLM API: it parses requests (Content-Length and chunked
//! bodies, `Expect: 100-continue`, keep-alive), hands each one to a handler that records it and
//! picks a [`Reply`], and writes that reply as a status line, headers and a body made of byte
//! frames — either one Content-Length body or one HTTP chunk per frame with per-frame delays —
//! including the fault injections (`cut_after`, `hang_after`, no response at all).

use std::io::{self, BufWriter, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use super::{BodyMode, Recorded, Reply};

/// Socket read timeout used to poll the server's stop flag while a connection is idle or hung.
pub const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// How long a `hang_after` reply keeps the socket open when the client never disconnects.
pub const HANG_LIMIT: Duration = Duration::from_secs(60);
/// After a reply that ends the connection, how long to drain the client's remaining bytes
/// (so the kernel sends FIN rather than RST and the client reads everything that was sent).
pub const DRAIN_LIMIT: Duration = Duration::from_secs(1);
/// Write timeout: a client that stops reading for this long is considered gone.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest accepted request head (request line + headers).
pub const MAX_HEAD_BYTES: usize = 1 << 20;
/// Size of the write buffer; zero-delay frames are batched up to this size per `write`.
pub const WRITE_BUFFER_BYTES: usize = 64 * 1024;

/// One parsed request plus what the connection should do after replying to it.
#[derive(Debug)]
pub struct ParsedRequest {
    pub recorded: Recorded,
    /// False when the client sent `Connection: close` (or spoke HTTP/1.0 without keep-alive).
    pub keep_alive: bool,
}

/// What the connection loop does after a reply has been written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    KeepAlive,
    Close,
}

/// Serves one accepted connection until the client closes it, a reply ends it, or `stop` is set.
///
/// `handler` is called once per complete request (after the body has been read) and must return
/// the reply to send. Never panics on I/O errors: a client going away mid-reply is normal.
pub fn serve_connection(stream: TcpStream, stop: &AtomicBool, handler: &dyn Fn(Recorded) -> Reply) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_read_timeout(Some(POLL_INTERVAL));
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let mut conn = Conn::new(stream, stop);
    // Stops on a clean close between requests, a malformed request, or the server stopping.
    while let Ok(Some(request)) = conn.read_request() {
        let reply = handler(request.recorded);
        if write_reply(&conn.stream, &reply, !request.keep_alive, stop) == Outcome::Close {
            break;
        }
    }
    close_gracefully(&conn.stream, stop);
}

/// Buffered reader over a socket with a read timeout; timeouts are retried unless stopping.
pub struct Conn<'a> {
    pub stream: TcpStream,
    buf: Vec<u8>,
    pos: usize,
    stop: &'a AtomicBool,
}

impl<'a> Conn<'a> {
    pub fn new(stream: TcpStream, stop: &'a AtomicBool) -> Conn<'a> {
        Conn {
            stream,
            buf: Vec::with_capacity(8192),
            pos: 0,
            stop,
        }
    }

    fn pending(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Reads more bytes into the buffer. Returns 0 at EOF.
    fn fill(&mut self) -> io::Result<usize> {
        let mut tmp = [0u8; 16 * 1024];
        loop {
            match (&self.stream).read(&mut tmp) {
                Ok(n) => {
                    self.buf.extend_from_slice(&tmp[..n]);
                    return Ok(n);
                }
                Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {
                    if self.stop.load(Ordering::SeqCst) {
                        return Err(io::Error::other("fake LLM server stopped"));
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    fn compact(&mut self) {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
    }

    /// Returns the request head (without the blank line), or `None` on a clean EOF before any
    /// byte of a new request.
    fn read_head(&mut self) -> io::Result<Option<Vec<u8>>> {
        self.compact();
        let mut searched = 0;
        loop {
            // Tolerate stray CRLFs before the request line (RFC 9112 section 2.2).
            while matches!(self.pending().first(), Some(b'\r' | b'\n')) {
                self.pos += 1;
                searched = 0;
            }
            let pending = self.pending();
            if let Some((end, sep_len)) = find_head_end(pending, searched) {
                let head = pending[..end].to_vec();
                self.pos += end + sep_len;
                return Ok(Some(head));
            }
            searched = pending.len().saturating_sub(3);
            if pending.len() > MAX_HEAD_BYTES {
                return Err(io::Error::other("request head too large"));
            }
            if self.fill()? == 0 {
                return if self.pending().is_empty() {
                    Ok(None)
                } else {
                    Err(io::ErrorKind::UnexpectedEof.into())
                };
            }
        }
    }

    fn read_exact_bytes(&mut self, n: usize) -> io::Result<Vec<u8>> {
        while self.pending().len() < n {
            if self.fill()? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
        let out = self.pending()[..n].to_vec();
        self.pos += n;
        Ok(out)
    }

    /// Reads one line, without its `\n` / `\r\n`.
    fn read_line(&mut self) -> io::Result<Vec<u8>> {
        loop {
            if let Some(i) = self.pending().iter().position(|&b| b == b'\n') {
                let mut line = self.pending()[..i].to_vec();
                self.pos += i + 1;
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                return Ok(line);
            }
            if self.pending().len() > MAX_HEAD_BYTES {
                return Err(io::Error::other("line too long"));
            }
            if self.fill()? == 0 {
                return Err(io::ErrorKind::UnexpectedEof.into());
            }
        }
    }

    fn read_chunked_body(&mut self) -> io::Result<Vec<u8>> {
        let mut body = Vec::new();
        loop {
            let line = self.read_line()?;
            let line = String::from_utf8_lossy(&line);
            let size_text = line.split(';').next().unwrap_or("").trim();
            let size = usize::from_str_radix(size_text, 16)
                .map_err(|_| io::Error::other(format!("bad chunk size line {line:?}")))?;
            if size == 0 {
                // Trailer section: header lines until an empty line.
                while !self.read_line()?.is_empty() {}
                return Ok(body);
            }
            body.extend_from_slice(&self.read_exact_bytes(size)?);
            if !self.read_line()?.is_empty() {
                return Err(io::Error::other("chunk data not followed by CRLF"));
            }
        }
    }

    /// Reads one full request (head and body). `Ok(None)` means the client closed cleanly.
    pub fn read_request(&mut self) -> io::Result<Option<ParsedRequest>> {
        let Some(head) = self.read_head()? else {
            return Ok(None);
        };
        let head = String::from_utf8_lossy(&head).into_owned();
        let mut lines = head.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
        let request_line = lines.next().unwrap_or("");
        let mut parts = request_line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let target = parts.next().unwrap_or("/");
        let version = parts.next().unwrap_or("HTTP/1.1").to_ascii_uppercase();
        if method.is_empty() {
            return Err(io::Error::other("empty request line"));
        }
        let path = origin_form(target);

        let mut headers: Vec<(String, String)> = Vec::new();
        for line in lines {
            if line.is_empty() {
                continue;
            }
            if line.starts_with([' ', '\t']) {
                // Obsolete line folding: continuation of the previous header value.
                if let Some(last) = headers.last_mut() {
                    last.1.push(' ');
                    last.1.push_str(line.trim());
                }
                continue;
            }
            if let Some((name, value)) = line.split_once(':') {
                headers.push((name.trim().to_ascii_lowercase(), value.trim().to_string()));
            }
        }
        let get = |name: &str| {
            headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.to_ascii_lowercase())
        };
        let connection = get("connection").unwrap_or_default();
        let has_token = |token: &str| connection.split(',').any(|t| t.trim() == token);
        let keep_alive = if version == "HTTP/1.0" {
            has_token("keep-alive")
        } else {
            !has_token("close")
        };

        if get("expect").is_some_and(|v| v == "100-continue") {
            let _ = (&self.stream).write_all(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        let chunked =
            get("transfer-encoding").is_some_and(|v| v.split(',').any(|t| t.trim() == "chunked"));
        let body = if chunked {
            self.read_chunked_body()?
        } else {
            let length = match get("content-length") {
                Some(v) => v
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| io::Error::other(format!("bad content-length {v:?}")))?,
                None => 0,
            };
            self.read_exact_bytes(length)?
        };
        Ok(Some(ParsedRequest {
            recorded: Recorded {
                method,
                path,
                headers,
                body,
            },
            keep_alive,
        }))
    }
}

/// Finds the end of the request head: returns (index of the separator, separator length).
fn find_head_end(data: &[u8], from: usize) -> Option<(usize, usize)> {
    let mut i = from;
    while i < data.len() {
        if data[i] == b'\n' {
            if data.get(i + 1) == Some(&b'\n') {
                return Some((i, 2));
            }
            if data.get(i + 1) == Some(&b'\r') && data.get(i + 2) == Some(&b'\n') {
                // "\n\r\n": the head ends at i (minus a preceding '\r' if present).
                let (end, extra) = if i > 0 && data[i - 1] == b'\r' {
                    (i - 1, 1)
                } else {
                    (i, 0)
                };
                return Some((end, 3 + extra));
            }
        }
        i += 1;
    }
    None
}

/// Turns an absolute-form target (`http://host/path?q`) into origin form (`/path?q`).
fn origin_form(target: &str) -> String {
    for scheme in ["http://", "https://"] {
        if let Some(rest) = target.strip_prefix(scheme) {
            return match rest.find('/') {
                Some(i) => rest[i..].to_string(),
                None => "/".to_string(),
            };
        }
    }
    target.to_string()
}

fn is_timeout(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// Standard reason phrase for a status code (empty for unknown codes, which is valid HTTP).
pub fn reason_phrase(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        402 => "Payment Required",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        415 => "Unsupported Media Type",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Site is overloaded",
        _ => "",
    }
}

/// Sleeps for `d`, waking early (returning false) if `stop` gets set.
pub fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) -> bool {
    let deadline = Instant::now() + d;
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= deadline {
            return true;
        }
        thread::sleep((deadline - now).min(POLL_INTERVAL));
    }
}

/// Builds the status line and headers. Framing headers (`Content-Length`,
/// `Transfer-Encoding`) are always computed here; user-supplied ones are dropped.
fn response_head(reply: &Reply, add_close: bool) -> Vec<u8> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\n",
        reply.status,
        reason_phrase(reply.status)
    );
    for (name, value) in &reply.headers {
        if name.eq_ignore_ascii_case("content-length")
            || name.eq_ignore_ascii_case("transfer-encoding")
        {
            continue;
        }
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    match reply.mode {
        BodyMode::ContentLength => {
            let total: usize = reply.frames.iter().map(|f| f.bytes.len()).sum();
            head.push_str(&format!("Content-Length: {total}\r\n"));
        }
        BodyMode::Chunked => head.push_str("Transfer-Encoding: chunked\r\n"),
    }
    if add_close {
        head.push_str("Connection: close\r\n");
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// What happens once the frames allowed by `cut_after` / `hang_after` have been written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    /// All frames written, finish normally.
    Complete,
    /// Close after the first n frames, without the rest of the body.
    Cut(usize),
    /// Go silent after the first n frames.
    Hang(usize),
}

fn stop_point(reply: &Reply) -> Stop {
    match (reply.cut_after_frames, reply.hang_after_frames) {
        (None, None) => Stop::Complete,
        (Some(c), None) => Stop::Cut(c),
        (None, Some(h)) => Stop::Hang(h),
        (Some(c), Some(h)) if h <= c => Stop::Hang(h),
        (Some(c), Some(_)) => Stop::Cut(c),
    }
}

/// Writes `reply` to `stream`. `client_wants_close` is true when the request asked for
/// `Connection: close`. Write errors (client gone) end the connection silently.
pub fn write_reply(
    stream: &TcpStream,
    reply: &Reply,
    client_wants_close: bool,
    stop: &AtomicBool,
) -> Outcome {
    if !reply.delay_before_headers.is_zero()
        && !sleep_unless_stopped(reply.delay_before_headers, stop)
    {
        return Outcome::Close;
    }
    let stop_at = stop_point(reply);
    if reply.status == 0 {
        // "No response": close (or hang) without sending a single byte.
        if let Stop::Hang(_) = stop_at {
            hang(stream, stop);
        }
        return Outcome::Close;
    }
    let reply_wants_close = reply.headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("connection")
            && v.split(',').any(|t| t.trim().eq_ignore_ascii_case("close"))
    });
    let add_close = client_wants_close
        && !reply
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("connection"));
    let limit = match stop_at {
        Stop::Complete => reply.frames.len(),
        Stop::Cut(n) | Stop::Hang(n) => n.min(reply.frames.len()),
    };

    let mut out = BufWriter::with_capacity(WRITE_BUFFER_BYTES, stream);
    let written = write_body(&mut out, reply, add_close, limit, stop_at, stop);
    if written.is_err() {
        return Outcome::Close;
    }
    match stop_at {
        Stop::Complete if client_wants_close || reply_wants_close => Outcome::Close,
        Stop::Complete => Outcome::KeepAlive,
        Stop::Cut(_) => Outcome::Close,
        Stop::Hang(_) => {
            hang(stream, stop);
            Outcome::Close
        }
    }
}

fn write_body(
    out: &mut BufWriter<&TcpStream>,
    reply: &Reply,
    add_close: bool,
    limit: usize,
    stop_at: Stop,
    stop: &AtomicBool,
) -> io::Result<()> {
    out.write_all(&response_head(reply, add_close))?;
    match reply.mode {
        BodyMode::ContentLength => {
            for frame in &reply.frames[..limit] {
                out.write_all(&frame.bytes)?;
            }
        }
        BodyMode::Chunked => {
            for frame in &reply.frames[..limit] {
                if !frame.delay.is_zero() {
                    out.flush()?;
                    if !sleep_unless_stopped(frame.delay, stop) {
                        return Err(io::Error::other("fake LLM server stopped"));
                    }
                }
                // An empty chunk would terminate the body, so empty frames only contribute
                // their delay.
                if !frame.bytes.is_empty() {
                    write!(out, "{:x}\r\n", frame.bytes.len())?;
                    out.write_all(&frame.bytes)?;
                    out.write_all(b"\r\n")?;
                }
            }
            if stop_at == Stop::Complete {
                out.write_all(b"0\r\n\r\n")?;
            }
        }
    }
    out.flush()
}

/// Keeps the connection open, sending nothing, until the client disconnects, the server stops,
/// or [`HANG_LIMIT`] passes. Anything the client sends meanwhile is discarded.
fn hang(stream: &TcpStream, stop: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(POLL_INTERVAL));
    let start = Instant::now();
    let mut sink = [0u8; 4096];
    while start.elapsed() < HANG_LIMIT && !stop.load(Ordering::SeqCst) {
        match (&*stream).read(&mut sink) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}

/// Half-closes the connection (FIN after all written bytes) and drains what the client still
/// sends for a short while, so closing never turns into an RST that would discard data the
/// client has not read yet.
pub fn close_gracefully(stream: &TcpStream, stop: &AtomicBool) {
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(POLL_INTERVAL));
    let start = Instant::now();
    let mut sink = [0u8; 4096];
    while start.elapsed() < DRAIN_LIMIT && !stop.load(Ordering::SeqCst) {
        match (&*stream).read(&mut sink) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if is_timeout(&e) || e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    let _ = stream.shutdown(Shutdown::Both);
}
