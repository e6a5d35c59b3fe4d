//! A throw-away crate that depends on the workspace's runtime and macros
//! (typify's `tests/schemas.rs` pattern), built with cargo in a target
//! directory under cargo's own (CI keeps it between runs, so its
//! dependencies compile once). Shared by the compile tests of
//! codegen-core, codegen-macros and the tests crate through `#[path]`.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A scratch crate `name` in `<target>/codegen-compile-tests/<name>`.
pub struct ScratchCrate {
    /// `<target>/codegen-compile-tests`: the crates and their target dir.
    pub root: PathBuf,
    /// The crate's directory.
    pub dir: PathBuf,
    workspace: PathBuf,
    name: String,
}

impl ScratchCrate {
    /// The crate's place; nothing is written yet.
    pub fn new(workspace: &Path, name: &str) -> Self {
        let target =
            std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| workspace.join("target"));
        let root = target.join("codegen-compile-tests");
        Self { dir: root.join(name), root, workspace: workspace.to_path_buf(), name: name.to_string() }
    }

    /// Writes `Cargo.toml` (runtime, macros, kube, k8s-openapi, serde,
    /// serde_json, plus `extra_dependencies` lines) and the workspace's
    /// `Cargo.lock`, so that it builds offline with the same versions.
    pub fn write_manifest(&self, extra_dependencies: &str) {
        let ws = self.workspace.to_string_lossy().replace('\\', "/");
        let name = &self.name;
        std::fs::create_dir_all(&self.dir).unwrap();
        std::fs::write(
            self.dir.join("Cargo.toml"),
            format!(
                r#"[package]
name = "{name}"
version = "0.0.0"
edition = "2024"
publish = false

[workspace]

[dependencies]
codegen-runtime = {{ path = "{ws}/runtime" }}
codegen-macros = {{ path = "{ws}/codegen-macros" }}
kube = {{ version = "5", default-features = false, features = ["client", "rustls-tls", "ring", "runtime", "jsonpatch"] }}
k8s-openapi = {{ version = "0.29", default-features = false, features = ["std", "v1_37"] }}
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"
{extra_dependencies}"#
            ),
        )
        .unwrap();
        std::fs::copy(self.workspace.join("Cargo.lock"), self.dir.join("Cargo.lock")).unwrap();
    }

    /// `cargo <subcommand> --offline --manifest-path .. [args]` on the crate.
    pub fn cargo(&self, subcommand: &str, args: &[&str]) -> Output {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        Command::new(cargo)
            .args([subcommand, "--offline"])
            .arg("--manifest-path")
            .arg(self.dir.join("Cargo.toml"))
            // After the manifest: `args` may end in `-- <rustc flags>`.
            .args(args)
            .env("CARGO_TARGET_DIR", self.root.join("target"))
            // No debug info: the scratch target stays a few GB, not twenty.
            .env("CARGO_PROFILE_DEV_DEBUG", "false")
            .env_remove("RUSTFLAGS")
            .output()
            .unwrap()
    }
}
