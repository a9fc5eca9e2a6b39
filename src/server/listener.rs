//! The server's TCP listener: every request of a connection must finish its headers
//! within `api.limits.header_read_timeout_seconds` (the first from the connection's start,
//! the next ones from their first byte), and a kept-alive connection may send nothing for
//! at most [`KEEP_ALIVE`] after the last byte of a response, or it is closed. Without this
//! a client that trickles header bytes (slowloris) — on a new connection or between the
//! requests of a kept-alive one — or opens connections and leaves them idle holds them
//! for ever: the HTTP layer loki uses has no such timers of its own. Event streams send a
//! comment every few seconds (`reply::sse`), so a quiet stream is never taken for idle.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

/// How long a kept-alive connection may stay silent after the last byte loki wrote.
pub(super) const KEEP_ALIVE: Duration = Duration::from_secs(60);

/// A TCP listener whose connections get a header deadline.
pub(super) struct Deadlined {
    pub inner: TcpListener,
    pub header_timeout: Duration,
}

impl axum::serve::Listener for Deadlined {
    type Io = HeaderDeadline;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (HeaderDeadline, SocketAddr) {
        loop {
            match self.inner.accept().await {
                Ok((stream, addr)) => {
                    return (HeaderDeadline::new(stream, self.header_timeout), addr);
                }
                // Out of descriptors and the like: wait a little rather than spin.
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }
}

/// The address a request came from (what `ConnectInfo` carries for this listener).
#[derive(Debug, Clone, Copy)]
pub struct ClientAddr(pub SocketAddr);

impl axum::extract::connect_info::Connected<axum::serve::IncomingStream<'_, Deadlined>>
    for ClientAddr
{
    fn connect_info(stream: axum::serve::IncomingStream<'_, Deadlined>) -> Self {
        ClientAddr(*stream.remote_addr())
    }
}

/// Where a connection is in its request cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Reading a request's headers: the header deadline runs.
    Headers,
    /// The headers are in; nothing written yet: the handler takes what it takes.
    Handling,
    /// A response is being (or was) written: the connection may stay silent for
    /// [`KEEP_ALIVE`] after the last write; the next bytes begin a new request.
    Responded,
}

/// A connection that fails its reads once a deadline passes (see the module docs).
pub struct HeaderDeadline {
    stream: TcpStream,
    phase: Phase,
    header_timeout: Duration,
    /// When the current phase must end (none while handling).
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The last bytes read, to find `\r\n\r\n` across reads.
    tail: [u8; 3],
}

impl HeaderDeadline {
    fn new(stream: TcpStream, timeout: Duration) -> Self {
        Self {
            stream,
            phase: Phase::Headers,
            header_timeout: timeout,
            deadline: Some(Box::pin(tokio::time::sleep(timeout))),
            tail: [0; 3],
        }
    }

    /// Notes bytes read; true once the header block has ended.
    fn headers_done(&mut self, bytes: &[u8]) -> bool {
        let mut window: Vec<u8> = self.tail.to_vec();
        window.extend_from_slice(bytes);
        let done = window.windows(4).any(|w| w == b"\r\n\r\n");
        let keep = window.len().min(3);
        self.tail = [0; 3];
        self.tail[3 - keep..].copy_from_slice(&window[window.len() - keep..]);
        done
    }

    fn arm(&mut self, timeout: Duration) {
        match self.deadline.as_mut() {
            Some(sleep) => sleep.as_mut().reset(tokio::time::Instant::now() + timeout),
            None => self.deadline = Some(Box::pin(tokio::time::sleep(timeout))),
        }
    }
}

impl AsyncRead for HeaderDeadline {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.stream).poll_read(cx, buf);
        match read {
            Poll::Ready(Ok(())) => {
                let fresh = buf.filled()[before..].to_vec();
                if fresh.is_empty() {
                    return Poll::Ready(Ok(()));
                }
                if self.phase == Phase::Responded {
                    // The next request begins: its headers get the header timeout.
                    self.phase = Phase::Headers;
                    self.tail = [0; 3];
                    let timeout = self.header_timeout;
                    self.arm(timeout);
                }
                if self.phase == Phase::Headers && self.headers_done(&fresh) {
                    self.phase = Phase::Handling;
                    self.deadline = None;
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => match self.deadline.as_mut().map(|d| d.as_mut().poll(cx)) {
                Some(Poll::Ready(())) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    if self.phase == Phase::Responded {
                        "the connection stayed silent too long"
                    } else {
                        "the request's headers did not arrive in time"
                    },
                ))),
                _ => Poll::Pending,
            },
        }
    }
}

impl AsyncWrite for HeaderDeadline {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        // Every write of a response pushes the silence allowed after it.
        if self.phase != Phase::Headers {
            self.phase = Phase::Responded;
            self.arm(KEEP_ALIVE);
        }
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
