//! Shared by the snapshot and compile tests: the fixture packages and how to
//! generate them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use codegen_core::{GroupVersions, Settings};

/// `(fixture, [group:versions])`: one per case of the issue.
pub const FIXTURES: &[(&str, &[&str])] = include!("fixtures/index.rs");

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join("fixtures")
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Settings for fixture `name` copied to `root/<name>`: apis in
/// `root/<name>/apis`, clients in `root/<name>/client`, CRDs in `root/<name>/crd`.
pub fn settings(root: &Path, name: &str, groups: &[&str]) -> Settings {
    let base = root.join(name);
    let mut s = Settings::new(base.join("apis"))
        .with_output_dir(base.join("client"))
        .with_crd_dir(base.join("crd"))
        .with_apis_module(format!("crate::{name}::apis"));
    for g in groups {
        s = s.with_group(GroupVersions::parse(g).unwrap());
    }
    s
}

/// Copies fixture `name` under `root` and generates everything for it.
pub fn generate(root: &Path, name: &str, groups: &[&str]) -> codegen_core::Report {
    copy_dir(&fixtures_dir().join(name), &root.join(name));
    match codegen_core::run(&settings(root, name, groups), codegen_core::Mode::Write) {
        Ok(report) => report,
        Err(diags) => panic!("{}", codegen_core::diag::render_all(&diags)),
    }
}

/// Every generated file under `dir`, as `==== path\ncontents` blocks.
pub fn listing(dir: &Path) -> String {
    let mut files = Vec::new();
    collect(dir, dir, &mut files);
    files.sort();
    let mut out = String::new();
    for (rel, text) in files {
        if codegen_core::write::is_generated(&text) {
            out.push_str(&format!("==== {rel}\n{text}\n"));
        }
    }
    out
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            collect(root, &p, out);
        } else if let Ok(text) = std::fs::read_to_string(&p) {
            out.push((p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/"), text));
        }
    }
}
