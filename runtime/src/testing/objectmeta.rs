//! The API server's checks of `metadata` on every write, whatever the kind
//! (apimachinery's `ValidateObjectMeta` and `ValidateObjectMetaUpdate`):
//! names, label and annotation keys and values, owner references and
//! finalizers. A violation is a 422 with one cause per field, as there.

use serde_json::{Map, Value};

use super::ResourceInfo;

/// One cause of a 422: `(reason, field, message)`.
pub(crate) type Cause = (&'static str, String, String);

/// The most annotation bytes (keys and values) an object may carry.
const MAX_ANNOTATION_BYTES: usize = 256 * 1024;
/// Names are cut to this many bytes before a `generateName` suffix of five.
pub(crate) const MAX_GENERATED_PREFIX: usize = 63 - 5;

const DNS_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS_LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_RULE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// The checks of `object`'s metadata, on a create or an update.
pub(crate) fn validate(info: &ResourceInfo, object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let empty = Map::new();
    let meta = object.get("metadata").and_then(Value::as_object).unwrap_or(&empty);
    let text = |key: &str| meta.get(key).and_then(Value::as_str).unwrap_or_default();
    let name = text("name");
    let problems = match (info.group.as_str(), info.kind.as_str()) {
        // Namespaces, Services and StatefulSets are DNS labels.
        ("", "Namespace" | "Service") | ("apps", "StatefulSet") => name_problems(name, true),
        // Roles and their bindings: anything that fits in a URL path.
        ("rbac.authorization.k8s.io", "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding") => {
            path_segment_problems(name)
        }
        // Every other kind (custom resources, ConfigMaps, Secrets, ...).
        _ => name_problems(name, false),
    };
    for why in problems {
        causes.push(invalid("metadata.name", &quoted(name), &why));
    }
    if let Some(labels) = meta.get("labels").and_then(Value::as_object) {
        for (key, value) in labels {
            for why in qualified_name_problems(key) {
                causes.push(invalid("metadata.labels", &quoted(key), &why));
            }
            let value = value.as_str().unwrap_or_default();
            if value.len() > 63 {
                causes.push(invalid("metadata.labels", &quoted(value), &max_len(63)));
            }
            if !value.is_empty() && !is_qualified_part(value) {
                causes.push(invalid("metadata.labels", &quoted(value), LABEL_VALUE));
            }
        }
    }
    if let Some(annotations) = meta.get("annotations").and_then(Value::as_object) {
        let mut total = 0;
        for (key, value) in annotations {
            total += key.len() + value.as_str().map_or(0, str::len);
            for why in qualified_name_problems(&key.to_ascii_lowercase()) {
                causes.push(invalid("metadata.annotations", &quoted(key), &why));
            }
        }
        if total > MAX_ANNOTATION_BYTES {
            causes.push((
                "FieldValueTooLong",
                "metadata.annotations".into(),
                format!("Too long: may not be more than {MAX_ANNOTATION_BYTES} bytes"),
            ));
        }
    }
    if let Some(refs) = meta.get("ownerReferences").and_then(Value::as_array) {
        let mut controllers = Vec::new();
        for (i, r) in refs.iter().enumerate() {
            let field = |key: &str| r.get(key).and_then(Value::as_str).unwrap_or_default();
            let at = |key: &str| format!("metadata.ownerReferences[{i}].{key}");
            for key in ["apiVersion", "kind", "name", "uid"] {
                if field(key).is_empty() {
                    causes.push(("FieldValueRequired", at(key), "Required value: must not be empty".into()));
                }
            }
            if r.get("controller").and_then(Value::as_bool) == Some(true) {
                controllers.push(format!("{}/{}", field("kind"), field("name")));
            }
        }
        if controllers.len() > 1 {
            causes.push(invalid(
                "metadata.ownerReferences",
                &owner_references(refs),
                &format!(
                    "Only one reference can have Controller set to true. Found \"true\" in references for {}",
                    controllers.join(" and ")
                ),
            ));
        }
    }
    if let Some(finalizers) = meta.get("finalizers").and_then(Value::as_array) {
        for f in finalizers {
            let f = f.as_str().unwrap_or_default();
            for why in qualified_name_problems(f) {
                causes.push(invalid("metadata.finalizers", &quoted(f), &why));
            }
        }
    }
    causes
}

/// The object checks of an update's new state: a custom resource's are
/// made three times over for labels, annotations and owner references
/// (kube-apiserver's common checks, then its update checks twice: once for
/// every kind, once in the custom resource handler), as its causes show.
pub(crate) fn on_update(info: &ResourceInfo, causes: Vec<Cause>) -> Vec<Cause> {
    if !info.is_custom() {
        return causes;
    }
    let again: Vec<Cause> = causes
        .iter()
        .filter(|(_, field, _)| {
            ["metadata.labels", "metadata.annotations", "metadata.ownerReferences"]
                .iter()
                .any(|f| field == f || field.starts_with(&format!("{f}[")))
        })
        .cloned()
        .collect();
    let mut out = causes;
    out.extend(again.iter().cloned());
    out.extend(again);
    out
}

/// The checks only an update makes (immutable fields, finalizers of an
/// object being deleted): twice for a custom resource.
pub(crate) fn update_checks(info: &ResourceInfo, causes: Vec<Cause>) -> Vec<Cause> {
    if !info.is_custom() {
        return causes;
    }
    causes.iter().chain(&causes).cloned().collect()
}

/// Go's `%#v` of a list of strings: `[]string{"a", "b"}`.
pub(crate) fn go_string_slice(items: &[&str]) -> String {
    let quoted: Vec<String> = items.iter().map(|s| quoted(s)).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

/// An immutable field's cause, with the value as Go prints it.
pub(crate) fn immutable(field: &str, value: &Value) -> Cause {
    let shown = match value {
        Value::String(s) => quoted(s),
        other => other.to_string(),
    };
    invalid(field, &shown, "field is immutable")
}

/// The uid a write's body or patched object gives, when it is not the
/// stored object's: a PUT's is a precondition (409), a patch's a change of
/// an immutable field (422).
pub(crate) fn other_uid<'a>(old: &Value, new: &'a Value) -> Option<&'a str> {
    let uid = |v: &'a Value| v.get("metadata").and_then(|m| m.get("uid")).and_then(Value::as_str);
    let theirs = uid(new).filter(|u| !u.is_empty())?;
    (Some(theirs) != old.get("metadata").and_then(|m| m.get("uid")).and_then(Value::as_str)).then_some(theirs)
}

