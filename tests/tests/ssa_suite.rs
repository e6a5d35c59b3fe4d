//! One server-side apply suite, two servers: every scenario runs step by
//! step against the fake API server (`codegen_runtime::testing`, the
//! Widget CRD registered with the same `openAPIV3Schema`) and against the
//! real kube-apiserver of `codegen_testenv`, and after every step the two
//! must agree on
//!
//! - the response: the object (without uid, resourceVersion,
//!   creationTimestamp, generation and managedFields times; a Deployment
//!   as `project_deployment` shows it, since the API server defaults its
//!   Go type) or the failure `Status` (code, reason, message, details with
//!   causes),
//! - the object as a following GET returns it,
//! - `metadata.managedFields`: manager, operation, apiVersion, subresource,
//!   fieldsType, fieldsV1, and whether the entry has a time; each server's
//!   entries must be in the API server's order (operation, time, manager,
//!   apiVersion, subresource), which is compared as a rule because times
//!   differ between the two servers.
//!
//! Requests are raw HTTP (JSON bodies) through `kube::Client`, so both
//! servers see exactly the same bytes. Where the fake cannot match the real
//! server, the difference is listed in `KNOWN_DIFFERENCES` with its reason.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use codegen_runtime::testing::{FakeApiServer, ResourceInfo};
use codegen_testenv::TestEnv;
use http::Method;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, ServiceAccount};
use k8s_openapi::api::networking::v1::NetworkPolicy;
use serde_json::{Map, Value, json};

const GROUP: &str = "ssa.kube-codegen.test";
const API_VERSION: &str = "ssa.kube-codegen.test/v1";
const CRD_NAME: &str = "widgets.ssa.kube-codegen.test";
const FINALIZER: &str = "ssa.kube-codegen.test/hold";

/// Differences between the fake and the real server the suite accepts:
/// `(scenario, step, why)`; the test fails if one of them stops occurring.
const KNOWN_DIFFERENCES: &[(&str, usize, &str)] = &[
    (
        EMPTY_CONFIGMAP_DATA,
        0,
        "the API server decodes a ConfigMap into its Go type, whose `data` map is `omitempty`: an applied `data: {}` \
         is not stored; the fake has no Go types and stores it",
    ),
    (
        EMPTY_CONFIGMAP_DATA,
        1,
        "follows from step 0: on the API server `.data` is added again by the next apply, which conflicts with the \
         manager that applied `data: {}`; on the fake it is only modified",
    ),
];

const EMPTY_CONFIGMAP_DATA: &str = "an empty map in a built-in kind (known difference)";

/// The Widget's schema: scalars (string, integer, number, boolean), a
/// nested struct, a granular string map, an atomic map, a map of structs,
/// an atomic list, a set, list-maps keyed by one and by two keys (declared
/// out of alphabetical order), an int-or-string, a preserve-unknown-fields
/// object and an embedded resource; status with a list-map of conditions.
fn widget_schema() -> Value {
    let string = || json!({"type": "string"});
    let integer = || json!({"type": "integer"});
    json!({
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "replicas": integer(),
                    "paused": {"type": "boolean"},
                    "image": string(),
                    "ratio": {"type": "number"},
                    "nested": {"type": "object", "properties": {
                        "a": string(),
                        "b": integer(),
                        "deeper": {"type": "object", "properties": {"c": string(), "d": string()}}
                    }},
                    "labels": {"type": "object", "additionalProperties": string()},
                    "selector": {"type": "object", "additionalProperties": string(), "x-kubernetes-map-type": "atomic"},
                    "settings": {"type": "object", "additionalProperties": {
                        "type": "object", "properties": {"value": string(), "weight": integer()}
                    }},
                    "args": {"type": "array", "items": string()},
                    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": string()},
                    "ports": {
                        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "required": ["name"], "properties": {
                            "name": string(), "port": integer(), "protocol": string()
                        }}
                    },
                    "routes": {
                        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["path", "host"],
                        "items": {"type": "object", "required": ["host", "path"], "properties": {
                            "host": string(), "path": string(), "backend": string(), "weight": integer()
                        }}
                    },
                    "target": {"x-kubernetes-int-or-string": true},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "template": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": true,
                        "x-kubernetes-preserve-unknown-fields": true
                    }
                }
            },
            "status": {
                "type": "object",
                "properties": {
                    "phase": string(),
                    "ready": {"type": "boolean"},
                    "observed": integer(),
                    "conditions": {
                        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                        "items": {"type": "object", "required": ["type"], "properties": {
                            "type": string(), "status": string(), "reason": string()
                        }}
                    }
                }
            }
        }
    })
}

fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": CRD_NAME},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
            "versions": [{
                "name": "v1",
                "served": true,
                "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": widget_schema()}
            }]
        }
    })
}

fn widget_info() -> ResourceInfo {
    ResourceInfo {
        group: GROUP.into(),
        version: "v1".into(),
        kind: "Widget".into(),
        plural: "widgets".into(),
        namespaced: true,
        has_status_subresource: true,
        schema: None,
        validation: None,
        aggregated: false,
        scale: None,
    }
    .with_schema(widget_schema())
}

// ---------------------------------------------------------------- steps

