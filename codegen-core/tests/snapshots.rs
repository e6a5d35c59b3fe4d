//! Snapshot tests: every fixture package's generated output (`{fixture}_all`),
//! byte-identical across runs and file orders.

mod common;

#[test]
fn fixtures_match_snapshots() {
    for (name, groups) in common::FIXTURES {
        let dir = tempfile::tempdir().unwrap();
        common::generate(dir.path(), name, groups);
        let text = common::listing(&dir.path().join(name));
        insta::assert_snapshot!(format!("{name}_all"), text);
    }
}

#[test]
fn output_is_deterministic_and_idempotent() {
    let (name, groups) = common::FIXTURES[4];
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    common::generate(a.path(), name, groups);
    common::generate(b.path(), name, groups);
    assert_eq!(common::listing(&a.path().join(name)), common::listing(&b.path().join(name)));
    // A second run over its own output changes nothing, and --verify agrees.
    let s = common::settings(a.path(), name, groups);
    let again = codegen_core::run(&s, codegen_core::Mode::Write).unwrap();
    assert!(again.changes.is_empty(), "{:?}", again.changes);
    let verify = codegen_core::run(&s, codegen_core::Mode::Verify).unwrap();
    assert!(verify.changes.is_empty());
}
