#![no_main]
//! Fuzz target: see `loki::fuzzing::sanitizer` for what it checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| loki::fuzzing::sanitizer(data));
