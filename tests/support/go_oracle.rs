//! Runs one of the Go oracles of `tests/go/` (built with `go build`, cached
//! outside the clone): one question per line on its stdin, one answer per
//! line on its stdout.

use std::io::Write;
use std::process::{Command, Stdio};

/// The answers of the Go program `tests/go/<name>` to `questions`, one line
/// each; `test` names the test that needs it, for the message when Go is
/// missing.
pub fn ask<'q>(name: &str, test: &str, questions: impl IntoIterator<Item = &'q str>) -> Vec<String> {
    let dir = kube_codegen_tests::workspace().join("tests/go").join(name);
    let go = codegen_testenv::go_program(&dir, name, test).unwrap_or_else(|e| panic!("{e:#}"));
    let mut child = Command::new(&go)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("running {name}: {e}"));
    let input: String = questions.into_iter().map(|q| format!("{q}\n")).collect();
    child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{name} failed");
    String::from_utf8(output.stdout).unwrap().lines().map(String::from).collect()
}
