//! docs/markers.md against the code: the key tables of the markers against
//! the keys the parsers accept, the generator-options table and the table
//! of the other commands against the flags of `kube-codegen --help`, and
//! what those tables say of `--register-file`, `--year` and `--crd-dir`.
//! A key or flag added on one side only fails here, with what differs.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(repo().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The `## ` section of `doc` whose heading contains `heading`, up to the
/// next `## ` heading (fenced code is not looked into).
fn section<'a>(doc: &'a str, heading: &str) -> &'a str {
    let mut start = None;
    let mut offset = 0;
    let mut in_code = false;
    for line in doc.split_inclusive('\n') {
        if line.starts_with("```") {
            in_code = !in_code;
        }
        if !in_code && line.starts_with("## ") {
            if let Some(start) = start {
                return &doc[start..offset];
            }
            if line.contains(heading) {
                start = Some(offset);
            }
        }
        offset += line.len();
    }
    match start {
        Some(s) => &doc[s..],
        None => panic!("docs/markers.md has no section `{heading}`"),
    }
}

/// A table: its header cells and its rows' cells.
struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

fn cells(line: &str) -> Vec<String> {
    // `\|` is a `|` inside a cell.
    let line = line.trim().trim_start_matches('|').trim_end_matches('|').replace("\\|", "\u{0}");
    line.split('|').map(|c| c.trim().replace('\u{0}', "|")).collect()
}

/// The tables of `text`, in order.
fn tables(text: &str) -> Vec<Table> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let is_table = lines[i].starts_with('|') && lines.get(i + 1).is_some_and(|l| l.starts_with("|---"));
        if !is_table {
            i += 1;
            continue;
        }
        let header = cells(lines[i]);
        i += 2;
        let mut rows = Vec::new();
        while i < lines.len() && lines[i].starts_with('|') {
            rows.push(cells(lines[i]));
            i += 1;
        }
        out.push(Table { header, rows });
    }
    out
}

/// The one table of `text` whose first header cell is `first`.
fn table(text: &str, first: &str) -> Table {
    let mut found: Vec<Table> = tables(text).into_iter().filter(|t| t.header[0] == first).collect();
    assert_eq!(found.len(), 1, "tables headed `{first}`");
    found.remove(0)
}

