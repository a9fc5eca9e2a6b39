//! A small MCP server for loki's tests, built with `rmcp`'s server side and spoken to over
//! stdio: read-only and writing tools, structured content, tool errors, a slow tool with
//! progress, one that reads its environment (secret injection), and one that crashes.
//! Its stderr lines show up in loki's log, not on the terminal.

#![allow(clippy::print_stderr)]

use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::model::{ProgressNotificationParam, RequestMetaObject};
use rmcp::{Peer, RoleServer, ServerHandler, ServiceExt, tool, tool_handler, tool_router};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EchoArgs {
    /// Text to send back.
    text: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct AddArgs {
    a: i64,
    b: i64,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: i64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct EnvArgs {
    /// Variable name.
    name: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct NoteArgs {
    /// Line to append to $MCP_TEST_NOTES.
    line: String,
}

#[derive(Clone)]
struct TestServer;

#[tool_router]
impl TestServer {
    #[tool(description = "Echo the text back", annotations(read_only_hint = true))]
    async fn echo(&self, Parameters(args): Parameters<EchoArgs>) -> String {
        format!("echo: {}", args.text)
    }

    #[tool(description = "Add two integers", annotations(read_only_hint = true))]
    async fn add(&self, Parameters(args): Parameters<AddArgs>) -> Json<Sum> {
        Json(Sum {
            sum: args.a + args.b,
        })
    }

    #[tool(description = "Append a line to the notes file (changes state)")]
    async fn note(&self, Parameters(args): Parameters<NoteArgs>) -> Result<String, String> {
        let path = std::env::var("MCP_TEST_NOTES").map_err(|_| "MCP_TEST_NOTES not set")?;
        let mut old = std::fs::read_to_string(&path).unwrap_or_default();
        old.push_str(&args.line);
        old.push('\n');
        std::fs::write(&path, old).map_err(|e| e.to_string())?;
        Ok("noted".into())
    }

    #[tool(description = "Always fails", annotations(read_only_hint = true))]
    async fn fail(&self) -> Result<String, String> {
        Err("boom: the tool failed on purpose".into())
    }

    #[tool(
        description = "Read an environment variable of the server",
        annotations(read_only_hint = true)
    )]
    async fn env_value(&self, Parameters(args): Parameters<EnvArgs>) -> String {
        std::env::var(&args.name).unwrap_or_else(|_| "(unset)".into())
    }

    #[tool(
        description = "Takes a while and reports progress",
        annotations(read_only_hint = true)
    )]
    async fn slow(&self, meta: RequestMetaObject, peer: Peer<RoleServer>) -> String {
        let token = meta.get_progress_token();
        for i in 0..3u32 {
            if let Some(token) = &token {
                let _ = peer
                    .notify_progress(
                        ProgressNotificationParam::new(token.clone(), f64::from(i))
                            .with_total(3.0)
                            .with_message("working"),
                    )
                    .await;
            }
            tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        }
        "slow done".into()
    }

    #[tool(
        description = "Exits the server process",
        annotations(read_only_hint = true)
    )]
    async fn crash(&self) -> String {
        std::process::exit(3)
    }
}

#[tool_handler(name = "loki-test-server", version = "1.0.0")]
impl ServerHandler for TestServer {}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    if std::env::args().any(|a| a == "--fail-to-start") {
        eprintln!("test server: refusing to start");
        std::process::exit(2);
    }
    eprintln!("test server: starting");
    TestServer
        .serve(rmcp::transport::stdio())
        .await?
        .waiting()
        .await?;
    Ok(())
}
