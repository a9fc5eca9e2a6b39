#![no_main]
//! Fuzz target: see `loki::fuzzing::script_annotations` for what it checks.

libfuzzer_sys::fuzz_target!(|data: &[u8]| loki::fuzzing::script_annotations(data));
