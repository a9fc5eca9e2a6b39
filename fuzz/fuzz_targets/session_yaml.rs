#![no_main]
//! Fuzz target: see `loki::fuzzing::session_yaml` for what it checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| loki::fuzzing::session_yaml(data));
