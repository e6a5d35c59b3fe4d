//! `list_type = "set"` on lists whose items are atomic but not scalars, as
//! kube-apiserver allows them: lists of lists, of int-or-string values and
//! of atomic structs. The CRD kube-codegen writes installs, and for each
//! object the runtime's validation gives the server's verdict and causes
//! (a repeated item is a duplicate, however it is spelled).

use anyhow::Result;
use codegen_testenv::TestEnv;
use serde_json::json;

#[path = "../support/generated_crd.rs"]
mod generated_crd;

const TYPES_RS: &str = r##"use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde::{Deserialize, Serialize};

/// A routing table.
#[genclient(no_status)]
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct Table {
    #[serde(flatten, default)]
    pub types: kube::core::TypeMeta,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: TableSpec,
}

/// The table.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct TableSpec {
    /// Routes, each a list of hops.
    #[serde(default)]
    #[validate(list_type = "set")]
    pub routes: Vec<Vec<String>>,
    /// Ports, by number or name.
    #[serde(default)]
    #[validate(list_type = "set")]
    pub ports: Vec<IntOrString>,
    /// Peers.
    #[serde(default)]
    #[validate(list_type = "set")]
    pub peers: Vec<Peer>,
}

/// A peer, compared whole.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[validate(map_type = "atomic")]
pub struct Peer {
    /// Its host.
    pub host: String,
    /// Its weight.
    #[serde(default)]
    pub weight: i32,
}
"##;

#[tokio::test]
async fn sets_of_atomic_items_install_and_validate_as_the_server_does() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let crd = generated_crd::generate(dir.path(), "sets", "sets.example.com", TYPES_RS, "sets.example.com_tables.yaml");
    let schema = serde_json::to_value(&crd.spec.versions[0].schema.as_ref().unwrap().open_api_v3_schema)?;
    let spec = &schema["properties"]["spec"]["properties"];
    for field in ["routes", "ports", "peers"] {
        assert_eq!(spec[field]["x-kubernetes-list-type"], "set", "{field}");
    }
    let installed = generated_crd::install(TestEnv::shared(), &crd, "sets").await?;
    let cases = [
        ("distinct", json!({"routes": [["a", "b"], ["b", "a"], []], "ports": [80, "80", "http"]}), "created"),
        ("same-route", json!({"routes": [["a", "b"], ["c"], ["a", "b"]]}), "refused 422"),
        ("same-port", json!({"ports": [80, "http", 80]}), "refused 422"),
        ("same-port-name", json!({"ports": ["http", "http"]}), "refused 422"),
        ("peers", json!({"peers": [{"host": "a"}, {"host": "a", "weight": 1}]}), "created"),
        ("same-peer", json!({"peers": [{"host": "a", "weight": 1}, {"weight": 1, "host": "a"}]}), "refused 422"),
    ];
    for (name, spec, expected) in cases {
        let (got, theirs, ours) = installed.verdicts(&installed.object(name, spec)).await?;
        assert_eq!(got, expected, "{name}: {theirs:?}");
        assert_eq!(ours, theirs, "{name}: the runtime's causes and the server's");
    }
    installed.remove().await
}
