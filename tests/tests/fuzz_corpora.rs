//! The fuzz targets' committed corpora (`fuzz/corpus/<target>/`) and the
//! inputs of every crash found and fixed (`fuzz/regressions/<target>/`),
//! replayed through the same entry points as the cargo-fuzz targets in
//! `fuzz/fuzz_targets/`: stable Rust, no fuzzer needed. An input that
//! panics fails its target's test and names the file.

use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<PathBuf> {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    let mut out = Vec::new();
    for dir in ["corpus", "regressions"] {
        if let Ok(entries) = std::fs::read_dir(fuzz.join(dir).join(target)) {
            out.extend(entries.map(|e| e.expect("a corpus entry").path()));
        }
    }
    out.sort();
    out
}

fn replay(target: &str, run: fn(&[u8])) {
    let inputs = inputs(target);
    assert!(!inputs.is_empty(), "no committed corpus for `{target}`");
    for path in &inputs {
        let data = std::fs::read(path).expect("read a corpus entry");
        if std::panic::catch_unwind(|| run(&data)).is_err() {
            panic!("`{target}` panics on {}", path.display());
        }
    }
}

/// One test per fuzz target, named after it.
macro_rules! targets {
    ($($target:ident => $entry:path),* $(,)?) => {
        $(
            #[test]
            fn $target() {
                replay(stringify!($target), $entry);
            }
        )*
    };
}

targets! {
    engine_bytes => codegen_core::fuzz::engine_bytes,
    engine_structured => codegen_core::fuzz::engine_structured,
    markers => codegen_core::fuzz::markers,
    jsonpath => codegen_core::fuzz::jsonpath,
    import_crd => codegen_core::fuzz::import_crd,
    label_selector => codegen_runtime::fuzz::label_selector,
    field_selector => codegen_runtime::fuzz::field_selector,
    fake_server => codegen_runtime::fuzz::fake_server,
    workqueue => codegen_runtime::fuzz::workqueue,
    informer_item => codegen_runtime::fuzz::informer_item,
    indexer => codegen_runtime::fuzz::indexer,
}
