//! Every generated CRD reads the same in a YAML 1.1 reader (PyYAML, like
//! many tools) as the CRD kube-codegen built: strings that look like
//! timestamps, booleans (`on`, `yes`), numbers or null are quoted.

mod common;

use std::process::Command;

use codegen_core::emit::crd::{self, CrdOptions};
use serde_json::Value;

/// Loads YAML files with PyYAML and returns their documents as JSON.
fn pyyaml(paths: &[std::path::PathBuf]) -> Vec<Value> {
    let script = "import json, sys, yaml\n\
                  out = []\n\
                  for p in sys.argv[1:]:\n    \
                      docs = [d for d in yaml.safe_load_all(open(p)) if d is not None]\n    \
                      out.append(docs[0])\n\
                  json.dump(out, sys.stdout, default=lambda o: {'__not_json__': repr(o)})\n";
    let out = Command::new("python3")
        .arg("-c")
        .arg(script)
        .args(paths)
        .output()
        .expect("python3 is needed for this test (the README's set-up installs it)");
    assert!(
        out.status.success(),
        "PyYAML could not load the CRDs (install it with `python3 -m pip install pyyaml`):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("PyYAML's output is JSON")
}

#[test]
fn yaml_1_1_readers_read_what_was_built() {
    let root = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    let mut expected = Vec::new();
    for (name, groups) in common::FIXTURES {
        common::copy_dir(&common::fixtures_dir().join(name), &root.path().join(name));
        let settings = common::settings(root.path(), name, groups);
        let generation =
            codegen_core::generate(&settings).unwrap_or_else(|d| panic!("{}", codegen_core::diag::render_all(&d)));
        let options = CrdOptions::from_settings(&settings);
        for group in &generation.model.groups {
            let mut kinds: std::collections::BTreeMap<&str, Vec<_>> = Default::default();
            for v in &group.versions {
                for k in v.kinds.iter().filter(|k| !k.skip_crd) {
                    kinds.entry(k.kind.as_str()).or_default().push((v, k));
                }
            }
            for versions in kinds.values() {
                let mut diags = codegen_core::Diagnostics::new();
                let built = crd::build(&generation.model, group, versions, &options, &mut diags).expect("a CRD");
                let file = settings.crd_dir().join(format!("{}_{}.yaml", group.name, built.spec.names.plural));
                let written = generation.output.files.iter().find(|f| f.path == file).expect("the CRD file");
                let path = root.path().join(format!("{name}-{}.yaml", built.spec.names.plural));
                std::fs::write(&path, &written.contents).unwrap();
                paths.push(path);
                expected.push(serde_json::to_value(&built).unwrap());
            }
        }
    }
    let read = pyyaml(&paths);
    assert_eq!(read.len(), expected.len());
    for ((path, read), expected) in paths.iter().zip(&read).zip(&expected) {
        assert_eq!(read, expected, "{} reads differently in PyYAML", path.display());
    }
    // The fixtures hold the strings YAML 1.1 readers misread when unquoted.
    let all = serde_json::to_string(&expected).unwrap();
    for tricky in ["\"1970-01-01T00:00:00Z\"", "\"on\"", "\"off\"", "\"1.2\"", "\"True\""] {
        assert!(all.contains(tricky), "no fixture has the string {tricky}");
    }
}

/// Floats with an exponent read as the same float in PyYAML: YAML 1.1
/// reads `1e-7` as a string, `1.0e-7` as the number.
#[test]
fn floats_with_exponents_read_as_numbers() {
    let values: Vec<Value> = ["1e-7", "1.5e-7", "1e16", "2.5E+20", "0.5", "100.0", "-3e-9", "12"]
        .iter()
        .map(|n| serde_json::from_str(n).unwrap())
        .collect();
    let value = Value::Array(values);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("numbers.yaml");
    std::fs::write(&path, codegen_core::emit::yaml::to_string(&value)).unwrap();
    let read = pyyaml(std::slice::from_ref(&path));
    let (read, written) = (read[0].as_array().unwrap(), value.as_array().unwrap());
    for (read, written) in read.iter().zip(written) {
        assert!(read.is_number(), "{written} was written as {read} (not a number) for PyYAML");
        assert_eq!(read.as_f64(), written.as_f64(), "{written}");
    }
}