/// The kinds the scenarios write.
#[derive(Clone, Copy, Debug)]
enum Kind {
    /// The Widget custom resource (schema above).
    Widget,
    /// A built-in kind: no schema on the fake.
    ConfigMap,
    /// A built-in kind with a list-map (`secrets`, by name, of atomic
    /// items) and an atomic list.
    ServiceAccount,
    /// A built-in kind with an atomic map (the `podSelector`).
    NetworkPolicy,
    /// A built-in kind with list-maps (containers by name, their ports by
    /// port and protocol, `TCP` by default) whose Go type the API server
    /// defaults: the objects are compared as [`project_deployment`] shows
    /// them, managedFields in full.
    Deployment,
}

impl Kind {
    fn collection(self, ns: &str) -> String {
        match self {
            Kind::Widget => format!("/apis/{API_VERSION}/namespaces/{ns}/widgets"),
            Kind::ConfigMap => format!("/api/v1/namespaces/{ns}/configmaps"),
            Kind::ServiceAccount => format!("/api/v1/namespaces/{ns}/serviceaccounts"),
            Kind::NetworkPolicy => format!("/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies"),
            Kind::Deployment => format!("/apis/apps/v1/namespaces/{ns}/deployments"),
        }
    }

    fn type_meta(self) -> (&'static str, &'static str) {
        match self {
            Kind::Widget => (API_VERSION, "Widget"),
            Kind::ConfigMap => ("v1", "ConfigMap"),
            Kind::ServiceAccount => ("v1", "ServiceAccount"),
            Kind::NetworkPolicy => ("networking.k8s.io/v1", "NetworkPolicy"),
            Kind::Deployment => ("apps/v1", "Deployment"),
        }
    }
}

/// Edits an object read with GET before it is PUT back.
type Edit = fn(&mut Value);

