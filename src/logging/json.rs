//! One JSON object per log line (`api.log_format: json`, or `LOKI_LOG_FORMAT=json`):
//! `timestamp`, `level`, `target`, `message` and the record's fields (`request_id`,
//! `subject`, `status`, …) as top-level keys, for log collectors.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value};
use tracing::field::{Field, Visit};
use tracing_subscriber::fmt::format::{Format, Writer};
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// Whether records are written as JSON.
static JSON: AtomicBool = AtomicBool::new(false);

/// Writes the log as JSON lines from now on.
pub fn switch_on() {
    JSON.store(true, Ordering::Relaxed);
}

/// The plain format, or JSON lines once [`switch_on`] was called.
pub(super) struct Either(pub(super) Format);

impl<S, N> FormatEvent<S, N> for Either
where
    S: tracing::Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> fmt::Result {
        if !JSON.load(Ordering::Relaxed) {
            return self.0.format_event(ctx, writer, event);
        }
        let meta = event.metadata();
        let mut fields = Fields(Map::new());
        fields.0.insert(
            "timestamp".into(),
            Value::String(crate::role::httpdate_rfc3339(std::time::SystemTime::now())),
        );
        fields
            .0
            .insert("level".into(), Value::String(meta.level().as_str().into()));
        fields
            .0
            .insert("target".into(), Value::String(meta.target().into()));
        event.record(&mut fields);
        writeln!(writer, "{}", Value::Object(fields.0))
    }
}

/// A record's fields as JSON values.
struct Fields(Map<String, Value>);

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0
            .insert(field.name().into(), Value::String(value.into()));
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), Value::from(value));
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), Value::from(value));
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), Value::Bool(value));
    }

    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.0
            .insert(field.name().into(), Value::String(format!("{value:?}")));
    }
}
