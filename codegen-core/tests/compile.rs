//! Every fixture's generated code compiles, documents and passes clippy
//! under `#![deny(warnings)]`: the fixtures are generated into one
//! throw-away crate (typify's `tests/schemas.rs` pattern) that depends on
//! the runtime and the markers, and is built with cargo in its own target
//! directory. That crate calls only the student client's get, list and
//! watch: no other verb, informer, lister or extract function may be
//! compiled into it, and `Student`'s `Deserialize` is compiled once; it
//! writes and validates a student, and `Student`'s `Serialize` is compiled
//! once.

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
    // What is generated is held to `missing_docs` as well (a library of the
    // user's may deny it); the fixtures' own types are undocumented test
    // input.
    let mut lib = String::from(
        "//! Generated fixtures, compiled by codegen-core's compile test.\n#![deny(warnings, missing_docs)]\n",
    );
    for (name, groups) in common::FIXTURES {
        common::generate(&src, name, groups);
        lib.push_str(&format!(
            "/// The `{name}` fixture.\npub mod {name} {{\n    #[allow(missing_docs)]\n    pub mod apis;\n    pub mod client;\n}}\n"
        ));
    }
    // Apply configurations take the API types' own values: an integer
    // field keeps its Rust type, and a literal takes the item's type.
    lib.push_str(
        r#"/// Apply configurations built from the API types' values.
pub mod usage {
    use crate::student::apis::example::v1::rooms::Room;
    use crate::student::client::applyconfigurations::example::v1::RoomApplyConfiguration;
    use crate::twokinds::apis::shop::v1::{Invoice, OrderSpec};
    use crate::twokinds::client::applyconfigurations::shop::v1::{
        InvoiceApplyConfiguration, OrderSpecApplyConfiguration,
    };

    /// A room's configuration from a room (`u32`, `NonZeroU32`).
    pub fn room(room: &Room) -> RoomApplyConfiguration {
        let config = RoomApplyConfiguration::default().with_number(room.number);
        match room.seats {
            Some(seats) => config.with_seats(seats),
            None => config,
        }
    }

    /// An invoice's configuration (`u16`), and discounts from literals and
    /// from a spec (`u8` values).
    pub fn order(invoice: &Invoice, spec: &OrderSpec) -> (InvoiceApplyConfiguration, OrderSpecApplyConfiguration) {
        let discounts = spec.discounts.iter().map(|(tier, percent)| (format!("{tier:?}"), *percent));
        (
            InvoiceApplyConfiguration::default().with_days(invoice.days),
            OrderSpecApplyConfiguration::default().with_discounts([("gold", 10)]).with_discounts(discounts),
        )
    }

    /// Reads students three ways (get, a list page, a watch), each future
    /// polled once as a spawned task's first poll would, so that their
    /// code is compiled here.
    pub fn read_students(cs: &crate::student::client::clientset::Clientset) -> usize {
        use codegen_runtime::client::{GetOptions, ListOptions};
        let client = cs.example_v1().students("default");
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        let (get_opts, list_opts) = (GetOptions::default(), ListOptions::default());
        let get = std::pin::pin!(client.get("a", &get_opts));
        let list = std::pin::pin!(client.list(&list_opts));
        let watch = std::pin::pin!(client.watch(&list_opts));
        usize::from(get.poll(&mut cx).is_ready())
            + usize::from(list.poll(&mut cx).is_ready())
            + usize::from(watch.poll(&mut cx).is_ready())
    }

    /// Writes a student as the client writes request bodies, and
    /// validates it (which reads it as a JSON value).
    pub fn check_student(student: &crate::student::apis::example::v1::Student) -> usize {
        serde_json::to_vec(student).map_or(0, |body| body.len()) + usize::from(student.validate().is_ok())
    }
}
"#,
    );
    std::fs::write(src.join("lib.rs"), lib).unwrap();
    krate.write_manifest("");
    let out = krate.cargo("build", &[]);
    assert!(out.status.success(), "fixture crate does not compile:\n{}", String::from_utf8_lossy(&out.stderr));
    // Nor does its documentation warn (`deny(warnings)` takes in rustdoc's
    // lints): descriptions of built-in types become apply configurations'
    // docs, with their URLs, `<placeholders>` and `[brackets]`; and the
    // crate depends on kube itself, so a link labelled with a kube path
    // that also names its target would be redundant.
    let out = krate.cargo("doc", &["--no-deps"]);
    assert!(
        out.status.success(),
        "fixture crate's documentation has warnings:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Nor clippy's default lints, as a user's `cargo clippy` meets the
    // generated code (built-in types, several versions, an aggregated API).
    let out = krate.cargo("clippy", &[]);
    assert!(out.status.success(), "clippy warns on the fixture crate:\n{}", String::from_utf8_lossy(&out.stderr));

    // What a kind costs when unused: the generated client verbs, informer
    // accessors, listers and extract functions are only instantiated where
    // a caller uses them. The library calls only the student client's get,
    // list and watch, so it holds no other client future, no kube `Api`
    // construction, and no informer construction, lister or extract code.
    // Searched as symbol names (Rust's default mangling: length-prefixed
    // path segments).
    let rlib = std::fs::read(krate.root.join("target/debug/libcodegen_fixtures.rlib")).expect("fixture rlib");
    let has = |segments: &str| rlib.windows(segments.len()).any(|w| w == segments.as_bytes());
    // The search finds what is there: the student client's constructor is
    // plain public code, compiled in any case.
    assert!(has("13StudentClient3new17h"), "the symbol search found nothing it should: has the mangling changed?");
    for (what, segments) in [
        ("SharedInformerFactory::informer_for", "21SharedInformerFactory12informer_for17h"),
        ("SharedIndexInformer::new", "28SharedIndexInformer$LT$K$GT$3new17h"),
        ("Lister::list", "15Lister$LT$K$GT$4list17h"),
        ("apply::extract", "5apply7extract7extract17h"),
        ("StudentClient::create", "13StudentClient6create"),
        ("TypedClient::create", "20TypedClient$LT$K$GT$6create"),
        ("TypedClient::update", "20TypedClient$LT$K$GT$6update"),
        ("kube's Api::namespaced", "12Api$LT$K$GT$10namespaced17h"),
    ] {
        assert!(!has(segments), "{what} is compiled into a crate that never uses it");
    }

    // A kind's objects are decoded by one deserializer whichever verb reads
    // them: `read_students` gets, lists and watches, and the crate holds one
    // copy of `Student`'s `Deserialize` (the symbol's hash tells copies
    // over different deserializers apart).
    for (what, segments) in [
        ("TypedClient::get", "20TypedClient$LT$K$GT$3get"),
        ("TypedClient::list", "20TypedClient$LT$K$GT$4list"),
        ("TypedClient::watch", "20TypedClient$LT$K$GT$5watch"),
    ] {
        assert!(has(segments), "{what} is not compiled into the crate that calls it");
    }
    let copies = symbol_hashes(
        &rlib,
        "Deserialize$u20$for$u20$codegen_fixtures..student..apis..example..v1..types..Student$GT$11deserialize17h",
    );
    assert!(!copies.is_empty(), "no Deserialize of Student found: has the mangling of impls changed?");
    assert_eq!(copies.len(), 1, "Student is decoded by {} deserializers: {copies:?}", copies.len());
    // Likewise one serializer: `check_student` writes a request body and
    // validates, which takes the object as a JSON value made from its text.
    let copies = symbol_hashes(
        &rlib,
        "Serialize$u20$for$u20$codegen_fixtures..student..apis..example..v1..types..Student$GT$9serialize17h",
    );
    assert!(!copies.is_empty(), "no Serialize of Student found: has the mangling of impls changed?");
    assert_eq!(copies.len(), 1, "Student is encoded by {} serializers: {copies:?}", copies.len());
}

/// The distinct hashes following `prefix` (a symbol name up to its `17h`)
/// in `bytes`.
fn symbol_hashes(bytes: &[u8], prefix: &str) -> std::collections::BTreeSet<String> {
    bytes
        .windows(prefix.len() + 16)
        .filter(|w| w.starts_with(prefix.as_bytes()))
        .map(|w| String::from_utf8_lossy(&w[prefix.len()..]).into_owned())
        .collect()
}