/// One request of a scenario.
#[derive(Clone)]
enum Step {
    /// `PATCH` with `application/apply-patch+yaml`: `body` gets apiVersion,
    /// kind and metadata.name added.
    Apply { manager: &'static str, force: bool, status: bool, body: Value },
    /// `PATCH` with `application/merge-patch+json` (an `Update`).
    Merge { manager: Option<&'static str>, status: bool, body: Value },
    /// `GET`, `edit`, `PUT` (an `Update`).
    Put { manager: &'static str, status: bool, edit: Edit },
    /// `POST` of `body` (apiVersion, kind, metadata.name added).
    Create { manager: &'static str, body: Value },
    /// A request sent as given: method, subresource, query, content type,
    /// body.
    Raw { method: Method, status: bool, query: &'static str, content_type: &'static str, body: Value },
}

fn apply(manager: &'static str, body: Value) -> Step {
    Step::Apply { manager, force: false, status: false, body }
}

fn apply_force(manager: &'static str, body: Value) -> Step {
    Step::Apply { manager, force: true, status: false, body }
}

fn apply_status(manager: &'static str, body: Value) -> Step {
    Step::Apply { manager, force: false, status: true, body }
}

fn apply_status_force(manager: &'static str, body: Value) -> Step {
    Step::Apply { manager, force: true, status: true, body }
}

fn merge(manager: &'static str, body: Value) -> Step {
    Step::Merge { manager: Some(manager), status: false, body }
}

fn merge_status(manager: &'static str, body: Value) -> Step {
    Step::Merge { manager: Some(manager), status: true, body }
}

fn put(manager: &'static str, edit: Edit) -> Step {
    Step::Put { manager, status: false, edit }
}

fn put_status(manager: &'static str, edit: Edit) -> Step {
    Step::Put { manager, status: true, edit }
}

fn create(manager: &'static str, body: Value) -> Step {
    Step::Create { manager, body }
}

fn raw_apply(query: &'static str, body: Value) -> Step {
    Step::Raw { method: Method::PATCH, status: false, query, content_type: "application/apply-patch+yaml", body }
}

fn spec(spec: Value) -> Value {
    json!({ "spec": spec })
}

/// A scenario: requests on one object, in order.
struct Scenario {
    name: &'static str,
    kind: Kind,
    object: &'static str,
    steps: Vec<Step>,
}

fn scenario(name: &'static str, kind: Kind, object: &'static str, steps: Vec<Step>) -> Scenario {
    Scenario { name, kind, object, steps }
}

fn scenarios() -> Vec<Scenario> {
    use Kind::{ConfigMap, Deployment, NetworkPolicy, ServiceAccount, Widget};
    let containers = |containers: Value| json!({"spec": {"template": {"spec": {"containers": containers}}}});
    // alpha's Deployment: a valid one, the selector matching the labels.
    let deployment = |containers: Value| {
        json!({"spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}}
        }})
    };
    vec![
        scenario(
            "two appliers share an object without clobbering each other",
            Widget,
            "shared",
            vec![
                apply(
                    "alpha",
                    json!({
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"replicas": 1, "image": "nginx", "labels": {"team": "a"},
                                 "ports": [{"name": "http", "port": 80}]}
                    }),
                ),
                apply(
                    "beta",
                    json!({
                        "metadata": {"annotations": {"note": "beta"}},
                        "spec": {"labels": {"tier": "b"}, "ports": [{"name": "metrics", "port": 9090}], "tags": ["blue"]}
                    }),
                ),
                // Re-applying the same configuration changes nothing.
                apply(
                    "alpha",
                    json!({
                        "metadata": {"labels": {"app": "web"}},
                        "spec": {"replicas": 1, "image": "nginx", "labels": {"team": "a"},
                                 "ports": [{"name": "http", "port": 80}]}
                    }),
                ),
                // beta stops applying its port and tags: only those go.
                apply(
                    "beta",
                    json!({"metadata": {"annotations": {"note": "beta"}}, "spec": {"labels": {"tier": "b"}}}),
                ),
            ],
        ),
        scenario(
            "the same value makes a co-owner, and a co-owned field outlives one owner",
            Widget,
            "same-value",
            vec![
                apply("alpha", spec(json!({"replicas": 2, "paused": false}))),
                apply("beta", spec(json!({"replicas": 2}))),
                apply("alpha", spec(json!({"paused": false}))),
                apply("beta", json!({})),
            ],
        ),
        scenario(
            "conflicts name the other managers; force takes their fields",
            Widget,
            "conflicts",
            vec![
                apply("alpha", spec(json!({"replicas": 1, "nested": {"a": "x", "b": 1}}))),
                apply("gamma", spec(json!({"image": "gamma"}))),
                apply("beta", spec(json!({"replicas": 2}))),
                apply("beta", spec(json!({"replicas": 2, "nested": {"a": "y"}}))),
                apply("beta", spec(json!({"replicas": 2, "image": "beta"}))),
                apply_force("beta", spec(json!({"replicas": 2, "image": "beta"}))),
                apply("alpha", spec(json!({"replicas": 1, "nested": {"a": "x", "b": 1}}))),
            ],
        ),
        scenario(
            "fields a manager stops applying go unless someone else owns them",
            Widget,
            "dropped",
            vec![
                apply(
                    "alpha",
                    spec(json!({
                        "labels": {"x": "1", "y": "2", "z": "3"},
                        "nested": {"a": "1", "deeper": {"c": "c", "d": "d"}},
                        "settings": {"s1": {"value": "v", "weight": 1}, "s2": {"value": "w"}},
                        "tags": ["p", "q"]
                    })),
                ),
                apply(
                    "beta",
                    spec(
                        json!({"labels": {"y": "2"}, "nested": {"deeper": {"d": "d"}}, "settings": {"s2": {"value": "w"}}}),
                    ),
                ),
                apply("alpha", spec(json!({"labels": {"x": "1"}}))),
                apply("beta", spec(json!({"labels": {"y": "2"}}))),
            ],
        ),
        scenario(
            "list-map keyed by one key: merge order, conflicts, removal",
            Widget,
            "ports",
            vec![
                apply(
                    "alpha",
                    spec(
                        json!({"ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}, {"name": "admin", "port": 8080}]}),
                    ),
                ),
                apply(
                    "beta",
                    spec(
                        json!({"ports": [{"name": "metrics", "port": 9090}, {"name": "admin", "port": 8080}, {"name": "http", "port": 80}]}),
                    ),
                ),
                apply("beta", spec(json!({"ports": [{"name": "http", "port": 81}]}))),
                apply("alpha", spec(json!({"ports": [{"name": "http", "port": 80}, {"name": "admin", "port": 8080}]}))),
                apply_force("beta", spec(json!({"ports": [{"name": "http", "port": 81, "protocol": "TCP"}]}))),
                apply("alpha", spec(json!({"ports": []}))),
            ],
        ),
        scenario(
            "list-map keyed by two keys",
            Widget,
            "routes",
            vec![
                apply(
                    "alpha",
                    spec(json!({"routes": [
                        {"host": "a.example", "path": "/", "backend": "web"},
                        {"host": "b.example", "path": "/api", "backend": "api", "weight": 1}
                    ]})),
                ),
                apply("beta", spec(json!({"routes": [{"host": "b.example", "path": "/api", "weight": 2}]}))),
                apply("beta", spec(json!({"routes": [{"host": "b.example", "path": "/v2", "backend": "v2"}]}))),
                apply(
                    "alpha",
                    spec(json!({"routes": [{"host": "b.example", "path": "/api", "backend": "api", "weight": 1}]})),
                ),
            ],
        ),
        scenario(
            "set: merged by value, items removed by their last owner",
            Widget,
            "tags",
            vec![
                apply("alpha", spec(json!({"tags": ["x", "y", "z"]}))),
                apply("beta", spec(json!({"tags": ["w", "z", "x"]}))),
                apply("alpha", spec(json!({"tags": ["z"]}))),
                apply("beta", spec(json!({"tags": []}))),
            ],
        ),
        scenario(
            "atomic list and atomic map are replaced as a whole",
            Widget,
            "atomic",
            vec![
                apply("alpha", spec(json!({"args": ["--a", "--b"], "selector": {"app": "web"}}))),
                apply("alpha", spec(json!({"args": ["--b"], "selector": {"app": "web"}}))),
                apply("beta", spec(json!({"args": ["--c"]}))),
                apply_force("beta", spec(json!({"args": ["--c"], "selector": {"app": "db", "tier": "x"}}))),
                apply("alpha", spec(json!({"selector": {"app": "web"}}))),
            ],
        ),
        scenario(
            "an update takes fields, and the applier then conflicts with it",
            Widget,
            "update-then-apply",
            vec![
                apply("alpha", spec(json!({"replicas": 1, "image": "v1", "labels": {"a": "1"}}))),
                merge("editor", spec(json!({"replicas": 3, "labels": {"e": "1"}}))),
                apply("alpha", spec(json!({"replicas": 1, "image": "v2", "labels": {"a": "1"}}))),
                apply("alpha", spec(json!({"image": "v2", "labels": {"a": "1"}}))),
                apply_force("alpha", spec(json!({"replicas": 5, "image": "v2", "labels": {"a": "1"}}))),
                put("updater", |obj| {
                    obj["spec"]["image"] = json!("v3");
                    if let Some(labels) = obj["spec"]["labels"].as_object_mut() {
                        labels.remove("a");
                    }
                }),
                apply("alpha", spec(json!({"replicas": 5, "image": "v2"}))),
            ],
        ),
        scenario(
            "status: its own managers, subresource recorded, the main resource ignores it",
            Widget,
            "status",
            vec![
                apply("alpha", spec(json!({"replicas": 1}))),
                apply_status(
                    "status-writer",
                    json!({
                        "metadata": {"labels": {"from": "status"}},
                        "spec": {"replicas": 9},
                        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}
                    }),
                ),
                apply("alpha", json!({"spec": {"replicas": 1}, "status": {"phase": "Ignored"}})),
                merge_status("status-updater", json!({"status": {"observed": 3}})),
                apply_status("other-status", json!({"status": {"phase": "Failed", "observed": 4}})),
                apply_status_force("other-status", json!({"status": {"phase": "Failed", "observed": 4}})),
                apply_status(
                    "status-writer",
                    json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
                ),
                put_status("status-putter", |obj| obj["status"]["ready"] = json!(true)),
                // An update of the main resource ignores status.
                put("main-putter", |obj| {
                    obj["status"]["phase"] = json!("Nope");
                    obj["spec"]["paused"] = json!(true);
                }),
            ],
        ),
        scenario(
            "apply creates a missing object, never through /status",
            Widget,
            "created",
            vec![
                apply_status("alpha", json!({"status": {"phase": "x"}})),
                raw_apply(
                    "fieldManager=alpha",
                    json!({"apiVersion": API_VERSION, "kind": "Widget", "metadata": {}, "spec": {"replicas": 1}}),
                ),
                apply(
                    "alpha",
                    json!({"metadata": {"labels": {"a": "b"}}, "spec": {"replicas": 1}, "status": {"phase": "dropped"}}),
                ),
                apply("alpha", json!({"metadata": {"labels": {"a": "b"}}, "spec": {"replicas": 1}})),
                apply("alpha", json!({"spec": {"replicas": 1}})),
            ],
        ),
        scenario(
            "int-or-string, preserve-unknown-fields, embedded resource, scalars",
            Widget,
            "leaves",
            vec![
                apply(
                    "alpha",
                    spec(json!({
                        "target": 5, "ratio": 0.5, "paused": true,
                        "extra": {"u": {"v": 1}, "w": [1, 2]},
                        "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}}, "spec": {"x": 1}}
                    })),
                ),
                apply("beta", spec(json!({"target": "50%"}))),
                apply(
                    "beta",
                    spec(json!({"extra": {"u": {"z": 2}}, "template": {"metadata": {"labels": {"c": "d"}}}})),
                ),
                apply(
                    "alpha",
                    spec(json!({"target": 5, "extra": {"w": [3]}, "template": {"apiVersion": "v1", "kind": "Pod"}})),
                ),
                merge("editor", spec(json!({"extra": {"w": [4], "u": {"z": 3}}, "ratio": 1.5}))),
                apply("alpha", spec(json!({"target": 5, "extra": {"w": [3]}, "ratio": 0.5}))),
            ],
        ),
        scenario(
            "an object created with POST, then applied and patched",
            Widget,
            "posted",
            vec![
                create(
                    "creator",
                    json!({
                        "metadata": {"labels": {"app": "x"}},
                        "spec": {"replicas": 1, "image": "i", "labels": {"a": "1"}, "ports": [{"name": "a", "port": 1}],
                                 "nested": {"deeper": {"c": "c"}}}
                    }),
                ),
                apply("alpha", spec(json!({"replicas": 2}))),
                apply("alpha", spec(json!({"replicas": 1, "image": "i"}))),
                merge("editor", spec(json!({"ports": [{"name": "a", "port": 2}], "nested": {"a": "n"}}))),
                apply_force("alpha", spec(json!({"replicas": 3}))),
            ],
        ),
        scenario(
            "managedFields sent by clients",
            Widget,
            "sent-fields",
            vec![
                apply("alpha", spec(json!({"replicas": 1, "image": "i"}))),
                apply("alpha", json!({"metadata": {"managedFields": []}, "spec": {"replicas": 1}})),
                merge(
                    "importer",
                    json!({
                        "metadata": {"managedFields": [{
                            "manager": "imported", "operation": "Update", "apiVersion": API_VERSION,
                            "time": "2024-01-01T00:00:00Z", "fieldsType": "FieldsV1",
                            "fieldsV1": {"f:spec": {"f:replicas": {}}}
                        }]},
                        "spec": {"paused": true}
                    }),
                ),
                // Entries that do not decode are ignored.
                merge(
                    "ignored",
                    json!({"metadata": {"managedFields": [{"manager": "x", "operation": "Bogus"}]}, "spec": {"ratio": 2.5}}),
                ),
                merge("resetter", json!({"metadata": {"managedFields": [{}]}})),
                merge("untracked", spec(json!({"image": "j"}))),
                apply("alpha", spec(json!({"image": "k"}))),
                apply_force("alpha", spec(json!({"image": "k"}))),
            ],
        ),
        scenario(
            "request errors",
            Widget,
            "errors",
            vec![
                apply("alpha", spec(json!({"replicas": 1}))),
                raw_apply("", json!({"apiVersion": API_VERSION, "kind": "Widget", "metadata": {"name": "errors"}})),
                Step::Raw {
                    method: Method::PATCH,
                    status: false,
                    query: "fieldManager=x&force=true",
                    content_type: "application/merge-patch+json",
                    body: json!({"spec": {"replicas": 2}}),
                },
                raw_apply("fieldManager=alpha", json!({"apiVersion": API_VERSION, "metadata": {"name": "errors"}})),
                raw_apply(
                    "fieldManager=alpha",
                    json!({"apiVersion": "ssa.kube-codegen.test/v2", "kind": "Widget", "metadata": {"name": "errors"}}),
                ),
                raw_apply(
                    "fieldManager=alpha",
                    json!({"apiVersion": API_VERSION, "kind": "Widget", "metadata": {"name": "other"}}),
                ),
                apply("alpha", spec(json!({"replicas": 1, "bogus": true}))),
                apply("alpha", spec(json!({"tags": ["x", "x"]}))),
                apply("alpha", spec(json!({"ports": [{"port": 1}]}))),
                apply("alpha", spec(json!({"labels": "not-a-map"}))),
                Step::Raw {
                    method: Method::PATCH,
                    status: false,
                    query: "fieldManager=a%09b",
                    content_type: "application/merge-patch+json",
                    body: json!({"spec": {"replicas": 2}}),
                },
            ],
        ),
        scenario(
            "a built-in kind without a schema: ConfigMap",
            ConfigMap,
            "config",
            vec![
                create("creator", json!({"metadata": {"labels": {"app": "x"}}, "data": {"a": "1"}})),
                apply(
                    "ctrl",
                    json!({
                        "metadata": {
                            "labels": {"app": "x"},
                            "annotations": {"note": "1"},
                            "finalizers": [FINALIZER],
                            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner",
                                                 "uid": "00000000-0000-0000-0000-000000000001", "controller": true}]
                        },
                        "data": {"a": "1", "b": "2"}
                    }),
                ),
                merge("editor", json!({"data": {"a": "9"}})),
                apply("ctrl", json!({"metadata": {"labels": {"app": "x"}}, "data": {"a": "1", "b": "2"}})),
                apply(
                    "ctrl",
                    json!({
                        "metadata": {"labels": {"app": "x"}, "finalizers": [FINALIZER]},
                        "data": {"b": "3"},
                        "binaryData": {"bin": "AAAA"}
                    }),
                ),
                put("putter", |obj| obj["data"]["c"] = json!("4")),
                // No fieldManager: the User-Agent names the manager.
                Step::Merge { manager: None, status: false, body: json!({"data": {"d": "5"}}) },
                apply("ctrl", json!({"data": {"b": "3"}, "immutable": false})),
            ],
        ),
        scenario(
            "an empty metadata map is not stored, but its applier owns it",
            Widget,
            "empty-labels",
            vec![
                apply("beta", json!({"metadata": {"labels": {}, "annotations": {"a": "b"}}})),
                apply("alpha", json!({"metadata": {"labels": {"x": "1"}}})),
                apply_force("alpha", json!({"metadata": {"labels": {"x": "1"}}})),
            ],
        ),
        scenario(
            "a metadata map emptied by apply disappears",
            Widget,
            "emptied-labels",
            vec![
                create("creator", json!({"metadata": {"labels": {"a": "1"}}})),
                apply("ctrl", json!({"metadata": {"labels": {"x": "1"}}})),
                merge("editor", json!({"metadata": {"labels": {"a": null}}})),
                apply("ctrl", json!({})),
            ],
        ),
        scenario(
            "a map of a built-in kind emptied by apply disappears",
            ConfigMap,
            "emptied-data",
            vec![
                create("creator", json!({"data": {"a": "1"}})),
                apply("ctrl", json!({"data": {"x": "1"}})),
                merge("editor", json!({"data": {"a": null}})),
                apply("ctrl", json!({})),
            ],
        ),
        scenario(
            EMPTY_CONFIGMAP_DATA,
            ConfigMap,
            "empty-data",
            vec![apply("beta", json!({"data": {}})), apply("alpha", json!({"data": {"x": "1"}}))],
        ),
        scenario(
            "a list-map of a built-in kind: a ServiceAccount's secrets by name",
            ServiceAccount,
            "robot",
            vec![
                apply("alpha", json!({"secrets": [{"name": "a"}], "imagePullSecrets": [{"name": "p"}]})),
                // Another item of the list-map: no conflict. (The API
                // server keeps only the names of secret references, so the
                // items applied name no namespace but in a conflict.)
                apply("beta", json!({"secrets": [{"name": "b"}]})),
                // The same item: its fields are one atomic value alpha owns.
                apply("beta", json!({"secrets": [{"name": "a", "namespace": "y"}]})),
                apply("gamma", json!({"imagePullSecrets": [{"name": "q"}]})),
                Step::Raw {
                    method: Method::PATCH,
                    status: false,
                    query: "fieldManager=editor",
                    content_type: "application/strategic-merge-patch+json",
                    body: json!({"secrets": [{"name": "c"}]}),
                },
                // alpha no longer applies secret a: it goes, b and c stay.
                apply("alpha", json!({"imagePullSecrets": [{"name": "p"}]})),
                apply_force("gamma", json!({"imagePullSecrets": [{"name": "q"}]})),
            ],
        ),
        scenario(
            "an atomic map of a built-in kind: a NetworkPolicy's podSelector",
            NetworkPolicy,
            "policy",
            vec![
                apply(
                    "alpha",
                    json!({"spec": {"podSelector": {"matchLabels": {"app": "a"}}, "policyTypes": ["Ingress"]}}),
                ),
                apply("beta", json!({"spec": {"podSelector": {"matchLabels": {"tier": "b"}}}})),
                apply("beta", json!({"spec": {"podSelector": {"matchLabels": {"app": "a"}}}})),
                apply_force("beta", json!({"spec": {"podSelector": {"matchLabels": {"tier": "b"}}}})),
                apply(
                    "alpha",
                    json!({"spec": {"policyTypes": ["Ingress"],
                                    "ingress": [{"from": [{"podSelector": {"matchLabels": {"x": "1"}}}]}]}}),
                ),
                merge(
                    "editor",
                    json!({"spec": {"podSelector": {"matchExpressions": [
                        {"key": "env", "operator": "In", "values": ["prod"]}
                    ]}}}),
                ),
                apply("beta", json!({"spec": {"podSelector": {"matchLabels": {"tier": "b"}}}})),
            ],
        ),
        scenario(
            "list-maps of a built-in kind with a defaulted key: a Deployment's containers and ports",
            Deployment,
            "web",
            vec![
                apply(
                    "alpha",
                    deployment(json!([{"name": "app", "image": "busybox:1", "ports": [{"containerPort": 80}]}])),
                ),
                // Another container: another item, no conflict.
                apply("beta", containers(json!([{"name": "sidecar", "image": "busybox:2"}]))),
                // alpha's port, its protocol left to the default: the same
                // item, whose name beta adds and whose keys it co-owns.
                apply(
                    "beta",
                    containers(json!([
                        {"name": "sidecar", "image": "busybox:2"},
                        {"name": "app", "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}]}
                    ])),
                ),
                // The same port over UDP is another item.
                apply(
                    "beta",
                    containers(json!([
                        {"name": "sidecar", "image": "busybox:2"},
                        {"name": "app", "ports": [
                            {"containerPort": 80, "protocol": "TCP", "name": "http"},
                            {"containerPort": 80, "protocol": "UDP", "name": "dns"}
                        ]}
                    ])),
                ),
                apply("gamma", containers(json!([{"name": "app", "ports": [{"containerPort": 80, "name": "web"}]}]))),
                // alpha stops applying the port: beta still owns it.
                apply("alpha", deployment(json!([{"name": "app", "image": "busybox:1"}]))),
                apply("beta", containers(json!([{"name": "sidecar", "image": "busybox:2"}]))),
            ],
        ),
        scenario("at most ten Update managers; older ones become ancient-changes", ConfigMap, "capped", {
            let mut steps = vec![apply("ctrl", json!({"data": {"base": "1"}}))];
            for (i, manager) in ["u00", "u01", "u02", "u03", "u04", "u05", "u06", "u07", "u08", "u09", "u10", "u11"]
                .into_iter()
                .enumerate()
            {
                let mut labels = Map::new();
                labels.insert(format!("k{i}"), json!("v"));
                steps.push(merge(manager, json!({"metadata": {"labels": labels}})));
            }
            steps
        }),
    ]
}

// ------------------------------------------------------------- requests

/// Sends a request and returns `(code, JSON body)`.
async fn send(
    client: &kube::Client,
    method: Method,
    uri: &str,
    content_type: Option<&str>,
    body: Option<&Value>,
) -> Result<(u16, Value)> {
    let mut builder = http::Request::builder().method(method).uri(uri);
    if let Some(ct) = content_type {
        builder = builder.header(http::header::CONTENT_TYPE, ct);
    }
    let bytes = body.map(serde_json::to_vec).transpose()?.unwrap_or_default();
    let request = builder.body(kube::client::Body::from(bytes))?;
    let response = client.send(request).await.with_context(|| format!("sending to {uri}"))?;
    let code = response.status().as_u16();
    let bytes = response.into_body().collect_bytes().await?;
    let value = serde_json::from_slice(&bytes).with_context(|| String::from_utf8_lossy(&bytes).into_owned())?;
    Ok((code, value))
}

/// `body` with apiVersion, kind and metadata.name.
fn full_object(kind: Kind, name: &str, body: &Value) -> Value {
    let (api_version, kind) = kind.type_meta();
    let mut obj = body.as_object().cloned().unwrap_or_default();
    obj.insert("apiVersion".into(), api_version.into());
    obj.insert("kind".into(), kind.into());
    let meta = obj.entry("metadata").or_insert_with(|| json!({}));
    if let Some(meta) = meta.as_object_mut() {
        meta.insert("name".into(), name.into());
    }
    Value::Object(obj)
}

fn query_string(manager: Option<&str>, force: bool) -> String {
    let mut params = Vec::new();
    if let Some(m) = manager {
        params.push(format!("fieldManager={m}"));
    }
    if force {
        params.push("force=true".to_owned());
    }
    if params.is_empty() { String::new() } else { format!("?{}", params.join("&")) }
}

/// Runs one step; returns the response `(code, body)`.
async fn run_step(client: &kube::Client, ns: &str, sc: &Scenario, step: &Step) -> Result<(u16, Value)> {
    let item = format!("{}/{}", sc.kind.collection(ns), sc.object);
    let path = |status: bool| if status { format!("{item}/status") } else { item.clone() };
    match step {
        Step::Apply { manager, force, status, body } => {
            let uri = format!("{}{}", path(*status), query_string(Some(manager), *force));
            let body = full_object(sc.kind, sc.object, body);
            send(client, Method::PATCH, &uri, Some("application/apply-patch+yaml"), Some(&body)).await
        }
        Step::Merge { manager, status, body } => {
            let uri = format!("{}{}", path(*status), query_string(*manager, false));
            send(client, Method::PATCH, &uri, Some("application/merge-patch+json"), Some(body)).await
        }
        Step::Put { manager, status, edit } => {
            let (code, mut obj) = send(client, Method::GET, &item, None, None).await?;
            if code != 200 {
                return Ok((code, obj));
            }
            edit(&mut obj);
            let uri = format!("{}{}", path(*status), query_string(Some(manager), false));
            send(client, Method::PUT, &uri, Some("application/json"), Some(&obj)).await
        }
        Step::Create { manager, body } => {
            let uri = format!("{}{}", sc.kind.collection(ns), query_string(Some(manager), false));
            let body = full_object(sc.kind, sc.object, body);
            send(client, Method::POST, &uri, Some("application/json"), Some(&body)).await
        }
        Step::Raw { method, status, query, content_type, body } => {
            let uri = if query.is_empty() { path(*status) } else { format!("{}?{query}", path(*status)) };
            send(client, method.clone(), &uri, Some(content_type), Some(body)).await
        }
    }
}

// ------------------------------------------------------------ comparing

fn seconds(time: Option<&Value>) -> i64 {
    time.and_then(Value::as_str)
        .and_then(|t| t.parse::<k8s_openapi::jiff::Timestamp>().ok())
        .map_or(0, |t| t.as_second())
}

/// Checks that managedFields are in the API server's order: operation,
/// time (seconds, none first), manager, apiVersion, subresource.
fn check_entry_order(entries: &[Value]) -> Result<(), String> {
    let key = |e: &Value| {
        let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
        (s("operation"), seconds(e.get("time")), s("manager"), s("apiVersion"), s("subresource"))
    };
    for pair in entries.windows(2) {
        if key(&pair[0]) > key(&pair[1]) {
            return Err(format!("managedFields out of order: {} before {}", pair[0], pair[1]));
        }
    }
    Ok(())
}

/// What of a Deployment is compared: the API server defaults its Go type
/// (replicas, strategy, the pod's policies, each port's protocol...), the
/// fake does not; the selector, and each container's name, image and
/// ports without their protocol are compared.
fn project_deployment(obj: &mut Value) {
    let spec = obj.get("spec").cloned().unwrap_or(Value::Null);
    let containers: Vec<Value> = spec
        .pointer("/template/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            let ports: Vec<Value> = c
                .get("ports")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|p| json!({"containerPort": p.get("containerPort"), "name": p.get("name")}))
                .collect();
            json!({"name": c.get("name"), "image": c.get("image"), "ports": ports})
        })
        .collect();
    if let Some(obj) = obj.as_object_mut() {
        obj.remove("status");
        obj.insert("spec".into(), json!({"selector": spec.get("selector"), "containers": containers}));
    }
}

