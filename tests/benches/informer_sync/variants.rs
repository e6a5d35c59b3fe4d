//! The variants `informer_sync` measures, and how `INFORMER_SYNC_VARIANTS`
//! and `INFORMER_SYNC_COMPARE` select them (a module of the bench, also
//! compiled by `tests/tests/bench_variants.rs`, which tests the selection).

use std::path::PathBuf;

use anyhow::{Result, bail};

/// client-go's default list mode: the streaming list.
pub const GO_DEFAULT: &str = "client-go, default (streaming list)";
/// client-go with paged lists.
pub const GO_PAGED: &str = "client-go, paged lists";
/// client-go, paged, dispatching to one event handler.
pub const GO_HANDLER: &str = "client-go, paged lists + 1 handler";
/// client-go, paged, stripping managedFields in a transform.
pub const GO_STRIPPED: &str = "client-go, paged lists, no managedFields";
/// client-go, streaming list, stripping managedFields.
pub const GO_DEFAULT_STRIPPED: &str = "client-go, default, no managedFields";

/// How one variant's child process is started.
pub enum Run {
    /// `tests/src/bin/informer_sync_child.rs` with this variant, or the
    /// child program at the path (`INFORMER_SYNC_COMPARE`).
    Rust(&'static str, Option<PathBuf>),
    /// The client-go program with these arguments.
    Go(&'static [&'static str]),
}

/// One measured variant, named as the table prints it.
pub struct Variant {
    /// Its row in the table.
    pub name: String,
    /// How its child process starts.
    pub run: Run,
    /// The client-go variant doing the same work.
    pub counterpart: Option<&'static str>,
}

/// The variants of the sync comparison, narrowed to the Rust variants
/// `only` names (comma-separated child variant names,
/// `INFORMER_SYNC_VARIANTS`) with their client-go counterparts and
/// client-go's two list modes, and with every Rust variant run a second
/// time by the child program `compare` (`INFORMER_SYNC_COMPARE`).
pub fn variants(only: Option<&str>, compare: Option<PathBuf>) -> Result<Vec<Variant>> {
    let v = |name: &str, run, counterpart| Variant { name: name.to_owned(), run, counterpart };
    let all = vec![
        v("kube reflector", Run::Rust("reflector", None), Some(GO_PAGED)),
        v("codegen informer (managedFields as text, the default)", Run::Rust("informer", None), Some(GO_PAGED)),
        v("codegen informer + 1 handler", Run::Rust("informer-handler", None), Some(GO_HANDLER)),
        v("codegen informer, streaming list", Run::Rust("informer-streaming", None), Some(GO_DEFAULT)),
        v(
            "codegen informer, paged lists with resourceVersion=0",
            Run::Rust("informer-cache-list", None),
            Some(GO_PAGED),
        ),
        v("codegen informer, managedFields decoded", Run::Rust("informer-decoded", None), Some(GO_PAGED)),
        v(
            "codegen informer, streaming, managedFields decoded",
            Run::Rust("informer-streaming-decoded", None),
            Some(GO_DEFAULT),
        ),
        v("codegen informer, no managedFields", Run::Rust("informer-stripped", None), Some(GO_STRIPPED)),
        v(
            "codegen informer, streaming, no managedFields",
            Run::Rust("informer-streaming-stripped", None),
            Some(GO_DEFAULT_STRIPPED),
        ),
        v(GO_DEFAULT, Run::Go(&["--list", "default"]), None),
        v(GO_PAGED, Run::Go(&["--list", "paged"]), None),
        v(GO_HANDLER, Run::Go(&["--list", "paged", "--handler"]), None),
        v(GO_STRIPPED, Run::Go(&["--list", "paged", "--strip-managed-fields"]), None),
        v(GO_DEFAULT_STRIPPED, Run::Go(&["--list", "default", "--strip-managed-fields"]), None),
    ];
    let wanted: Option<Vec<&str>> = only.map(|only| only.split(',').map(str::trim).collect());
    let rust_kept = |run: &Run| match (run, &wanted) {
        (Run::Rust(variant, _), Some(wanted)) => wanted.contains(variant),
        _ => true,
    };
    let counterparts: Vec<&str> = all
        .iter()
        .filter(|v| matches!(v.run, Run::Rust(..)) && rust_kept(&v.run))
        .filter_map(|v| v.counterpart)
        .collect();
    let mut kept: Vec<Variant> = all
        .into_iter()
        .filter(|v| match v.run {
            Run::Rust(..) => rust_kept(&v.run),
            Run::Go(_) => {
                wanted.is_none()
                    || [GO_PAGED, GO_DEFAULT].contains(&v.name.as_str())
                    || counterparts.contains(&v.name.as_str())
            }
        })
        .collect();
    if let Some(unknown) =
        wanted.iter().flatten().find(|w| !kept.iter().any(|v| matches!(v.run, Run::Rust(name, _) if name == **w)))
    {
        bail!("INFORMER_SYNC_VARIANTS: no Rust variant {unknown:?}");
    }
    if let Some(other) = compare {
        if !other.is_file() {
            bail!("INFORMER_SYNC_COMPARE: {} is not a file", other.display());
        }
        let compared: Vec<Variant> = kept
            .iter()
            .filter_map(|v| match v.run {
                Run::Rust(variant, None) => Some(Variant {
                    name: format!("{} [compare]", v.name),
                    run: Run::Rust(variant, Some(other.clone())),
                    counterpart: v.counterpart,
                }),
                _ => None,
            })
            .collect();
        kept.extend(compared);
    }
    Ok(kept)
}