/// The code spans (`..`) of a cell.
fn code_spans(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// The keys a cell names: the identifier each code span starts with
/// (`served = false` → `served`, `only_verbs(..)` → `only_verbs`).
fn keys(cell: &str) -> BTreeSet<String> {
    code_spans(cell)
        .into_iter()
        .map(|span| span.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect::<String>())
        .filter(|k| k.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_'))
        .collect()
}

/// The long flags a cell names (`--max-desc-len N` → `max-desc-len`).
fn flags(cell: &str) -> BTreeSet<String> {
    code_spans(cell)
        .into_iter()
        .filter_map(|span| span.strip_prefix("--"))
        .map(|f| f.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '-').collect())
        .collect()
}

fn set(items: &[&str]) -> BTreeSet<String> {
    items.iter().map(ToString::to_string).collect()
}

/// Fails, saying what is on one side only, unless `docs` and `code` agree.
fn agree(what: &str, docs: &BTreeSet<String>, code: &BTreeSet<String>) -> Result<(), String> {
    if docs == code {
        return Ok(());
    }
    let only_code: Vec<&String> = code.difference(docs).collect();
    let only_docs: Vec<&String> = docs.difference(code).collect();
    Err(format!("{what}: in the code but not the docs: {only_code:?}; in the docs but not the code: {only_docs:?}"))
}

fn check_all(results: Vec<Result<(), String>>) {
    let failures: Vec<String> = results.into_iter().filter_map(Result::err).collect();
    assert!(failures.is_empty(), "docs/markers.md and the code differ:\n{}", failures.join("\n"));
}

/// The strings of `const <name>: &[&str] = &[..];`, the first one after
/// `after` in the source file `path`.
fn const_strings(path: &str, after: &str, name: &str) -> BTreeSet<String> {
    let src = read(path);
    let from = src.find(after).unwrap_or_else(|| panic!("{path} has no `{after}`"));
    let decl = format!("const {name}: &[&str] = &[");
    let start = from + src[from..].find(&decl).unwrap_or_else(|| panic!("{path}: no `{decl}` after `{after}`"));
    let body = &src[start + decl.len()..];
    let body = &body[..body.find("];").unwrap()];
    body.split('"').skip(1).step_by(2).map(ToString::to_string).collect()
}

#[test]
fn the_marker_key_tables_list_the_keys_the_parsers_accept() {
    let doc = read("docs/markers.md");
    let first_column = |heading: &str, first: &str| -> BTreeSet<String> {
        table(section(&doc, heading), first).rows.iter().flat_map(|r| keys(&r[0])).collect()
    };
    use codegen_core::markers::{GENCLIENT_KEYS, RBAC_KEYS, RESOURCE_KEYS, VALIDATE_KEYS};
    let mut results = vec![
        agree("#[genclient(..)]", &first_column("`#[genclient(...)]`", "Marker"), &set(GENCLIENT_KEYS)),
        agree("#[resource(..)]", &first_column("`#[resource(...)]`", "Marker"), &set(RESOURCE_KEYS)),
        agree("#[validate(..)]", &first_column("`#[validate(...)]`", "Marker"), &set(VALIDATE_KEYS)),
        agree("#[rbac(..)]", &first_column("`#[rbac(...)]`", "key"), &set(RBAC_KEYS)),
    ];

    // The nested markers of `#[resource]`: row by row.
    let nested = table(section(&doc, "`#[resource(...)]`"), "nested marker");
    let docs: BTreeMap<String, BTreeSet<String>> = nested.rows.iter().map(|r| (r[0].clone(), keys(&r[1]))).collect();
    let code: BTreeMap<String, BTreeSet<String>> = [
        ("`subresource(scale(..))`", const_strings("codegen-core/src/markers/resource.rs", "fn scale(", "KEYS")),
        ("`printcolumn(..)`", const_strings("codegen-core/src/markers/resource.rs", "fn print_column(", "KEYS")),
        ("`conversion_webhook(..)`", const_strings("codegen-core/src/markers/conversion.rs", "", "KEYS")),
        (
            "`mutating_webhook(..)`, `validating_webhook(..)`",
            const_strings("codegen-core/src/markers/webhook.rs", "", "KEYS"),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let rows = |m: &BTreeMap<String, BTreeSet<String>>| m.keys().cloned().collect::<BTreeSet<String>>();
    results.push(agree("rows of the nested-marker table", &rows(&docs), &rows(&code)));
    for (row, keys) in &code {
        if let Some(documented) = docs.get(row) {
            results.push(agree(row, documented, keys));
        }
    }
    check_all(results);
}

/// `kube-codegen <args> --help`'s long flags, without clap's own `-h,
/// --help` and `-V, --version`: those of the lines that define options.
fn help_flags(args: &[&str]) -> BTreeSet<String> {
    let out = Command::new(env!("CARGO_BIN_EXE_kube-codegen")).args(args).arg("--help").output().unwrap();
    assert!(out.status.success(), "{args:?} --help: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    stdout
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('-') && !l.starts_with("-h, --help") && !l.starts_with("-V, --version"))
        .filter_map(|l| l.split_whitespace().find_map(|w| w.strip_prefix("--")))
        .map(ToString::to_string)
        .collect()
}

/// The commands `main` dispatches on before the generator's own parser:
/// `args.get(1) .. == "rbac"`, and `create` with `args.get(2) .. == "api"`.
fn commands_in_main() -> BTreeSet<String> {
    let src = read("codegen-cli/src/main.rs");
    let names = |position: usize| -> Vec<String> {
        let pattern = format!("args.get({position}).is_some_and(|a| a == \"");
        src.match_indices(&pattern)
            .map(|(i, _)| {
                let rest = &src[i + pattern.len()..];
                rest[..rest.find('"').unwrap()].to_string()
            })
            .collect()
    };
    let second = names(2);
    names(1)
        .into_iter()
        .flat_map(
            |first| {
                if first == "create" { second.iter().map(|s| format!("create {s}")).collect() } else { vec![first] }
            },
        )
        .collect()
}

#[test]
fn the_option_tables_list_the_flags_of_every_command() {
    let doc = read("docs/markers.md");
    let options = section(&doc, "Generator options");
    let generator: BTreeSet<String> =
        table(options, "`kube-codegen` flag").rows.iter().flat_map(|r| flags(&r[0])).collect();
    let mut results = vec![agree("kube-codegen (the generators)", &generator, &help_flags(&[]))];

    let others = table(options, "command");
    let mut documented = BTreeSet::new();
    for row in &others.rows {
        let command = code_spans(&row[0])
            .first()
            .and_then(|c| c.strip_prefix("kube-codegen "))
            .unwrap_or_else(|| panic!("a row of the commands table names no `kube-codegen <command>`: {row:?}"));
        documented.insert(command.to_string());
        let args: Vec<&str> = command.split(' ').collect();
        results.push(agree(&format!("kube-codegen {command}"), &flags(&row[1]), &help_flags(&args)));
    }
    results.push(agree("commands", &documented, &commands_in_main()));
    check_all(results);
}

// ---- what the generator-options table says of some flags ----------------------

const MOD_RS: &str = "codegen_macros::group_name!(\"example.k8s.io\");\n\nmod types;\npub use types::*;\n";

const TYPES_RS: &str = r#"use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// A student.
#[genclient(no_status)]
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[resource(validating_webhook)]
pub struct Student {
    #[serde(flatten, default)]
    pub types: TypeMeta,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: StudentSpec,
}

/// What a student is.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct StudentSpec {
    /// Name.
    pub name: String,
}
"#;

fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let v1 = dir.path().join("pkg/apis/example/v1");
    std::fs::create_dir_all(&v1).unwrap();
    std::fs::write(v1.join("mod.rs"), MOD_RS).unwrap();
    std::fs::write(v1.join("types.rs"), TYPES_RS).unwrap();
    dir
}

/// Exit code and stderr of `kube-codegen crd pkg/apis example:v1 <args>` in `root`.
fn crd(root: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .args(["crd", "pkg/apis", "example:v1"])
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stderr).unwrap())
}

