#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| codegen_runtime::fuzz::indexer(data));