/// The parts of a response both servers must agree on.
fn normalize(kind: Kind, code: u16, body: &Value) -> Result<Value, String> {
    if body.get("kind").and_then(Value::as_str) == Some("Status") {
        let mut details = body.get("details").cloned().unwrap_or(Value::Null);
        // The API server lists the causes of several managers in map order.
        if let Some(causes) = details.get_mut("causes").and_then(Value::as_array_mut) {
            causes.sort_by_key(|c| c.to_string());
        }
        return Ok(json!({
            "code": code,
            "status": body.get("status"),
            "reason": body.get("reason"),
            "message": body.get("message"),
            "details": details,
        }));
    }
    let mut obj = body.clone();
    if matches!(kind, Kind::Deployment) {
        project_deployment(&mut obj);
    }
    let meta = obj.get_mut("metadata").and_then(Value::as_object_mut).ok_or("no metadata")?;
    for server_set in ["uid", "resourceVersion", "creationTimestamp", "generation"] {
        meta.remove(server_set);
    }
    if let Some(Value::Array(entries)) = meta.get_mut("managedFields") {
        check_entry_order(entries)?;
        let mut normalized: Vec<Value> = entries
            .iter()
            .map(|e| {
                let mut e: Map<String, Value> = e.as_object().cloned().unwrap_or_default();
                let timed = e.remove("time").is_some();
                e.insert("timed".into(), timed.into());
                Value::Object(e)
            })
            .collect();
        normalized.sort_by_key(|e| {
            let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default().to_owned();
            (s("operation"), s("manager"), s("apiVersion"), s("subresource"))
        });
        *entries = normalized;
    }
    Ok(json!({"code": code, "object": obj}))
}

