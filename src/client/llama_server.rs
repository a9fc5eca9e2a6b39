//! A llama.cpp server that loki runs itself (`type: llama-server`): given a GGUF file,
//! the server is started on first use (`--model`, `--port`, `--ctx-size`,
//! `--n-gpu-layers`, extra `server_args`), polled on `/health` until it has loaded the
//! model, reused for every later request, and killed with its process group when loki
//! exits (or the client is rebuilt). Requests then go through the OpenAI wire format.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, Command};
use tokio::sync::Mutex;

use super::api_client::Credentials;
use super::api_client::HttpProvider;
use super::http::HttpSettings;
use super::openai::{OpenAi, OpenAiSetup};
use super::{ChatRequest, Model, Provider, ProviderError, ProviderStream, RetryPolicy};

/// How long the server may take to load its model.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(300);
/// Delay between health polls.
const POLL_EVERY: Duration = Duration::from_millis(100);

/// How to start the server.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// Client name.
    pub name: String,
    /// The `llama-server` executable.
    pub binary: PathBuf,
    /// GGUF model file.
    pub model_path: Option<PathBuf>,
    /// Fixed port, or `None` for a free one.
    pub port: Option<u16>,
    /// `--ctx-size`.
    pub context_size: Option<u64>,
    /// `--n-gpu-layers`.
    pub gpu_layers: Option<i64>,
    /// Anything else to pass.
    pub extra_args: Vec<String>,
    /// Transport settings for the requests.
    pub settings: HttpSettings,
}

struct Running {
    child: Child,
    provider: Arc<HttpProvider<OpenAi>>,
}

/// A provider backed by a server process loki manages.
pub struct LlamaServerProvider {
    spec: ServerSpec,
    running: Mutex<Option<Running>>,
}

impl std::fmt::Debug for LlamaServerProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LlamaServerProvider")
            .field("spec", &self.spec)
            .finish_non_exhaustive()
    }
}

impl LlamaServerProvider {
    /// A provider that starts nothing until the first request.
    pub fn new(spec: ServerSpec) -> Self {
        Self {
            spec,
            running: Mutex::new(None),
        }
    }

    fn setup_error(&self, message: String) -> ProviderError {
        ProviderError::Setup {
            client: self.spec.name.clone(),
            message,
        }
    }

    /// The provider of the running server, starting it when needed (and again when it has
    /// exited since the last request).
    async fn server(&self) -> Result<Arc<HttpProvider<OpenAi>>, ProviderError> {
        let mut running = self.running.lock().await;
        if let Some(r) = running.as_mut() {
            match r.child.try_wait() {
                Ok(None) => return Ok(Arc::clone(&r.provider)),
                Ok(Some(status)) => {
                    tracing::warn!(client = %self.spec.name, "llama-server exited ({status}); restarting");
                }
                Err(e) => tracing::warn!(client = %self.spec.name, "llama-server state: {e}"),
            }
        }
        let started = self.start().await?;
        let provider = Arc::clone(&started.provider);
        *running = Some(started);
        Ok(provider)
    }

    async fn start(&self) -> Result<Running, ProviderError> {
        let spec = &self.spec;
        let model = spec.model_path.as_ref().ok_or_else(|| {
            self.setup_error("set `model_path:` to a GGUF file for this client".into())
        })?;
        if !model.is_file() {
            return Err(self.setup_error(format!("model file {} does not exist", model.display())));
        }
        let port = match spec.port {
            Some(p) => p,
            None => free_port().map_err(|e| self.setup_error(format!("no free port: {e}")))?,
        };
        let mut child = self.command(model, port).spawn().map_err(|e| {
            self.setup_error(format!(
                "cannot start {}: {e} — set `server_path:` to the llama-server executable",
                spec.binary.display()
            ))
        })?;
        tracing::info!(client = %spec.name, port, pid = ?child.id(), "started llama-server");
        let tail = StderrTail::collect(&mut child);
        let base = format!("http://127.0.0.1:{port}");
        self.wait_healthy(&mut child, &base, port, &tail).await?;
        let provider = OpenAi::provider(OpenAiSetup {
            api_base: format!("{base}/v1"),
            credentials: Credentials::default(),
            organization: None,
            official: false,
            stream_usage: true,
            azure_api_version: None,
            settings: spec.settings.clone(),
        });
        Ok(Running {
            child,
            provider: Arc::new(provider),
        })
    }

