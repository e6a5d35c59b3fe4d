//! Node-by-node comparison of two CRDs as JSON: versions matched by name,
//! set-like lists compared as sets, numbers by value. Shared by the
//! controller-gen parity test and the import round trip through `#[path]`.

#![allow(dead_code)]

use std::collections::BTreeMap;

use serde_json::Value;

/// One difference: path, kind (`differs` or an "only on one side" label),
/// the two sides shortened.
pub type Found = (String, &'static str, String, String);

/// How two CRDs are compared.
pub struct Comparison {
    /// Keys of arrays whose order carries no meaning.
    pub set_like: &'static [&'static str],
    /// The kind of a difference present only on the left side.
    pub only_left: &'static str,
    /// The kind of a difference present only on the right side.
    pub only_right: &'static str,
}

/// A value as one line of at most 160 characters.
pub fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 160 { format!("{}…", s.chars().take(160).collect::<String>()) } else { s }
}

impl Comparison {
    /// Appends every difference between `a` and `b` to `out`.
    pub fn run(&self, a: &Value, b: &Value, out: &mut Vec<Found>) {
        self.compare(a, b, "", "", out);
    }

    fn compare(&self, a: &Value, b: &Value, path: &str, key: &str, out: &mut Vec<Found>) {
        match (a, b) {
            (Value::Object(x), Value::Object(y)) => {
                for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                    let p = format!("{path}/{k}");
                    match (x.get(k), y.get(k)) {
                        (Some(u), Some(v)) => self.compare(u, v, &p, k, out),
                        (Some(u), None) => out.push((p, self.only_left, short(u), String::new())),
                        (None, Some(v)) => out.push((p, self.only_right, String::new(), short(v))),
                        (None, None) => {}
                    }
                }
            }
            (Value::Array(x), Value::Array(y)) if key == "versions" => {
                // Versions are matched by name.
                let name = |v: &Value| v.get("name").and_then(Value::as_str).unwrap_or("?").to_string();
                let xs: BTreeMap<String, &Value> = x.iter().map(|v| (name(v), v)).collect();
                let ys: BTreeMap<String, &Value> = y.iter().map(|v| (name(v), v)).collect();
                for (n, u) in &xs {
                    match ys.get(n) {
                        Some(v) => self.compare(u, v, &format!("{path}/{n}"), "", out),
                        None => out.push((format!("{path}/{n}"), self.only_left, short(u), String::new())),
                    }
                }
                for (n, v) in &ys {
                    if !xs.contains_key(n) {
                        out.push((format!("{path}/{n}"), self.only_right, String::new(), short(v)));
                    }
                }
            }
            (Value::Array(x), Value::Array(y)) if self.set_like.contains(&key) => {
                let mut xs: Vec<String> = x.iter().map(Value::to_string).collect();
                let mut ys: Vec<String> = y.iter().map(Value::to_string).collect();
                xs.sort();
                ys.sort();
                if xs != ys {
                    out.push((path.to_string(), "differs", short(a), short(b)));
                }
            }
            (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
                for (i, (u, v)) in x.iter().zip(y).enumerate() {
                    self.compare(u, v, &format!("{path}/{i}"), "", out);
                }
            }
            _ if a == b => {}
            // Integers and floats of the same value (`1` and `1.0`) are the same JSON number.
            (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => {}
            _ => out.push((path.to_string(), "differs", short(a), short(b))),
        }
    }
}

/// Whether the CRD path `path` (`/spec/versions/v1/...`) matches `pattern`,
/// where `*` stands for one segment and `**` for any number.
pub fn path_matches(pattern: &str, path: &str) -> bool {
    fn glob(pattern: &[&str], path: &[&str]) -> bool {
        match (pattern.split_first(), path.split_first()) {
            (None, None) => true,
            (Some((&"**", rest)), _) => (0..=path.len()).any(|i| glob(rest, &path[i..])),
            (Some((p, prest)), Some((s, srest))) => (*p == "*" || p == s) && glob(prest, srest),
            _ => false,
        }
    }
    let segments = |s: &str| s.trim_start_matches('/').split('/').map(str::to_string).collect::<Vec<_>>();
    let (p, q) = (segments(pattern), segments(path));
    let p: Vec<&str> = p.iter().map(String::as_str).collect();
    let q: Vec<&str> = q.iter().map(String::as_str).collect();
    glob(&p, &q)
}

/// Runs controller-gen's CRD generator on the Go twin `name` of
/// `twins` (`tests/controller-gen`) into `out`; panics with its output
/// when it fails.
pub fn run_controller_gen(
    controller_gen: &std::path::Path,
    twins: &std::path::Path,
    out: &std::path::Path,
    name: &str,
) {
    assert!(twins.join(name).is_dir(), "fixture `{name}` has no Go twin in {}", twins.display());
    let output = std::process::Command::new(controller_gen)
        // Floats are allowed as kube-codegen allows them (with a warning).
        .arg("crd:allowDangerousTypes=true")
        .arg(format!("paths=./{name}/..."))
        .arg(format!("output:crd:dir={}", out.display()))
        .current_dir(twins)
        .env("GOFLAGS", "-mod=readonly")
        .output()
        .expect("running controller-gen");
    assert!(
        output.status.success(),
        "controller-gen failed on the `{name}` twin:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