/// What one server showed after one step: the response and a GET.
async fn observe(client: &kube::Client, ns: &str, sc: &Scenario, step: &Step) -> Result<Value> {
    let (code, response) = run_step(client, ns, sc, step).await?;
    let item = format!("{}/{}", sc.kind.collection(ns), sc.object);
    let (get_code, state) = send(client, Method::GET, &item, None, None).await?;
    let response = normalize(sc.kind, code, &response).map_err(anyhow::Error::msg)?;
    let state = normalize(sc.kind, get_code, &state).map_err(anyhow::Error::msg)?;
    Ok(json!({"response": response, "state": state}))
}

/// Runs every scenario on both servers; returns the steps where they
/// differ as `(scenario, step, fake, real)`.
async fn differences(fake: &kube::Client, real: &kube::Client, ns: &str) -> Result<Vec<(String, usize, Value, Value)>> {
    let mut out = Vec::new();
    for sc in scenarios() {
        for (i, step) in sc.steps.iter().enumerate() {
            let on_fake = observe(fake, ns, &sc, step).await.with_context(|| format!("{} step {i} (fake)", sc.name))?;
            let on_real = observe(real, ns, &sc, step).await.with_context(|| format!("{} step {i} (real)", sc.name))?;
            if on_fake != on_real {
                out.push((sc.name.to_owned(), i, on_fake, on_real));
            }
        }
    }
    Ok(out)
}

