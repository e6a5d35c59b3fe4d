//! Generation is a function of the sources: every fixture generated twice —
//! once from absolute paths, once from relative paths in another working
//! directory, with its files created in the reverse order (so directories
//! list them differently) and its groups and versions given in the reverse
//! order — gives byte-identical trees.
//!
//! Its own test binary: it changes the process's working directory.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use codegen_core::{GroupVersions, Settings};
use common::{FIXTURES, fixtures_dir};

/// Copies `from` to `to`, creating entries in reverse name order.
fn copy_reversed(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let mut entries: Vec<_> = std::fs::read_dir(from).unwrap().map(|e| e.unwrap()).collect();
    entries.sort_by_key(|e| std::cmp::Reverse(e.file_name()));
    for entry in entries {
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_reversed(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// `group:v1,v2` → `group:v2,v1`.
fn reversed_versions(arg: &str) -> String {
    let (group, versions) = arg.split_once(':').unwrap();
    let mut versions: Vec<&str> = versions.split(',').collect();
    versions.reverse();
    format!("{group}:{}", versions.join(","))
}

fn tree(settings: &Settings, root: &Path) -> BTreeMap<PathBuf, String> {
    let generation =
        codegen_core::generate(settings).unwrap_or_else(|d| panic!("{}", codegen_core::diag::render_all(&d)));
    generation
        .output
        .files
        .into_iter()
        .map(|f| {
            let path = f.path.strip_prefix(root).map(Path::to_path_buf).unwrap_or(f.path);
            (path, f.contents)
        })
        .collect()
}

#[test]
fn same_tree_whatever_the_order_and_working_directory() {
    let first_root = tempfile::tempdir().unwrap();
    let second_root = tempfile::tempdir().unwrap();
    for (name, groups) in FIXTURES {
        let first = first_root.path().join(name);
        common::copy_dir(&fixtures_dir().join(name), &first);
        let mut settings = Settings::new(first.join("apis"))
            .with_output_dir(first.join("client"))
            .with_crd_dir(first.join("crd"))
            .with_apis_module(format!("crate::{name}::apis"));
        for g in *groups {
            settings = settings.with_group(GroupVersions::parse(g).unwrap());
        }
        let expected = tree(&settings, &first);

        let second = second_root.path().join(name);
        copy_reversed(&fixtures_dir().join(name), &second);
        std::env::set_current_dir(&second).unwrap();
        let mut settings = Settings::new("apis")
            .with_output_dir("client")
            .with_crd_dir("crd")
            .with_apis_module(format!("crate::{name}::apis"));
        for g in groups.iter().rev() {
            settings = settings.with_group(GroupVersions::parse(&reversed_versions(g)).unwrap());
        }
        let actual = tree(&settings, Path::new(""));
        assert_eq!(expected.keys().collect::<Vec<_>>(), actual.keys().collect::<Vec<_>>(), "{name}: the same files");
        for (path, text) in &expected {
            assert!(actual[path] == *text, "{name}: {} differs", path.display());
        }
    }
}
