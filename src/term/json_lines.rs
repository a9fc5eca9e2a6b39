//! One JSON message per line on stdout, written by a task of its own, for drivers that
//! speak a protocol on stdio (`--acp`, the Claude Agent SDK's stream-json): any task
//! sends a message without waiting, and messages never interleave.

use tokio::io::AsyncWriteExt;
use tokio::sync::mpsc;

/// Sends lines to the writer task; cloneable.
#[derive(Clone, Debug)]
pub struct LineSender(mpsc::UnboundedSender<String>);

impl LineSender {
    /// Queues `message` as one line.
    pub fn send(&self, message: &serde_json::Value) {
        let _ = self.0.send(message.to_string());
    }
}

/// Starts the writer; it ends once every sender is dropped and what they sent is out
/// (or stdout is gone).
pub fn stdout_writer() -> (LineSender, tokio::task::JoinHandle<()>) {
    let (tx, mut lines) = mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut stdout = tokio::io::stdout();
        while let Some(line) = lines.recv().await {
            let written = async {
                stdout.write_all(line.as_bytes()).await?;
                stdout.write_all(b"\n").await?;
                stdout.flush().await
            };
            if written.await.is_err() {
                break;
            }
        }
    });
    (LineSender(tx), writer)
}
