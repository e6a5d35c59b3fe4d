//! Every fixture's generated code compiles under `#![deny(warnings)]`: the
//! fixtures are generated into one throw-away crate (typify's
//! `tests/schemas.rs` pattern) that depends on the runtime and the markers,
//! and is built with cargo in its own target directory.

mod common;
#[path = "../../tests/support/scratch_crate.rs"]
mod scratch_crate;

use std::path::Path;

use scratch_crate::ScratchCrate;

#[test]
fn generated_code_compiles_without_warnings() {
    let ws = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let krate = ScratchCrate::new(ws, "codegen-fixtures");
    let src = krate.dir.join("src");
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src).unwrap();
    let mut lib = String::from(
        "//! Generated fixtures, compiled by codegen-core's compile test.\n#![deny(warnings)]\n#![allow(missing_docs)]\n",
    );
    for (name, groups) in common::FIXTURES {
        common::generate(&src, name, groups);
        lib.push_str(&format!("pub mod {name} {{\n    pub mod apis;\n    pub mod client;\n}}\n"));
    }
    std::fs::write(src.join("lib.rs"), lib).unwrap();
    krate.write_manifest("");
    let out = krate.cargo("build", &[]);
    assert!(out.status.success(), "fixture crate does not compile:\n{}", String::from_utf8_lossy(&out.stderr));
}
