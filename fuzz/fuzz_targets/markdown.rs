#![no_main]
//! Fuzz target: see `loki::fuzzing::markdown` for what it checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| loki::fuzzing::markdown(data));
