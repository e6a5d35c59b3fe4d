//! The custom kind of the informer_sync benchmark, shared by the bench
//! (`tests/benches/informer_sync.rs`, which creates the objects and sends
//! the updates) and its child (`tests/src/bin/informer_sync_child.rs`,
//! which syncs them).

use std::borrow::Cow;

use k8s_openapi::NamespaceResourceScope;
use kube::api::ObjectMeta;
use serde::{Deserialize, Serialize};

pub const GROUP: &str = "bench.kube-codegen.dev";
/// Widgets of the sync benchmark.
pub const OBJECTS: usize = 10_000;
/// Updates of the delivery benchmark.
pub const LATENCY_UPDATES: usize = 1_000;
/// The annotation carrying an update's send time, Unix nanoseconds.
pub const SENT_ANNOTATION: &str = "bench.kube-codegen.dev/sent";

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Widget {
    pub api_version: String,
    pub kind: String,
    pub metadata: ObjectMeta,
    pub spec: WidgetSpec,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSpec {
    pub owner: String,
    pub replicas: i64,
    pub tags: Vec<String>,
}

impl kube::Resource for Widget {
    type DynamicType = ();
    type Scope = NamespaceResourceScope;

    fn kind(_: &()) -> Cow<'_, str> {
        "Widget".into()
    }
    fn group(_: &()) -> Cow<'_, str> {
        GROUP.into()
    }
    fn version(_: &()) -> Cow<'_, str> {
        "v1".into()
    }
    fn plural(_: &()) -> Cow<'_, str> {
        "widgets".into()
    }
    fn meta(&self) -> &ObjectMeta {
        &self.metadata
    }
    fn meta_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}
