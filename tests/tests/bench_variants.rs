//! How the `informer_sync` bench selects what it measures
//! (`INFORMER_SYNC_VARIANTS`, `INFORMER_SYNC_COMPARE`): its variant list
//! is a module of the bench, compiled here too.

#[allow(dead_code)]
#[path = "../benches/informer_sync/variants.rs"]
mod variants;

use std::path::PathBuf;

use variants::{GO_DEFAULT, GO_PAGED, GO_STRIPPED, Run, Variant, variants};

fn names(variants: &[Variant]) -> Vec<&str> {
    variants.iter().map(|v| v.name.as_str()).collect()
}

fn rust_runs(variants: &[Variant]) -> Vec<(&str, Option<&PathBuf>)> {
    variants
        .iter()
        .filter_map(|v| match &v.run {
            Run::Rust(name, other) => Some((*name, other.as_ref())),
            Run::Go(_) => None,
        })
        .collect()
}

#[test]
fn by_default_every_rust_variant_runs_with_every_client_go_variant_and_each_counterpart_is_there() {
    let all = variants(None, None).unwrap();
    let rust = rust_runs(&all);
    assert_eq!(rust.len(), 9, "{:?}", names(&all));
    assert!(rust.iter().all(|(_, other)| other.is_none()));
    assert_eq!(all.len() - rust.len(), 5, "{:?}", names(&all));
    let listed = names(&all);
    for v in &all {
        if let Some(counterpart) = v.counterpart {
            assert!(listed.contains(&counterpart), "{}: counterpart {counterpart} is not measured", v.name);
        }
    }
    let mut unique = listed.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), listed.len(), "variant names are unique: {listed:?}");
}

#[test]
fn naming_rust_variants_keeps_them_their_counterparts_and_both_client_go_list_modes() {
    let kept = variants(Some("informer-stripped, reflector"), None).unwrap();
    assert_eq!(rust_runs(&kept).iter().map(|r| r.0).collect::<Vec<_>>(), ["reflector", "informer-stripped"]);
    let go: Vec<&str> = kept.iter().filter(|v| matches!(v.run, Run::Go(_))).map(|v| v.name.as_str()).collect();
    assert_eq!(go, [GO_DEFAULT, GO_PAGED, GO_STRIPPED]);
}

#[test]
fn an_unknown_variant_is_an_error_naming_it() {
    let err = variants(Some("informer,informer-typo"), None).err().expect("an unknown variant is refused");
    assert!(err.to_string().contains("no Rust variant \"informer-typo\""), "{err}");
}

#[test]
fn a_compared_child_runs_every_kept_rust_variant_again_and_must_be_a_file() {
    let child = PathBuf::from(env!("CARGO_BIN_EXE_informer_sync_child"));
    let kept = variants(Some("informer,informer-streaming"), Some(child.clone())).unwrap();
    let rust = rust_runs(&kept);
    assert_eq!(
        rust,
        [
            ("informer", None),
            ("informer-streaming", None),
            ("informer", Some(&child)),
            ("informer-streaming", Some(&child))
        ]
    );
    let compared: Vec<&Variant> = kept.iter().filter(|v| v.name.ends_with(" [compare]")).collect();
    assert_eq!(compared.len(), 2);
    assert!(compared.iter().all(|v| v.counterpart == Some(GO_PAGED) || v.counterpart == Some(GO_DEFAULT)));

    let missing = std::env::temp_dir().join("kube-codegen-no-such-child");
    let err = variants(None, Some(missing)).err().expect("a missing child is refused");
    assert!(err.to_string().contains("INFORMER_SYNC_COMPARE") && err.to_string().contains("is not a file"), "{err}");
}