/// The 422 cause of a patch that changes the uid.
pub(crate) fn uid_changed(uid: &str) -> Cause {
    invalid("metadata.uid", &quoted(uid), "field is immutable")
}

/// What is wrong with `name`, if anything (apimachinery's
/// `IsDNS1123Subdomain`, or `IsDNS1123Label` for `label`).
pub(crate) fn name_problems(name: &str, label: bool) -> Vec<String> {
    if name.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let (max, ok, rule) =
        if label { (63, is_dns_part(name), DNS_LABEL) } else { (253, is_dns_subdomain(name), DNS_SUBDOMAIN) };
    if name.len() > max {
        out.push(format!("must be no more than {max} characters"));
    }
    if !ok {
        // apimachinery's IsDNS1123Label: a valid subdomain that is no label
        // has dots.
        if label && is_dns_subdomain(name) {
            out.push("must not contain dots".to_string());
        } else {
            out.push(rule.to_string());
        }
    }
    out
}

/// apimachinery's `IsPathSegmentName`: not `.` or `..`, no `/` or `%`.
fn path_segment_problems(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"].iter().filter(|bad| name.contains(**bad)).map(|bad| format!("may not contain '{bad}'")).collect()
}

fn max_len(max: usize) -> String {
    format!("must be no more than {max} bytes")
}

fn quoted(s: &str) -> String {
    Value::from(s).to_string()
}

fn invalid(field: &str, value: &str, why: &str) -> Cause {
    ("FieldValueInvalid", field.to_string(), format!("Invalid value: {value}: {why}"))
}

