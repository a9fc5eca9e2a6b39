//! Ctrl-C in the REPL: it stops what runs now and nothing after it. A turn or a
//! dot-command is stopped through the conversation ([`Op::Interrupt`]); work the REPL
//! runs beside the conversation (a knowledge-base build, an MCP prompt, a macro's own
//! conversation) holds a token of its own while it runs, a child of the conversation's,
//! so SIGTERM and SIGHUP (which cancel the conversation's token) stop it too.

use std::sync::{Arc, Mutex, PoisonError};

use tokio_util::sync::CancellationToken;

use crate::conversation::Remote;
use loki_protocol::op::Op;

/// What Ctrl-C stops.
pub(super) struct Interrupt {
    remote: Remote,
    /// The work running beside the conversation, if any.
    beside: Mutex<Option<CancellationToken>>,
}

impl Interrupt {
    pub(super) fn new(remote: Remote) -> Self {
        Self {
            remote,
            beside: Mutex::new(None),
        }
    }

    /// Ctrl-C arrived.
    pub(super) fn now(&self) {
        let beside = self.beside.lock().unwrap_or_else(PoisonError::into_inner);
        match beside.as_ref() {
            Some(token) => token.cancel(),
            None => {
                let _ = self.remote.submit(Op::Interrupt);
            }
        }
    }

    /// Work beside the conversation starts under `parent` (the conversation's token):
    /// Ctrl-C cancels the guard's token until the guard is dropped.
    pub(super) fn beside(self: &Arc<Self>, parent: &CancellationToken) -> Beside {
        let token = parent.child_token();
        *self.beside.lock().unwrap_or_else(PoisonError::into_inner) = Some(token.clone());
        Beside {
            token,
            interrupt: Arc::clone(self),
        }
    }
}

/// Work running beside the conversation; when it is dropped, Ctrl-C goes to the
/// conversation again.
pub(super) struct Beside {
    /// What Ctrl-C (and the conversation's token) cancels.
    pub token: CancellationToken,
    interrupt: Arc<Interrupt>,
}

impl Drop for Beside {
    fn drop(&mut self) {
        *self
            .interrupt
            .beside
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = None;
    }
}
