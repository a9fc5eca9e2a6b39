//! File logging with `tracing`. The log file is opened on the first record, so a run that
//! logs nothing touches no file. Level from `LOKI_LOG_LEVEL` (`off` disables; default
//! `info`). Request bodies are logged at `debug`, with tool output replaced by its size
//! (see [`crate::client::loggable`]); headers (which carry keys) never are. Every record
//! passes through [`loki_wire::secrets::redact`] on its way to the file, so a key or token loki
//! knows never reaches the log, whatever the record quotes.

pub mod json;
pub mod tail;

use std::fs::File;
use std::io::Write;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::config::Env;

/// Set by [`pause`]: records are dropped.
static PAUSED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes nothing more to the log file (off the record, `.otr`).
pub fn pause() {
    PAUSED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Installs the global subscriber. Errors are ignored: logging is best effort.
pub fn init(env: &Env, path: PathBuf) {
    let level = env
        .get("LOKI_LOG_LEVEL")
        .unwrap_or("info")
        .to_ascii_lowercase();
    if level == "off" {
        return;
    }
    // rmcp's OAuth module logs authorization codes at debug: it stays at info whatever
    // the filter asks for.
    let filter = match env.get("LOKI_LOG_FILTER") {
        Some(target) => format!("{target}={level},rmcp::transport::auth=info"),
        None => format!("loki={level}"),
    };
    // A target and a level are all a filter here ever holds, so the plain target filter
    // does (EnvFilter's span and field matching would only add code to every run).
    let Ok(filter) = filter.parse::<Targets>() else {
        return;
    };
    crate::config::paths::set_active_log(path.clone());
    let writer = LazyFile {
        path: Arc::new(path),
        file: Arc::new(OnceLock::new()),
    };
    if env
        .get("LOKI_LOG_FORMAT")
        .is_some_and(|f| f.eq_ignore_ascii_case("json"))
    {
        json::switch_on();
    }
    let plain = tracing_subscriber::fmt::format().with_ansi(false);
    let layer = tracing_subscriber::fmt::layer()
        .with_ansi(false)
        .event_format(json::Either(plain))
        .with_writer(writer)
        .with_filter(filter);
    let _ = tracing_subscriber::registry().with(layer).try_init();
}

/// Opens the log file on first write.
#[derive(Clone)]
struct LazyFile {
    path: Arc<PathBuf>,
    file: Arc<OnceLock<Option<Mutex<File>>>>,
}

struct LogWriter<'a>(Option<&'a Mutex<File>>);

impl Write for LogWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // tracing-subscriber formats a whole record and hands it over in one call, so a
        // secret is never split across two writes.
        match self.0.and_then(|m| m.lock().ok()) {
            Some(mut f) => {
                let text = String::from_utf8_lossy(buf);
                f.write_all(loki_wire::secrets::redact(&text).as_bytes())?;
                Ok(buf.len())
            }
            None => Ok(buf.len()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for LazyFile {
    type Writer = LogWriter<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        if PAUSED.load(std::sync::atomic::Ordering::Relaxed) {
            return LogWriter(None);
        }
        let file = self.file.get_or_init(|| {
            if let Some(dir) = self.path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            let mut options = std::fs::OpenOptions::new();
            options.create(true).append(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.mode(0o600);
            }
            options.open(self.path.as_ref()).ok().map(Mutex::new)
        });
        LogWriter(file.as_ref())
    }
}
