//! The single integration-test binary: every suite runs the real `loki` binary against
//! the fake provider in `common::fake_llm`. Nothing here touches the internet.
//!
//! Test code may panic and print: the restriction lints are for the product.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr
)]

mod common;
mod suite;
