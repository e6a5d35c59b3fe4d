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

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use codegen_core::{GeneratorKind, GroupVersions, Mode, Settings};
use codegen_testenv::TestEnv;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use serde_json::json;

const MOD_RS: &str = "codegen_macros::group_name!(\"oneof.example.com\");\n\nmod types;\npub use types::*;\n";

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

fn generate(root: &Path) -> CustomResourceDefinition {
    let dir = root.join("apis/oneof/v1");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mod.rs"), MOD_RS).unwrap();
    std::fs::write(dir.join("types.rs"), TYPES_RS).unwrap();
    let settings = Settings::new(root.join("apis"))
        .with_output_dir(root.join("client"))
        .with_crd_dir(root.join("crd"))
        .with_generators([GeneratorKind::Crd])
        .with_group(GroupVersions::parse("oneof:v1").unwrap());
    if let Err(diags) = codegen_core::run(&settings, Mode::Write) {
        panic!("{}", codegen_core::diag::render_all(&diags));
    }
    let text = std::fs::read_to_string(root.join("crd/oneof.example.com_policies.yaml")).unwrap();
    serde_yaml::from_str(&text).unwrap()
}

#[tokio::test]
async fn a_flattened_optional_enum_gives_at_most_one_variant() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let crd = generate(dir.path());
    let env = TestEnv::shared();
    let client = env.admin_client().await?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let _ = crds.delete("policies.oneof.example.com", &Default::default()).await;
    let mut created = None;
    for _ in 0..50 {
        match crds.create(&PostParams::default(), &crd).await {
            Ok(c) => {
                created = Some(c);
                break;
            }
            // The deletion of an earlier run's CRD may still be going on.
            Err(kube::Error::Api(s)) if s.code == 409 => tokio::time::sleep(Duration::from_millis(200)).await,
            Err(e) => return Err(e.into()),
        }
    }
    assert!(created.is_some(), "the CRD is created");
    env.wait_crd_established("policies.oneof.example.com", Duration::from_secs(60)).await?;
    let ns = env.create_namespace("oneof").await?;
    let gvk = GroupVersionKind::gvk("oneof.example.com", "v1", "Policy");
    let api: Api<DynamicObject> = Api::namespaced_with(client, &ns, &ApiResource::from_gvk(&gvk));
    let object = |name: &str, spec: serde_json::Value| -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "oneof.example.com/v1",
            "kind": "Policy",
            "metadata": {"name": name},
            "spec": spec,
        }))
        .unwrap()
    };
    let pp = PostParams { dry_run: true, ..Default::default() };
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
    // The schema as generated `validate()` has it: with the patterns'
    // Rust spellings.
    let mut schema = serde_json::to_value(&crd.spec.versions[0].schema.as_ref().unwrap().open_api_v3_schema)?;
    codegen_core::emit::validate::add_rust_patterns(&mut schema);
    let schema: &'static str = Box::leak(schema.to_string().into_boxed_str());
    for (name, spec, expected) in cases {
        let object = object(name, spec);
        let (got, theirs) = match api.create(&pp, &object).await {
            Ok(_) => ("created".to_string(), Vec::new()),
            Err(kube::Error::Api(s)) => {
                let causes = s.details.map(|d| d.causes).unwrap_or_default();
                let causes: Vec<_> = causes.into_iter().map(|c| (c.field, c.reason, c.message)).collect();
                (format!("refused {}", s.code), causes)
            }
            Err(e) => (format!("error {e}"), Vec::new()),
        };
        assert_eq!(got, expected, "{name}");
        let ours: Vec<_> = match codegen_runtime::validation::validate_value(serde_json::to_value(&object)?, schema) {
            Ok(()) => Vec::new(),
            Err(errors) => errors.0.into_iter().map(|e| (e.field, e.reason.to_string(), e.message)).collect(),
        };
        let sorted = |mut v: Vec<(String, String, String)>| {
            v.sort();
            v
        };
        assert_eq!(sorted(ours), sorted(theirs), "{name}: the runtime's causes and the server's");
    }
    crds.delete("policies.oneof.example.com", &Default::default()).await?;
    Ok(())
}
