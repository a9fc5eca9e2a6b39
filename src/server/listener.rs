//! The server's TCP listener: a connection must finish its first request's headers within
//! `api.limits.header_read_timeout_seconds`, or it is closed. Without this a client that
//! opens connections and trickles header bytes (slowloris) holds them open for ever:
//! the HTTP layer loki uses has no such timer of its own.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};

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

/// A connection that fails its reads once the deadline passes before the end of the
/// first header block (`\r\n\r\n`) was read.
pub struct HeaderDeadline {
    stream: TcpStream,
    /// Until the headers are in.
    deadline: Option<Pin<Box<tokio::time::Sleep>>>,
    /// The last bytes read, to find `\r\n\r\n` across reads.
    tail: [u8; 3],
}

impl HeaderDeadline {
    fn new(stream: TcpStream, timeout: Duration) -> Self {
        Self {
            stream,
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
}

impl AsyncRead for HeaderDeadline {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let read = Pin::new(&mut self.stream).poll_read(cx, buf);
        if self.deadline.is_none() {
            return read;
        }
        match read {
            Poll::Ready(Ok(())) => {
                let fresh = buf.filled()[before..].to_vec();
                if self.headers_done(&fresh) {
                    self.deadline = None;
                }
                Poll::Ready(Ok(()))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => match self.deadline.as_mut().map(|d| d.as_mut().poll(cx)) {
                Some(Poll::Ready(())) => Poll::Ready(Err(io::Error::new(
                    io::ErrorKind::TimedOut,
                    "the request's headers did not arrive in time",
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
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}
