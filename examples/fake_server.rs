//! The test suite's fake OpenAI server as a standalone process, for `scripts/bench`.
//!
//! `fake_server stream <tokens>` answers every request with a streamed answer of
//! `<tokens>` one-word SSE events; `fake_server json <tokens>` with a non-streamed answer.
//! Prints the base URL on the first line of stdout, then serves until killed.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]

#[path = "../tests/common/fake_llm/mod.rs"]
mod fake_llm;

use std::io::Write;

fn main() {
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "stream".into());
    let tokens: usize = args.next().and_then(|n| n.parse().ok()).unwrap_or(16);
    let server = fake_llm::FakeLlm::start();
    let reply = match mode.as_str() {
        "json" => fake_llm::openai::text_json(&fake_llm::openai::long_stream_text(tokens)),
        _ => fake_llm::openai::long_stream(tokens),
    };
    server.set_default(reply);
    println!("{}", server.base_url());
    std::io::stdout().flush().unwrap();
    loop {
        std::thread::park();
    }
}
