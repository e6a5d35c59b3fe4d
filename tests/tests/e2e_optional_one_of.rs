//! A flattened `Option` of an externally tagged enum (a proto one-of, as
//! Istio's and KubeVirt's types hold it) on kube-apiserver: the CRD
//! kube-codegen writes installs, and the server takes an object with none
//! of the variants' keys or one of them, and refuses one with two.
//!
//! For every object, the runtime's validation (what generated `validate()`
//! and the fake API server run) gives the server's verdict and the
//! server's causes, field, reason and message: also for an externally
//! tagged enum field (`oneOf`) with no variant or two, for `anyOf`,
//! `allOf` and `not` written with `schema_json`, and for a `pattern` in
//! RE2 syntax that Rust's `regex` spells otherwise.

use anyhow::Result;
use codegen_testenv::TestEnv;
use serde_json::json;

#[path = "../support/generated_crd.rs"]
mod generated_crd;

const TYPES_RS: &str = r##"use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};

/// A traffic policy.
#[genclient(no_status)]
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct Policy {
    #[serde(flatten, default)]
    pub types: kube::core::TypeMeta,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: PolicySpec,
}

/// The policy.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct PolicySpec {
    /// How long to warm up.
    #[serde(default)]
    pub warmup_seconds: i32,
    /// The load balancer, if any.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub load_balancer: Option<LoadBalancer>,
    /// How fast, if said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pace: Option<Pace>,
    /// Extra settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[validate(schema_json = r#"{"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "c": {"type": "string"}},
        "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
        "allOf": [{"properties": {"a": {"maxLength": 3}}}, {"properties": {"b": {"minLength": 2}}}],
        "not": {"required": ["c"]}}"#)]
    pub extra: Option<serde_json::Value>,
    /// A code, in RE2 syntax Rust's `regex` spells otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[validate(pattern = "^\\Qa.b\\E[[x]$")]
    pub code: Option<String>,
}

/// A pace.
#[derive(Clone, Debug, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub enum Pace {
    /// Fast, at a level.
    Fast {
        /// How fast.
        level: i32,
    },
    /// Slow, for a reason.
    Slow(String),
}

/// One way to balance.
#[derive(Clone, Debug, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub enum LoadBalancer {
    /// A simple policy.
    Simple(String),
    /// By a hash.
    ConsistentHash {
        /// The header hashed.
        header: String,
    },
}
"##;

#[tokio::test]
async fn a_flattened_optional_enum_gives_at_most_one_variant() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let crd =
        generated_crd::generate(dir.path(), "oneof", "oneof.example.com", TYPES_RS, "oneof.example.com_policies.yaml");
    let installed = generated_crd::install(TestEnv::shared(), &crd, "oneof").await?;
    let cases = [
        ("none", json!({"warmupSeconds": 5}), "created"),
        ("simple", json!({"simple": "RANDOM"}), "created"),
        ("hash", json!({"consistentHash": {"header": "x-user"}}), "created"),
        ("both", json!({"simple": "RANDOM", "consistentHash": {"header": "x-user"}}), "refused 422"),
        ("fast", json!({"pace": {"fast": {"level": 2}}}), "created"),
        ("no-pace", json!({"pace": {}}), "refused 422"),
        ("two-paces", json!({"pace": {"fast": {"level": 2}, "slow": "tired"}}), "refused 422"),
        ("extra-a", json!({"extra": {"a": "abc"}}), "created"),
        ("extra-none", json!({"extra": {}}), "refused 422"),
        ("extra-long-a", json!({"extra": {"a": "abcd", "b": "x"}}), "refused 422"),
        ("extra-c", json!({"extra": {"a": "x", "c": "y"}}), "refused 422"),
        (
            "all-wrong",
            json!({"simple": "R", "consistentHash": {"header": "h"}, "pace": {}, "extra": {"c": "y"}}),
            "refused 422",
        ),
        ("code-bracket", json!({"code": "a.b["}), "created"),
        ("code-x", json!({"code": "a.bx"}), "created"),
        ("code-any", json!({"code": "aXb["}), "refused 422"),
    ];
    for (name, spec, expected) in cases {
        let (got, theirs, ours) = installed.verdicts(&installed.object(name, spec)).await?;
        assert_eq!(got, expected, "{name}");
        assert_eq!(ours, theirs, "{name}: the runtime's causes and the server's");
    }
    installed.remove().await
}
