#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| codegen_core::fuzz::engine_bytes(data));