#[test]
fn the_crd_dir_also_places_the_webhook_manifests_beside_it() {
    let dir = project();
    let (code, stderr) = crd(dir.path(), &["--crd-dir", "deploy/crds"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(dir.path().join("deploy/crds/example.k8s.io_students.yaml").is_file());
    assert!(dir.path().join("deploy/webhook/manifests.yaml").is_file(), "DIR/../webhook");
    assert!(!dir.path().join("config").exists(), "nothing at the default places");
    // By default: config/crd and config/webhook.
    let dir = project();
    let (code, stderr) = crd(dir.path(), &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(dir.path().join("config/crd/example.k8s.io_students.yaml").is_file());
    assert!(dir.path().join("config/webhook/manifests.yaml").is_file());
}

#[test]
fn the_register_file_stays_inside_the_version_directory() {
    let dir = project();
    let absolute = dir.path().join("register.rs");
    for path in [absolute.to_str().unwrap(), "generated/../../register.rs", "generated/../register.rs"] {
        let (code, stderr) = crd(dir.path(), &["--register-file", path]);
        assert_eq!(code, 2, "{path}: {stderr}");
        assert!(
            stderr.contains(&format!("error: `--register-file {path}` must stay inside the version directory")),
            "{stderr}"
        );
    }
    let (code, stderr) = crd(dir.path(), &["--register-file", "generated/register.rs"]);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn the_year_needs_a_header_file() {
    let dir = project();
    let (code, stderr) = crd(dir.path(), &["--year", "2026"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("the following required arguments were not provided"), "{stderr}");
    assert!(stderr.contains("--header-file <HEADER_FILE>"), "{stderr}");
    assert!(!dir.path().join("config").exists(), "nothing written");
}
