//! A small HTTP/1.0 client for the server tests: requests are written by hand and the
//! answer read until the server closes the connection (HTTP/1.0 has no chunking), so a
//! test sees exactly what went over the wire and can hang up mid-stream.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A whole response.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Response {
    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Sends a request and reads its status line and headers; the rest is left to read.
pub fn open(
    addr: &str,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: Option<&str>,
) -> (u16, Vec<(String, String)>, BufReader<TcpStream>) {
    let bearer = key.map(|key| format!("Bearer {key}"));
    let mut headers = Vec::new();
    if let Some(bearer) = &bearer {
        headers.push(("Authorization", bearer.as_str()));
    }
    open_with(addr, method, path, &headers, body)
}

/// Sends a request with `headers` (which may replace `Host` and `Content-Type`: a body
/// is JSON unless they say otherwise) and reads its status line and headers.
pub fn open_with(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> (u16, Vec<(String, String)>, BufReader<TcpStream>) {
    let mut stream = TcpStream::connect(addr).expect("connect to loki --serve");
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let has = |name: &str| headers.iter().any(|(k, _)| k.eq_ignore_ascii_case(name));
    let mut head = format!("{method} {path} HTTP/1.0\r\n");
    if !has("host") {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    let body = body.unwrap_or("");
    if !body.is_empty() && !has("content-type") {
        head.push_str("Content-Type: application/json\r\n");
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes()).unwrap();
    stream.write_all(body.as_bytes()).unwrap();
    let mut reader = BufReader::new(stream);
    let mut status_line = String::new();
    reader.read_line(&mut status_line).unwrap();
    let status: u16 = status_line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {status_line:?}"));
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    (status, headers, reader)
}

/// Sends a request and reads the whole response.
pub fn request(
    addr: &str,
    method: &str,
    path: &str,
    key: Option<&str>,
    body: Option<&str>,
) -> Response {
    let (status, headers, mut reader) = open(addr, method, path, key, body);
    let mut body = String::new();
    reader.read_to_string(&mut body).unwrap();
    Response {
        status,
        headers,
        body,
    }
}

/// Sends a request with `headers` and reads the whole response.
pub fn request_with(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Response {
    let (status, headers, mut reader) = open_with(addr, method, path, headers, body);
    let mut body = String::new();
    reader.read_to_string(&mut body).unwrap();
    Response {
        status,
        headers,
        body,
    }
}

/// The `data:` payloads of server-sent events read from `reader` until `stop` is seen in
/// an event name or payload (or the stream ends), with their event names.
pub fn events(reader: &mut impl BufRead, stop: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut name = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return out;
        }
        let line = line.trim_end();
        if let Some(event) = line.strip_prefix("event: ") {
            name = event.to_string();
        } else if let Some(data) = line.strip_prefix("data: ") {
            let done = name == stop || data.contains(stop);
            out.push((std::mem::take(&mut name), data.to_string()));
            if done {
                return out;
            }
        }
    }
}

/// One server-sent event with its `id:`.
#[derive(Debug, Clone)]
pub struct Event {
    pub id: Option<u64>,
    pub name: String,
    pub data: String,
}

/// Like [`events`], keeping each event's `id:`; stops after the event named `stop`.
pub fn numbered_events(reader: &mut impl BufRead, stop: &str) -> Vec<Event> {
    let mut out = Vec::new();
    let mut id = None;
    let mut name = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return out;
        }
        let line = line.trim_end();
        if let Some(n) = line.strip_prefix("id: ") {
            id = n.parse().ok();
        } else if let Some(event) = line.strip_prefix("event: ") {
            name = event.to_string();
        } else if let Some(data) = line.strip_prefix("data: ") {
            let done = name == stop;
            out.push(Event {
                id: id.take(),
                name: std::mem::take(&mut name),
                data: data.to_string(),
            });
            if done {
                return out;
            }
        }
    }
}
