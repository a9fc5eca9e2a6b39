//! The test suite's fake provider server as a standalone process, for `scripts/bench` and
//! `scripts/link-layout`.
//!
//! `fake_server MODE <tokens>` answers every request with:
//! - `stream`: a streamed OpenAI answer of `<tokens>` one-word SSE events;
//! - `json`: the same answer, not streamed;
//! - `code`: a streamed OpenAI answer holding Markdown and a fenced Rust block;
//! - `claude` / `gemini`: a short streamed answer in Anthropic's / Gemini's wire format.
//!
//! Prints the base URL (`http://127.0.0.1:PORT/v1`) on the first line of stdout, then
//! serves until killed.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/fake_llm/mod.rs"]
mod fake_llm;

use std::io::Write;

const CODE_ANSWER: &[&str] = &[
    "Here is a *small* example:\n\n",
    "```rust\nfn main() {\n    let words = [\"a\", \"b\"];\n",
    "    for w in words.iter() {\n        println!(\"{w}\");\n    }\n}\n```\n\n",
    "| key | value |\n|---|---|\n| a | 1 |\n\n",
    "1. first\n2. **second** with `code`\n\n> quoted\n",
];

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "stream".into());
    let tokens: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(16);
    let server = fake_llm::FakeLlm::start();
    let text = fake_llm::openai::long_stream_text(tokens);
    let words: Vec<String> = (0..tokens)
        .map(fake_llm::openai::long_stream_token)
        .collect();
    let parts: Vec<&str> = words.iter().map(String::as_str).collect();
    let reply = match mode.as_str() {
        "json" => fake_llm::openai::text_json(&text),
        "code" => fake_llm::openai::text_stream(CODE_ANSWER),
        "claude" => fake_llm::anthropic::text_stream(&parts),
        "gemini" => fake_llm::gemini::text_stream(&parts),
        _ => fake_llm::openai::long_stream(tokens),
    };
    server.set_default(reply);
    println!("{}", server.base_url());
    std::io::stdout().flush().unwrap();
    loop {
        std::thread::park();
    }
}
