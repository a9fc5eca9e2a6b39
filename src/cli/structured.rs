//! `--output-schema FILE`: a one-shot run whose final answer must be JSON matching a
//! schema (as `codex exec --output-schema`). The schema goes to the provider as its
//! structured output (`response_format` json_schema, Gemini's `responseSchema`; providers
//! without one get it as an instruction); the answer is then checked here
//! ([`crate::output_schema`]), because not every model honours it. An answer that does
//! not match gets one repair round — the mismatch is sent back and the model asked
//! again — and a second mismatch ends the run with exit 1 and the mismatch on one line.
//! Only the matching JSON is printed, so the output can be piped to a program.

use std::io::Write;
use std::path::Path;

use serde_json::Value;

use crate::client::AnswerFormat;
use crate::conversation::Conversation;
use crate::error::CoreError;
use loki_protocol::emitter::Discard;
use loki_protocol::op::{RunOptions, UserInput};

/// The schema of `--output-schema`, read once before the run.
pub(super) struct OutputSchema {
    /// The file, as named on the command line.
    file: String,
    /// The schema.
    schema: Value,
}

impl OutputSchema {
    /// Reads the schema file.
    pub(super) fn load(path: &Path) -> Result<Self, crate::output_schema::SchemaError> {
        Ok(Self {
            file: path.display().to_string(),
            schema: crate::output_schema::load(path)?,
        })
    }

    /// The answer format that asks the provider for JSON matching the schema. Not
    /// strict: OpenAI's strict mode refuses schemas that leave properties optional.
    pub(super) fn format(&self) -> AnswerFormat {
        AnswerFormat::JsonSchema {
            name: "output".into(),
            schema: self.schema.clone(),
            strict: false,
        }
    }
}

/// Asks `input`, then once more with the mismatch if the answer does not match; prints
/// the matching JSON on stdout.
pub(super) async fn ask(
    conversation: &mut Conversation,
    schema: &OutputSchema,
    input: UserInput,
    options: RunOptions,
) -> Result<(), CoreError> {
    let first = conversation.prompt(input, options, None, &Discard).await?;
    let mismatch = match crate::output_schema::check_answer(&schema.schema, &first.text) {
        Ok(value) => return print(&value),
        Err(mismatch) => mismatch,
    };
    tracing::info!("the answer does not match {}: {mismatch}", schema.file);
    let repair = UserInput {
        text: crate::output_schema::repair_prompt(&mismatch),
        ..UserInput::default()
    };
    let second = conversation.prompt(repair, options, None, &Discard).await?;
    match crate::output_schema::check_answer(&schema.schema, &second.text) {
        Ok(value) => print(&value),
        Err(mismatch) => Err(CoreError::InvalidRequest(
            format!(
                "the answer does not match the output schema {}: {mismatch}",
                schema.file
            )
            .replace(['\n', '\r'], " "),
        )),
    }
}

/// Writes the JSON on one line to stdout.
fn print(value: &Value) -> Result<(), CoreError> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{value}")
        .and_then(|()| out.flush())
        .map_err(|e| CoreError::Io {
            action: "write",
            path: "stdout".into(),
            message: e.to_string(),
        })
}
