#![no_main]
//! Fuzz target: see `loki::fuzzing::event_stream` for what it checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| loki::fuzzing::event_stream(data));
