//! The output limit a model's requests carry when the user set none.
//!
//! A remote API stops an answer at its own limit; a local server (llama.cpp's
//! `llama-server`, Ollama, LM Studio, vLLM) has none unless asked, so a model that does
//! not stop generates until its context is full — minutes of tokens nobody reads. Local
//! models therefore always send a limit:
//! * the model's `max_output_tokens`, else the client's `max_output_tokens`, else
//!   [`local_default`] (4096, or half the context window when that is smaller);
//! * `max_output_tokens: 0` on the model or the client means no limit at all.
//!
//! For other clients nothing changes: a client's `max_output_tokens` only fills in the
//! models that set none, and is sent only with `require_max_tokens` (as before).
//!
//! Which clients are local is decided by the registry (the client type, or an `api_base`
//! on this machine); this module only applies the rule to one model's metadata.

use crate::config::clients::ModelConfig;

/// The output limit of a local model when nothing else sets one.
pub const DEFAULT_LOCAL_MAX_OUTPUT_TOKENS: u64 = 4096;

/// The default limit of a local model with `context_window` tokens (when known): at most
/// half the window, so a long answer still leaves room for the prompt.
pub fn local_default(context_window: Option<u64>) -> u64 {
    match context_window {
        Some(window) if window > 0 => (window / 2).clamp(1, DEFAULT_LOCAL_MAX_OUTPUT_TOKENS),
        _ => DEFAULT_LOCAL_MAX_OUTPUT_TOKENS,
    }
}

/// Applies the rule in the module docs to one model of a client: `client_cap` is the
/// client's `max_output_tokens`, `local` whether the client runs on this machine.
pub fn apply(model: &mut ModelConfig, client_cap: Option<u64>, local: bool) {
    let configured = model.max_output_tokens.or(client_cap);
    if configured == Some(0) {
        // An explicit "no limit".
        model.max_output_tokens = None;
        model.require_max_tokens = false;
        return;
    }
    if local {
        model.max_output_tokens =
            Some(configured.unwrap_or_else(|| local_default(model.max_input_tokens)));
        model.require_max_tokens = true;
    } else {
        model.max_output_tokens = configured;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(max_output: Option<u64>, context: Option<u64>) -> ModelConfig {
        ModelConfig {
            name: "m".into(),
            max_output_tokens: max_output,
            max_input_tokens: context,
            ..ModelConfig::default()
        }
    }

    #[test]
    fn local_models_always_send_a_limit() {
        // (model cap, client cap, context window) -> (sent, require)
        let cases = [
            ((None, None, None), (Some(4096), true)),
            ((None, None, Some(8192)), (Some(4096), true)),
            ((None, None, Some(2048)), (Some(1024), true)),
            ((None, None, Some(100)), (Some(50), true)),
            ((None, Some(1000), None), (Some(1000), true)),
            ((Some(500), Some(1000), None), (Some(500), true)),
            ((Some(0), Some(1000), None), (None, false)),
            ((None, Some(0), None), (None, false)),
        ];
        for ((own, client, context), want) in cases {
            let mut m = model(own, context);
            apply(&mut m, client, true);
            assert_eq!(
                (m.max_output_tokens, m.require_max_tokens),
                want,
                "{own:?} {client:?} {context:?}"
            );
        }
    }

    #[test]
    fn remote_models_only_inherit_the_client_value() {
        let mut m = model(None, None);
        apply(&mut m, Some(1000), false);
        assert_eq!(
            (m.max_output_tokens, m.require_max_tokens),
            (Some(1000), false)
        );
        let mut m = model(Some(8192), None);
        apply(&mut m, None, false);
        assert_eq!(
            (m.max_output_tokens, m.require_max_tokens),
            (Some(8192), false)
        );
    }
}
