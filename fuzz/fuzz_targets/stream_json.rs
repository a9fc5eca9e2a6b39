#![no_main]
//! Fuzz target: see `loki::fuzzing::stream_json` for what it checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| loki::fuzzing::stream_json(data));
