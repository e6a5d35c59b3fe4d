//! `kube-codegen import` on CRDs it did not write: controller-gen's CRDs of
//! the fixtures' Go twins (`tests/controller-gen/<fixture>/`) go through
//! import and the `crd` generator and must come back the same, except the
//! differences listed (source `controller-gen`) in
//! `codegen-core/tests/import_differences.toml`. The imported types also
//! compile with `#![deny(warnings)]`.
//!
//! controller-gen is installed by `testenv/build.sh` (cached outside the
//! clone), as for `controller_gen_parity.rs`.

#[path = "../support/crd_diff.rs"]
mod crd_diff;
#[path = "../support/import_round_trip.rs"]
mod import_round_trip;
#[path = "../support/scratch_crate.rs"]
mod scratch_crate;

use std::path::{Path, PathBuf};

use codegen_core::GeneratorKind;
use import_round_trip::{check, differences, intended, read_crds, round_trip, yaml_files};
use kube_codegen_tests::{FIXTURES, workspace};

const GENERATORS: &[GeneratorKind] = &[GeneratorKind::Deepcopy, GeneratorKind::Register, GeneratorKind::Crd];

/// controller-gen's CRDs of the twin of fixture `name`, written to `out`.
fn controller_gen_crds(controller_gen: &Path, out: &Path, name: &str) -> Vec<PathBuf> {
    crd_diff::run_controller_gen(controller_gen, &workspace().join("tests/controller-gen"), out, name);
    if out.exists() { yaml_files(out) } else { Vec::new() }
}

#[test]
fn controller_gen_crds_round_trip_and_compile() {
    let controller_gen = codegen_testenv::controller_gen().unwrap_or_else(|e| panic!("{e:#}"));
    let krate = scratch_crate::ScratchCrate::new(&workspace(), "imported-controller-gen");
    let src = krate.dir.join("src");
    let _ = std::fs::remove_dir_all(&src);
    std::fs::create_dir_all(&src).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let mut found = Vec::new();
    let mut lib =
        String::from("//! controller-gen's CRDs, imported by tests/import_roundtrip.rs.\n#![deny(warnings)]\n");
    for (name, _) in FIXTURES {
        let files = controller_gen_crds(&controller_gen, &tmp.path().join(name), name);
        if files.is_empty() {
            // `wardle`: served by an aggregated API server, no CRD to import.
            continue;
        }
        let case = format!("twin_{name}");
        let (output, _) = round_trip(&src.join(&case), &files, GENERATORS, &format!("crate::{case}::apis"));
        found.extend(differences("controller-gen", &read_crds(&files), &output));
        lib.push_str(&format!("pub mod {case} {{\n    pub mod apis;\n}}\n"));
    }
    check(&found, &intended(&workspace()), &["controller-gen"]);

    std::fs::write(src.join("lib.rs"), lib).unwrap();
    krate.write_manifest("");
    let out = krate.cargo("build", &[]);
    assert!(out.status.success(), "the imported types do not compile:\n{}", String::from_utf8_lossy(&out.stderr));
}