/// Owner references as the API server prints them: in the Go type's field
/// order.
fn owner_references(refs: &[Value]) -> String {
    const ORDER: [&str; 6] = ["apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"];
    let items: Vec<String> = refs
        .iter()
        .map(|r| {
            let fields: Vec<String> =
                ORDER.iter().filter_map(|k| r.get(*k).map(|v| format!("{}:{v}", quoted(k)))).collect();
            format!("{{{}}}", fields.join(","))
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, of any length.
fn is_dns_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// Only the whole is limited (253), not its dot-separated parts: the API
/// server's regular expression does not count them.
pub(crate) fn is_dns_subdomain(s: &str) -> bool {
    s.split('.').all(is_dns_part)
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn is_qualified_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// apimachinery's `IsQualifiedName`: an optional DNS-subdomain prefix and
/// `/`, then a name of at most 63 bytes. Label keys, annotation keys and
/// finalizers alike; the API server's message says "label key" for each.
fn qualified_name_problems(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let parts: Vec<&str> = s.split('/').collect();
    let name = match parts[..] {
        [name] => name,
        [prefix, name] => {
            if prefix.is_empty() {
                out.push("prefix part must be non-empty".to_string());
            } else {
                out.extend(name_problems(prefix, false).into_iter().map(|why| format!("prefix part {why}")));
            }
            name
        }
        _ => {
            out.push(format!(
                "a valid label key {QUALIFIED_RULE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ));
            return out;
        }
    };
    if name.is_empty() {
        out.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        out.push(format!("name part {}", max_len(63)));
    }
    if !is_qualified_part(name) {
        out.push(format!("name part {QUALIFIED_RULE}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use serde_json::json;

    fn fields(info: &ResourceInfo, object: Value) -> Vec<String> {
        validate(info, &object).into_iter().map(|(_, f, _)| f).collect()
    }

    #[test]
    fn names_follow_the_kinds_rule() {
        let cm = ResourceInfo::of::<ConfigMap>();
        let ns = ResourceInfo::of::<Namespace>();
        assert!(fields(&cm, json!({"metadata": {"name": "a.b-c"}})).is_empty());
        assert_eq!(fields(&cm, json!({"metadata": {"name": "A"}})), ["metadata.name"]);
        assert_eq!(fields(&cm, json!({"metadata": {"name": "a_b"}})), ["metadata.name"]);
        assert_eq!(fields(&ns, json!({"metadata": {"name": "a.b"}})), ["metadata.name"]);
        assert!(fields(&cm, json!({"metadata": {"name": "x".repeat(253)}})).is_empty());
        assert_eq!(fields(&cm, json!({"metadata": {"name": "x".repeat(254)}})), ["metadata.name"]);
        assert!(!name_problems("gen-", false).is_empty(), "a prefix is checked after its suffix is added");
    }

    #[test]
    fn labels_annotations_finalizers_and_owners() {
        let cm = ResourceInfo::of::<ConfigMap>();
        let ok = json!({"metadata": {"name": "a",
            "labels": {"app.kubernetes.io/name": "web", "empty": "", "A_b.c": "X-1"},
            "annotations": {"example.com/Note": "anything at all / spaces"},
            "finalizers": ["example.com/cleanup", "orphan"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u", "controller": true}]}});
        assert!(fields(&cm, ok).is_empty());
        let bad = json!({"metadata": {"name": "a",
            "labels": {"owner": "x".repeat(64), "-k": "v", "a/b/c": "v", "ok": "spaces here"},
            "annotations": {"bad key": "v"},
            "finalizers": ["example.com/"],
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "", "controller": true},
                {"apiVersion": "v1", "kind": "Secret", "name": "s", "uid": "u2", "controller": true}]}});
        assert_eq!(
            fields(&cm, bad),
            [
                "metadata.labels",
                "metadata.labels",
                "metadata.labels",
                "metadata.labels",
                "metadata.annotations",
                "metadata.ownerReferences[0].uid",
                "metadata.ownerReferences",
                "metadata.finalizers",
                "metadata.finalizers",
            ]
        );
        let big = json!({"metadata": {"name": "a", "annotations": {"k": "x".repeat(MAX_ANNOTATION_BYTES)}}});
        assert_eq!(validate(&cm, &big)[0].0, "FieldValueTooLong");
    }

    #[test]
    fn another_uid_is_found() {
        let old = json!({"metadata": {"name": "a", "uid": "u1"}});
        assert_eq!(other_uid(&old, &json!({"metadata": {"uid": "u1"}})), None);
        assert_eq!(other_uid(&old, &json!({"metadata": {"uid": ""}})), None);
        assert_eq!(other_uid(&old, &json!({"metadata": {}})), None);
        assert_eq!(other_uid(&old, &json!({"metadata": {"uid": "u2"}})), Some("u2"));
    }
}
