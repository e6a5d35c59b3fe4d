//! Differential test of the `pattern` check against Go's `regexp`, which
//! kube-apiserver compiles a CRD's patterns with: for each pattern,
//! `codegen_core::emit::schema::go_regex_problem` finds a problem exactly
//! when Go refuses it (`tests/go/go-regexp/`). A pattern Go refuses makes
//! the API server refuse the whole CRD at install time; one Go takes must
//! never be an error here.

#[path = "../support/go_oracle.rs"]
mod go_oracle;

use codegen_core::emit::schema::go_regex_problem;

/// Patterns of real CRDs, and the mistakes and other dialects' syntax
/// people bring (PCRE, JavaScript, Python).
const PATTERNS: &[&str] = &[
    // Kubernetes' and operators' own.
    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
    "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$",
    "^([0-9]+(\\.[0-9]+)?(ms|s|m|h))+$",
    "^(([0-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5])\\.){3}([0-9]|[1-9][0-9]|1[0-9]{2}|2[0-4][0-9]|25[0-5])$",
    "^https?://",
    "^[A-Za-z_][A-Za-z0-9_]*$",
    "^\\d+(\\.\\d+)?%$",
    "(?i)^(debug|info|warn|error)$",
    "(?s)^.*$",
    "(?U)a+",
    "(?m)^x$",
    "(?P<name>[a-z]+)",
    "(?<name>[a-z]+)",
    "\\Qa.b\\E",
    "a{",
    "say {{ x }}",
    "a{1,2}",
    "a{,2}",
    "a+?",
    "a??",
    "(?:a+)+",
    "[[:alpha:]]+",
    "[[:^digit:]]",
    "\\pL+",
    "\\p{Greek}",
    "\\PN",
    "\\x41\\x{263a}",
    "\\101",
    "[\\d\\s]",
    "\\b\\B\\A\\z",
    "[a-z&&[^b]]",
    "[a-z--b]",
    "a{1001}",
    "a{2}{3}",
    "(?:a{2}){3}{4}",
    // Mistakes both refuse.
    "([a-z",
    "(a",
    "a)",
    "[z-a]",
    "*a",
    "a\\",
    "x**",
    // Other dialects.
    "^(?=.*[a-z]).+$",
    "^(?!foo).*$",
    "(?<=a)b",
    "(?<!a)b",
    "^[a-z]++$",
    "a*+",
    "a?+",
    "(?x) ^ [a-z]+ $",
    "(?u:a)",
    "(?R)a",
    "(a)\\1",
    "\\Z",
    "\\C",
    "(?>a+)",
    "\\h",
    "\\R",
    "\\e",
    "[\\w-.]",
    "(?ii)a",
    "(?i-)a",
    "\\0",
    "\\08",
    "\\12",
    "a{2,1001}",
    "a{1000}",
    "\\Qa\\E\\Z",
    "^[^[\\]]*$",
    "[[a-z]",
    "[[:alpha:][]",
    "[]a]",
    "[^]a]",
    "[a&&b]",
    "[a~~b]",
    "[\\[\\]]",
    "a{2,1}",
    "\\u0041",
    "\\U0000263A",
    "\\u{41}",
    "[\\u0041]",
];

#[test]
fn patterns_are_refused_as_go_refuses_them() {
    let verdicts = go_oracle::ask("go-regexp", "the go_regex_patterns differential test", PATTERNS.iter().copied());
    assert_eq!(verdicts.len(), PATTERNS.len(), "one answer per pattern");
    let mut disagreements = Vec::new();
    for (pattern, go) in PATTERNS.iter().zip(verdicts) {
        let ours = go_regex_problem(pattern);
        if ours.is_some() != go.starts_with("error") {
            disagreements.push(format!("{pattern:?}: Go {go}, kube-codegen {ours:?}"));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
}