async fn install_widget_crd(env: &TestEnv) -> Result<()> {
    let client = env.admin_client().await?;
    let uri =
        format!("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD_NAME}?fieldManager=ssa-suite&force=true");
    let (code, body) =
        send(&client, Method::PATCH, &uri, Some("application/apply-patch+yaml"), Some(&widget_crd())).await?;
    if code >= 300 {
        bail!("installing the Widget CRD: {code} {body}");
    }
    env.wait_crd_established(CRD_NAME, Duration::from_secs(60)).await
}

/// Waits until widgets can be listed in `ns` (the CRD's handler is up).
async fn wait_served(client: &kube::Client, ns: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (code, body) = send(client, Method::GET, &Kind::Widget.collection(ns), None, None).await?;
        if code == 200 {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("widgets not served: {code} {body}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test]
async fn fake_and_real_server_agree_on_server_side_apply() -> Result<()> {
    let env = TestEnv::shared();
    install_widget_crd(env).await?;
    let ns = env.create_namespace("ssa").await?;
    let real = env.admin_client().await?;
    wait_served(&real, &ns).await?;

    let server = FakeApiServer::new();
    server.register_resource(widget_info());
    server.register::<ConfigMap>();
    server.register::<ServiceAccount>();
    server.register::<NetworkPolicy>();
    server.register::<Deployment>();
    let fake = server.client();

    let found = differences(&fake, &real, &ns).await?;
    let mut unexpected = Vec::new();
    let mut seen: BTreeMap<(&str, usize), bool> = KNOWN_DIFFERENCES.iter().map(|(s, i, _)| ((*s, *i), false)).collect();
    for (name, step, on_fake, on_real) in &found {
        match seen.get_mut(&(name.as_str(), *step)) {
            Some(hit) => *hit = true,
            None => unexpected.push(format!(
                "{name}, step {step}:\n  fake: {}\n  real: {}",
                serde_json::to_string_pretty(on_fake)?,
                serde_json::to_string_pretty(on_real)?
            )),
        }
    }
    let stale: Vec<String> =
        seen.iter().filter(|(_, hit)| !**hit).map(|((name, step), _)| format!("{name}, step {step}")).collect();
    assert!(unexpected.is_empty(), "the fake differs from kube-apiserver:\n{}", unexpected.join("\n\n"));
    assert!(stale.is_empty(), "listed differences no longer occur: {stale:?}");
    Ok(())
}

/// The suite's scenarios cover what they claim to: a few properties of the
/// fake alone, so that agreement with the real server is agreement on
/// something.
#[tokio::test]
async fn the_scenarios_exercise_ownership() -> Result<()> {
    let server = FakeApiServer::new();
    server.register_resource(widget_info());
    server.register::<ConfigMap>();
    server.register::<ServiceAccount>();
    server.register::<NetworkPolicy>();
    server.register::<Deployment>();
    let client = server.client();
    let ns = "coverage";
    let mut codes = BTreeMap::<u16, usize>::new();
    let mut messages = Vec::new();
    for sc in scenarios() {
        for step in &sc.steps {
            let (code, body) = run_step(&client, ns, &sc, step).await?;
            *codes.entry(code).or_default() += 1;
            if let Some(m) = body.get("message").and_then(Value::as_str) {
                messages.push(m.to_owned());
            }
        }
    }
    for code in [200, 201, 400, 404, 409, 422, 500] {
        assert!(codes.contains_key(&code), "no step answered {code}: {codes:?}");
    }
    for expected in [
        "Apply failed with 1 conflict: conflict with \"alpha\": .spec.replicas",
        "conflicts with \"gamma\":",
        "conflict with \"editor\" using ssa.kube-codegen.test/v1: .spec.replicas",
        "with subresource \"status\"",
        "conflict with \"before-first-apply\"",
        "conflict with \"editor\" using v1: .data.a",
        ".spec.routes[host=\"b.example\",path=\"/api\"].weight",
        "conflict with \"alpha\": .secrets[name=\"a\"]",
        "conflict with \"alpha\": .spec.podSelector",
        ".spec.template.spec.containers[name=\"app\"].ports[containerPort=80,protocol=\"TCP\"].name",
    ] {
        assert!(messages.iter().any(|m| m.contains(expected)), "no message contains {expected:?}: {messages:#?}");
    }
    let (_, capped) =
        send(&client, Method::GET, &format!("{}/capped", Kind::ConfigMap.collection(ns)), None, None).await?;
    let managers: Vec<&str> = capped["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["manager"].as_str())
        .collect();
    assert!(managers.contains(&"ancient-changes"), "{managers:?}");
    Ok(())
}
