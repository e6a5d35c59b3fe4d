//! Every error the macros report, as trybuild UI cases grouped by category,
//! and macro-mode kinds that compile and run.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.pass("tests/ui/pass/*.rs");
    for category in ["markers", "verbs", "groupversion", "structure", "schema", "package"] {
        t.compile_fail(format!("tests/ui/{category}/*.rs"));
    }
}
