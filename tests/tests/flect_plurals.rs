//! Differential test against flect, the pluralizer controller-gen names
//! CRDs with: for a few thousand kind names, `codegen_core::plural::
//! controller_gen_plural` must give what `strings.ToLower(flect.Pluralize(
//! kind))` gives (`tests/go/flect-plurals/`, flect v1.0.3 as controller-gen
//! v0.23.0 uses it). kube-codegen warns when that plural differs from the
//! one it uses, so the warning is only as good as this agreement.
//!
//! The names: every word and ending written in `codegen-core/src/plural.rs`
//! (its dictionary, suffix rules and acronyms) alone, capitalized, as the
//! last word of a longer name and in upper case; the short names of every
//! built-in Kubernetes type; and kinds of real operators.

#[path = "../support/go_oracle.rs"]
mod go_oracle;

use std::collections::BTreeSet;

use codegen_core::KubeVersion;
use codegen_core::plural::controller_gen_plural;
use kube_codegen_tests::workspace;

/// The string literals of `plural.rs`: the words, endings and acronyms.
fn literals_of_plural_rs() -> BTreeSet<String> {
    let source = std::fs::read_to_string(workspace().join("codegen-core/src/plural.rs")).unwrap();
    let mut out = BTreeSet::new();
    let mut rest = source.as_str();
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let Some(end) = after.find('"') else { break };
        let literal = &after[..end];
        if !literal.is_empty() && literal.chars().all(|c| c.is_ascii_alphanumeric()) {
            out.insert(literal.to_string());
        }
        rest = &after[end + 1..];
    }
    out
}

fn capitalized(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map(|c| c.to_uppercase().collect::<String>() + chars.as_str()).unwrap_or_default()
}

fn names() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for word in literals_of_plural_rs() {
        let cap = capitalized(&word);
        for name in [
            word.clone(),
            cap.clone(),
            word.to_uppercase(),
            format!("Cluster{cap}"),
            format!("My{cap}"),
            format!("Db{word}"),
            format!("DNS{cap}"),
            format!("Foo{}", word.to_uppercase()),
        ] {
            names.insert(name);
        }
    }
    let builtin = codegen_core::builtin::definitions(KubeVersion::latest());
    names.extend(builtin.iter().map(|d| codegen_core::builtin::short_name(d).to_string()));
    for kind in [
        "Student",
        "Person",
        "Index",
        "Repo",
        "Cafe",
        "Proof",
        "Chief",
        "Safe",
        "Status",
        "Address",
        "Endpoints",
        "EndpointSlice",
        "Ingress",
        "IngressClass",
        "NetworkPolicy",
        "Gateway",
        "HTTPRoute",
        "GRPCRoute",
        "TLSRoute",
        "ReferenceGrant",
        "BackendTLSPolicy",
        "Certificate",
        "CertificateRequest",
        "ClusterIssuer",
        "Issuer",
        "Challenge",
        "Order",
        "Prometheus",
        "PrometheusRule",
        "ServiceMonitor",
        "PodMonitor",
        "Alertmanager",
        "ThanosRuler",
        "Probe",
        "ScrapeConfig",
        "Application",
        "ApplicationSet",
        "AppProject",
        "Rollout",
        "AnalysisTemplate",
        "Kustomization",
        "HelmRelease",
        "HelmRepository",
        "GitRepository",
        "Bucket",
        "OCIRepository",
        "ImagePolicy",
        "Canary",
        "VirtualService",
        "DestinationRule",
        "ServiceEntry",
        "Sidecar",
        "EnvoyFilter",
        "PeerAuthentication",
        "AuthorizationPolicy",
        "Telemetry",
        "ScaledObject",
        "ScaledJob",
        "TriggerAuthentication",
        "VolumeSnapshot",
        "VolumeSnapshotClass",
        "VolumeSnapshotContent",
        "Cluster",
        "Machine",
        "MachineSet",
        "MachineDeployment",
        "MachineHealthCheck",
        "KubeadmControlPlane",
        "Database",
        "Backup",
        "Restore",
        "Schedule",
        "Postgresql",
        "PostgresCluster",
        "RedisFailover",
        "KafkaTopic",
        "KafkaUser",
        "Kafka",
        "Memcached",
        "Guestbook",
        "CronTab",
        "Foo",
        "Bar",
        "Baz",
        "Widget",
        "Sheep",
        "DNSRecord",
        "FooDns",
        "IPPool",
        "IPAddressPool",
        "BGPPeer",
        "CIDRBlock",
        "APIService",
        "MyAPI",
        "IDs",
        "ID",
        "Id",
        "UUIDMap",
        "Analysis",
        "Diagnosis",
        "Matrix",
        "Box",
        "Quiz",
        "Waltz",
        "Buzz",
        "Leaf",
        "Knife",
        "Life",
        "Wolf",
        "Scarf",
        "Hero",
        "Photo",
        "Video",
        "Radio",
        "Piano",
        "Zoo",
        "Echo",
        "Data",
        "Datum",
        "Medium",
        "Criterion",
        "Man",
        "Human",
        "Woman",
        "Shaman",
        "Child",
        "Mouse",
        "Louse",
        "Axis",
        "Taxis",
        "Toe",
        "Tiptoe",
        "Die",
        "Indie",
        "Use",
        "Fuse",
        "Reuse",
        "Series",
        "Species",
        "News",
        "Money",
        "Bus",
        "Virus",
        "Campus",
        "Census",
        "Corpus",
        "Day",
        "Key",
        "Boy",
        "Guy",
        "Soliloquy",
        "Quota",
        "ResourceQuota",
        "Limit",
        "LimitRange",
        "Lease",
        "snake_case",
        "kebab-kind",
        "ABCThing",
        "OKStatus",
        "JSONSchema",
        "Z",
        "A1",
        "V1Thing",
    ] {
        names.insert(kind.to_string());
    }
    names
}

#[test]
fn controller_gen_plurals_match_flect() {
    let names = names();
    assert!(names.len() > 1_000, "{} names", names.len());
    let answers =
        go_oracle::ask("flect-plurals", "the flect_plurals differential test", names.iter().map(String::as_str));
    let mut mismatches = Vec::new();
    let mut seen = 0;
    for line in &answers {
        let (kind, theirs) = line.split_once('\t').unwrap_or_else(|| panic!("bad line {line:?}"));
        seen += 1;
        let ours = controller_gen_plural(kind);
        if ours != theirs {
            mismatches.push(format!("{kind}: flect {theirs}, ours {ours}"));
        }
    }
    assert_eq!(seen, names.len(), "one answer per name");
    assert!(mismatches.is_empty(), "{} of {} differ:\n{}", mismatches.len(), seen, mismatches.join("\n"));
}
