//! A round-robin TCP proxy in front of several `loki --serve` instances, as a load
//! balancer would be: each connection goes to the next backend in turn (a backend that
//! refuses the connection is skipped), so consecutive requests (HTTP/1.0, one per
//! connection) land on different instances.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A running proxy; it stops taking connections when the test process ends.
pub struct RoundRobin {
    /// Where clients connect.
    pub addr: String,
    next: Arc<AtomicUsize>,
}

impl RoundRobin {
    /// Listens on a free port and spreads connections over `backends`.
    pub fn start(backends: Vec<String>) -> RoundRobin {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let next = Arc::new(AtomicUsize::new(0));
        let turn = Arc::clone(&next);
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let first = turn.fetch_add(1, Ordering::SeqCst);
                let backend = (0..backends.len())
                    .find_map(|k| TcpStream::connect(&backends[(first + k) % backends.len()]).ok());
                match backend {
                    Some(backend) => relay(client, backend),
                    None => drop(client),
                }
            }
        });
        RoundRobin { addr, next }
    }

    /// Which backend (by index) the next connection goes to first.
    pub fn next(&self, backends: usize) -> usize {
        self.next.load(Ordering::SeqCst) % backends
    }
}

/// Copies bytes both ways until either side closes.
fn relay(client: TcpStream, backend: TcpStream) {
    let (mut client_in, mut backend_out) =
        (client.try_clone().unwrap(), backend.try_clone().unwrap());
    let (mut backend_in, mut client_out) = (backend, client);
    std::thread::spawn(move || {
        copy(&mut client_in, &mut backend_out);
    });
    std::thread::spawn(move || {
        copy(&mut backend_in, &mut client_out);
    });
}

fn copy(from: &mut TcpStream, to: &mut TcpStream) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
    let _ = from.shutdown(Shutdown::Read);
}
