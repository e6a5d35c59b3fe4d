//! `config/webhook/manifests.yaml`: the MutatingWebhookConfiguration and
//! ValidatingWebhookConfiguration of the kinds with
//! `#[resource(mutating_webhook)]` / `#[resource(validating_webhook)]`, as
//! controller-gen's webhook generator writes them (one configuration of
//! each, `mutating-webhook-configuration` and
//! `validating-webhook-configuration`, every webhook behind the Service
//! `webhook-service` in `system`; kustomize and cert-manager adjust that
//! Service and inject the CA bundle at deployment).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::markers::AdmissionWebhook;
use crate::model::{Group, Kind, Model, Version};
use crate::write::{GENERATED_MARKER_YAML, GeneratedFile, with_header};

/// The webhook of `kind` in `version` of `group`: `m` or `v` as prefix,
/// `mutate` or `validate` as path prefix.
fn webhook(group: &Group, version: &Version, kind: &Kind, marker: &AdmissionWebhook, mutating: bool) -> Value {
    let lower = kind.kind.to_lowercase();
    let path = marker.path.as_ref().map_or_else(
        || {
            let verb = if mutating { "mutate" } else { "validate" };
            format!("/{verb}-{}-{}-{lower}", group.name.replace('.', "-"), version.name)
        },
        |p| p.value.clone(),
    );
    let name = marker.name.as_ref().map_or_else(
        || format!("{}{lower}-{}.{}", if mutating { "m" } else { "v" }, version.name, group.name),
        |n| n.value.clone(),
    );
    let operations = marker.operations();
    json!({
        "admissionReviewVersions": ["v1"],
        "clientConfig": {"service": {"name": "webhook-service", "namespace": "system", "path": path}},
        "failurePolicy": marker.failure_policy.as_ref().map_or("Fail", |p| p.value.as_str()),
        "name": name,
        "rules": [{
            "apiGroups": [group.name],
            "apiVersions": [version.name],
            "operations": operations,
            "resources": [kind.plural],
        }],
        "sideEffects": "None",
    })
}

/// The directory of the manifests file: `webhook/` beside the CRD
/// directory. The generator owns it: a generated file there that is no
/// longer written (the markers are gone) is removed.
pub fn dir(crd_dir: &Path) -> PathBuf {
    crd_dir.parent().unwrap_or(Path::new(".")).join("webhook")
}

/// The manifests file, when a kind has an admission webhook marker.
pub fn generate(model: &Model, crd_dir: &Path, header: Option<&str>) -> Option<GeneratedFile> {
    let (mut mutating, mut validating) = (Vec::new(), Vec::new());
    for group in &model.groups {
        for version in &group.versions {
            for kind in &version.kinds {
                if let Some(m) = &kind.mutating_webhook {
                    mutating.push(webhook(group, version, kind, m, true));
                }
                if let Some(v) = &kind.validating_webhook {
                    validating.push(webhook(group, version, kind, v, false));
                }
            }
        }
    }
    if mutating.is_empty() && validating.is_empty() {
        return None;
    }
    let mut out = with_header(GENERATED_MARKER_YAML, "#", header, "");
    for (kind, name, mut webhooks) in [
        ("MutatingWebhookConfiguration", "mutating-webhook-configuration", mutating),
        ("ValidatingWebhookConfiguration", "validating-webhook-configuration", validating),
    ] {
        if webhooks.is_empty() {
            continue;
        }
        webhooks.sort_by(|a, b| a["name"].as_str().cmp(&b["name"].as_str()));
        let doc = json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": kind,
            "metadata": {"name": name},
            "webhooks": webhooks,
        });
        out.push_str("---\n");
        out = super::yaml::append(out, &doc);
    }
    Some(GeneratedFile { path: dir(crd_dir).join("manifests.yaml"), contents: out })
}
