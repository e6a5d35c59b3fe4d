//! Every fixture's generated code compiles under `#![deny(warnings)]`: the
//! fixtures are generated into one throw-away crate (typify's
//! `tests/schemas.rs` pattern) that depends on the runtime and the markers,
//! and is built with cargo in its own target directory.

mod common;

use std::path::Path;
use std::process::Command;

#[test]
fn generated_code_compiles_without_warnings() {
    let ws = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    // Under cargo's target directory (CI keeps it between runs), so the
    // throw-away crate's dependencies are compiled once.
    let target =
        std::env::var_os("CARGO_TARGET_DIR").map(std::path::PathBuf::from).unwrap_or_else(|| ws.join("target"));
    let root = target.join("codegen-compile-tests");
    let krate = root.join("fixtures");
    let src = krate.join("src");
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
    let ws_str = ws.to_string_lossy().replace('\\', "/");
    std::fs::write(
        krate.join("Cargo.toml"),
        format!(
            r#"[package]
name = "codegen-fixtures"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
codegen-runtime = {{ path = "{ws_str}/runtime" }}
codegen-macros = {{ path = "{ws_str}/codegen-macros" }}
kube = {{ version = "5", default-features = false, features = ["client", "rustls-tls", "ring", "runtime", "jsonpatch"] }}
k8s-openapi = {{ version = "0.29", default-features = false, features = ["std", "v1_37"] }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"
"#
        ),
    )
    .unwrap();
    std::fs::copy(ws.join("Cargo.lock"), krate.join("Cargo.lock")).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["build", "--offline", "--manifest-path"])
        .arg(krate.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", root.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    assert!(out.status.success(), "fixture crate does not compile:\n{}", String::from_utf8_lossy(&out.stderr));
}
