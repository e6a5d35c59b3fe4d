#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| codegen_core::fuzz::import_crd(data));
