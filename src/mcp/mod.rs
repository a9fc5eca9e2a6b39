//! MCP client: servers from `functions/mcp.json` (stdio, streamable HTTP and legacy SSE),
//! shared per process by [`McpFactory`], their tools offered to the model directly or
//! through search/describe/invoke meta functions, and called through the same approval
//! as every other tool.

pub mod carried;
pub mod client_side;
pub mod config;
pub mod erased;
pub mod error;
pub mod factory;
pub mod headers;
pub mod http;
pub mod oauth;
pub mod server;
pub mod sse;
pub mod stdio;

pub use error::McpError;
pub use factory::{McpFactory, McpLease};
