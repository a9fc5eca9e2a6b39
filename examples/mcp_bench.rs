//! Measures a warm MCP tool call through loki's client (`McpServer::call`) against the
//! test server (`examples/mcp_server.rs`, path as the first argument): starts it via
//! `McpFactory`, then times `echo` calls. Prints `start_ms call_median_us call_p90_us`.

#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

use std::time::{Duration, Instant};

use loki::config::Env;
use loki::mcp::McpFactory;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let server = std::env::args().nth(1).expect("path of mcp_server");
    let json = serde_json::json!({"mcpServers": {"bench": {"type": "stdio", "command": server}}});
    let factory = McpFactory::new(
        Some(&json.to_string()),
        &Env::default(),
        loki::config::McpPoolConfig::default(),
    );
    let names = vec!["bench".to_string()];
    let started = Instant::now();
    let (_lease, warnings) = factory.acquire(&names).await;
    assert!(warnings.is_empty(), "{warnings:?}");
    let start_ms = started.elapsed().as_secs_f64() * 1000.0;
    let server = factory.running(&names).pop().expect("running");
    let cancel = tokio_util::sync::CancellationToken::new();
    let mut args = serde_json::Map::new();
    args.insert("text".into(), "hello".into());
    let mut times = Vec::new();
    for i in 0..300 {
        let t = Instant::now();
        let out = server
            .call(
                "echo",
                args.clone(),
                Duration::from_secs(10),
                &cancel,
                None,
                &loki::mcp::client_side::Declining,
            )
            .await
            .expect("call");
        if i >= 20 {
            times.push(t.elapsed().as_secs_f64() * 1e6);
        }
        assert_eq!(out.0, "echo: hello");
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let p90 = times[times.len() * 9 / 10];
    println!("{start_ms:.1} {median:.0} {p90:.0}");
}