    /// The server's command line, in its own process group, killed with loki.
    fn command(&self, model: &std::path::Path, port: u16) -> Command {
        let spec = &self.spec;
        let mut command = Command::new(&spec.binary);
        command.arg("--model").arg(model).args([
            "--host",
            "127.0.0.1",
            "--port",
            &port.to_string(),
        ]);
        if let Some(ctx) = spec.context_size {
            command.args(["--ctx-size", &ctx.to_string()]);
        }
        if let Some(layers) = spec.gpu_layers {
            command.args(["--n-gpu-layers", &layers.to_string()]);
        }
        command
            .args(&spec.extra_args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        #[cfg(target_os = "linux")]
        die_with_parent(&mut command);
        command
    }

    /// Polls `/health` until the server has loaded its model; fails when it exits first
    /// (quoting its last stderr line) or takes longer than [`STARTUP_TIMEOUT`].
    async fn wait_healthy(
        &self,
        child: &mut Child,
        base: &str,
        port: u16,
        tail: &StderrTail,
    ) -> Result<(), ProviderError> {
        super::http::install_crypto_provider();
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(2))
            .tls_certs_only([])
            .no_proxy()
            .build()
            .map_err(|e| self.setup_error(e.to_string()))?;
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                // Give the stderr reader a moment to collect the reason.
                tokio::time::sleep(Duration::from_millis(50)).await;
                return Err(self.setup_error(format!(
                    "llama-server exited during startup ({status}){}",
                    tail.last_line()
                )));
            }
            if let Ok(response) = http.get(format!("{base}/health")).send().await
                && response.status().is_success()
            {
                // A server left over on a fixed port answers too; ours must be alive.
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(self.setup_error(format!(
                        "llama-server exited during startup ({status}){} — is port {port} already in use?",
                        tail.last_line()
                    )));
                }
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(self.setup_error(format!(
                    "llama-server did not become healthy within {}s{}",
                    STARTUP_TIMEOUT.as_secs(),
                    tail.last_line()
                )));
            }
            tokio::time::sleep(POLL_EVERY).await;
        }
    }
}

/// The last 8 KiB the server wrote to stderr, kept to explain a failed start.
struct StderrTail(Arc<std::sync::Mutex<Vec<u8>>>);

impl StderrTail {
    /// Most bytes kept.
    const KEEP: usize = 8192;

    /// Starts reading the child's stderr in a task.
    fn collect(child: &mut Child) -> Self {
        let tail = Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        if let Some(mut stderr) = child.stderr.take() {
            let tail = Arc::clone(&tail);
            tokio::spawn(async move {
                let mut buf = [0u8; 4096];
                while let Ok(n) = stderr.read(&mut buf).await {
                    if n == 0 {
                        break;
                    }
                    if let Ok(mut t) = tail.lock() {
                        t.extend_from_slice(&buf[..n]);
                        let excess = t.len().saturating_sub(Self::KEEP);
                        t.drain(..excess);
                    }
                }
            });
        }
        Self(tail)
    }

    /// `": <last non-blank line>"`, or nothing when the server wrote nothing.
    fn last_line(&self) -> String {
        let text = self
            .0
            .lock()
            .map(|t| String::from_utf8_lossy(&t).into_owned())
            .unwrap_or_default();
        let last = text.lines().rev().find(|l| !l.trim().is_empty());
        last.map(|l| format!(": {}", l.trim())).unwrap_or_default()
    }
}

impl Drop for LlamaServerProvider {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(pid) = self.running.get_mut().as_ref().and_then(|r| r.child.id()) {
            // The whole group: llama-server may have helpers of its own.
            let _ = std::process::Command::new("kill")
                .args(["-s", "TERM", "--", &format!("-{pid}")])
                .stderr(std::process::Stdio::null())
                .status();
        }
    }
}

/// Asks Linux to kill the server when loki dies, however it dies (its own process group
/// keeps it out of the terminal's Ctrl-C, so nothing else would).
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn die_with_parent(command: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and only calls prctl, which
    // is async-signal-safe; it touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

fn free_port() -> std::io::Result<u16> {
    let listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    Ok(listener.local_addr()?.port())
}

impl Provider for LlamaServerProvider {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn retry_policy(&self) -> RetryPolicy {
        self.spec.settings.retry
    }

    fn chat<'a>(
        &'a self,
        model: &'a Model,
        request: &'a ChatRequest,
    ) -> BoxFuture<'a, Result<ProviderStream, ProviderError>> {
        async move {
            let provider = self.server().await?;
            provider.chat(model, request).await
        }
        .boxed()
    }
}
