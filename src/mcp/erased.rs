//! One transport type for every kind of MCP server: rmcp's client session (its message
//! loop, peer and task plumbing) is generic over the transport, so each transport type
//! compiled a copy of all of it. Behind [`AnyTransport`] the session is compiled once,
//! and each transport costs only its own three methods (docs/benchmarks.md, issue 40).

use futures_util::future::BoxFuture;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;

/// A transport's error with its type erased. Its `source` is the error itself, so code
/// that walks the chain (rmcp's check for a 401 and its `WWW-Authenticate` challenge)
/// finds the transport's own error one step further along.
#[derive(Debug)]
pub struct TransportError(Box<dyn std::error::Error + Send + Sync>);

impl TransportError {
    /// The transport's own error.
    pub fn inner(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        self.0.as_ref()
    }
}

impl std::fmt::Display for TransportError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.0.as_ref())
    }
}

/// The object-safe half of [`Transport`].
trait DynTransport: Send {
    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> BoxFuture<'static, Result<(), TransportError>>;
    fn receive(&mut self) -> BoxFuture<'_, Option<RxJsonRpcMessage<RoleClient>>>;
    fn close(&mut self) -> BoxFuture<'_, Result<(), TransportError>>;
}

impl<T: Transport<RoleClient> + 'static> DynTransport for T {
    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> BoxFuture<'static, Result<(), TransportError>> {
        let sent = Transport::send(self, item);
        Box::pin(async move { sent.await.map_err(|e| TransportError(Box::new(e))) })
    }

    fn receive(&mut self) -> BoxFuture<'_, Option<RxJsonRpcMessage<RoleClient>>> {
        Box::pin(Transport::receive(self))
    }

    fn close(&mut self) -> BoxFuture<'_, Result<(), TransportError>> {
        Box::pin(async move {
            Transport::close(self)
                .await
                .map_err(|e| TransportError(Box::new(e)))
        })
    }
}

/// Any client transport, boxed.
pub struct AnyTransport(Box<dyn DynTransport>);

impl AnyTransport {
    pub fn new(transport: impl Transport<RoleClient> + 'static) -> Self {
        Self(Box::new(transport))
    }
}

impl Transport<RoleClient> for AnyTransport {
    type Error = TransportError;

    fn name() -> std::borrow::Cow<'static, str> {
        "MCP".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.0.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.0.receive()
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.0.close()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Refused;

    impl std::fmt::Display for Refused {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("HTTP 401")
        }
    }

    impl std::error::Error for Refused {}

    #[test]
    fn the_transport_error_is_one_step_down_the_source_chain_and_reads_the_same() {
        let error = TransportError(Box::new(Refused));
        assert_eq!(error.to_string(), "HTTP 401");
        let mut found = false;
        let mut current: Option<&(dyn std::error::Error + 'static)> = Some(&error);
        while let Some(e) = current {
            found |= e.is::<Refused>();
            current = e.source();
        }
        assert!(
            found,
            "rmcp's 401 check walks the chain and must find the error"
        );
        assert!(error.inner().is::<Refused>());
    }
}
