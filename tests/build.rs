//! Generates every fixture package of codegen-core (the CLI's pipeline, as
//! `kube-codegen all` writes it) into `OUT_DIR`, so the end-to-end tests
//! drive the generated clientsets, informers, listers and apply
//! configurations — kinds embedding Kubernetes' own types among them —
//! against the real API server.

use std::path::{Path, PathBuf};

use codegen_core::{GroupVersions, Mode, Settings};

/// Every fixture package of codegen-core, as the CLI generates it.
const FIXTURES: &[(&str, &[&str])] = include!("../codegen-core/tests/fixtures/index.rs");

/// Fixtures of the tests crate only: `validation` (one of each marker the
/// generated `validate()` checks) for tests/tests/e2e_validation.rs;
/// `conversion` (a Task in v1 and v2 with a conversion webhook) for
/// tests/tests/e2e_webhooks.rs.
const OWN_FIXTURES: &[(&str, &[&str])] = &[("validation", &["lab:v1"]), ("conversion", &["batch:v1,v2"])];

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("creating a fixture directory");
    for entry in std::fs::read_dir(from).expect("reading a fixture directory") {
        let entry = entry.expect("a directory entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("a file type").is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copying a fixture file");
        }
    }
}

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let fixtures = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../codegen-core/tests/fixtures");
    println!("cargo:rerun-if-changed={}", fixtures.display());
    let mut modules = String::new();
    // codegen-core's fixtures, and the tests crate's own (tests/fixtures/).
    let own = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let all = FIXTURES
        .iter()
        .map(|(n, g)| (fixtures.join(n), *n, *g))
        .chain(OWN_FIXTURES.iter().map(|(n, g)| (own.join(n), *n, *g)));
    for (src, name, groups) in all {
        println!("cargo:rerun-if-changed={}", src.display());
        let base = out.join("fixtures").join(name);
        let _ = std::fs::remove_dir_all(&base);
        copy_dir(&src, &base);
        let settings = Settings::new(base.join("apis"))
            .with_output_dir(base.join("client"))
            .with_crd_dir(base.join("crd"))
            .with_apis_module(format!("crate::{name}::apis"));
        let settings =
            groups.iter().fold(settings, |s, g| s.with_group(GroupVersions::parse(g).expect("group:versions")));
        if let Err(diags) = codegen_core::run(&settings, Mode::Write) {
            panic!("{name}: {}", codegen_core::diag::render_all(&diags));
        }
        modules.push_str(&format!(
            "/// The `{name}` fixture: its API types, generated clients and CRDs.\npub mod {name} {{\n    #[path = {:?}]\n    pub mod apis;\n    #[path = {:?}]\n    pub mod client;\n    /// The generated CRD directory.\n    pub const CRD_DIR: &str = {:?};\n}}\n",
            base.join("apis/mod.rs").display().to_string(),
            base.join("client/mod.rs").display().to_string(),
            base.join("crd").display().to_string(),
        ));
    }
    std::fs::write(out.join("fixtures.rs"), modules).expect("writing fixtures.rs");
}
