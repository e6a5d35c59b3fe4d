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
const QUALIFIED_NAME: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

/// The checks of `object`'s metadata, on a create or an update.
pub(crate) fn validate(info: &ResourceInfo, object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    let empty = Map::new();
    let meta = object.get("metadata").and_then(Value::as_object).unwrap_or(&empty);
    let text = |key: &str| meta.get(key).and_then(Value::as_str).unwrap_or_default();
    // Namespaces are DNS labels; every other kind this fake serves (custom
    // resources, ConfigMaps, Secrets, ...) is a DNS subdomain.
    let label_names = info.group.is_empty() && info.kind == "Namespace";
    if let Some(why) = name_problem(text("name"), label_names) {
        causes.push(invalid("metadata.name", &Value::from(text("name")), why));
    }
    if let Some(labels) = meta.get("labels").and_then(Value::as_object) {
        for (key, value) in labels {
            causes.extend(
                qualified_name_problems(key)
                    .into_iter()
                    .map(|why| invalid("metadata.labels", &key.as_str().into(), why)),
            );
            let value = value.as_str().unwrap_or_default();
            if value.len() > 63 {
                causes.push(invalid("metadata.labels", &value.into(), "must be no more than 63 bytes".into()));
            }
            if !value.is_empty() && !is_label_value(value) {
                causes.push(invalid("metadata.labels", &value.into(), LABEL_VALUE.into()));
            }
        }
    }
    if let Some(annotations) = meta.get("annotations").and_then(Value::as_object) {
        let mut total = 0;
        for (key, value) in annotations {
            total += key.len() + value.as_str().map_or(0, str::len);
            causes.extend(
                qualified_name_problems(&key.to_ascii_lowercase())
                    .into_iter()
                    .map(|why| invalid("metadata.annotations", &key.as_str().into(), why)),
            );
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
            for key in ["apiVersion", "kind", "name", "uid"] {
                if field(key).is_empty() {
                    let message = match key {
                        "apiVersion" => "version must not be empty",
                        "kind" => "kind must not be empty",
                        "name" => "name must not be empty",
                        _ => "uid must not be empty",
                    };
                    causes.push(invalid(&format!("metadata.ownerReferences[{i}].{key}"), &"".into(), message.into()));
                }
            }
            if r.get("controller").and_then(Value::as_bool) == Some(true) {
                controllers.push(format!("{}/{}", field("kind"), field("name")));
            }
        }
        if controllers.len() > 1 {
            causes.push(invalid(
                "metadata.ownerReferences",
                &Value::Array(refs.clone()),
                format!(
                    "Only one reference can have Controller set to true. Found \"true\" in references for {}",
                    controllers.join(" and ")
                ),
            ));
        }
    }
    if let Some(finalizers) = meta.get("finalizers").and_then(Value::as_array) {
        for (i, f) in finalizers.iter().enumerate() {
            let f = f.as_str().unwrap_or_default();
            causes.extend(
                qualified_name_problems(f)
                    .into_iter()
                    .map(|why| invalid(&format!("metadata.finalizers[{i}]"), &f.into(), why)),
            );
        }
    }
    causes
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
    invalid("metadata.uid", &uid.into(), "field is immutable".into())
}

/// What is wrong with `name` (a `generateName` prefix included), if anything.
pub(crate) fn name_problem(name: &str, label: bool) -> Option<String> {
    if name.is_empty() {
        return None;
    }
    let (max, ok, rule) =
        if label { (63, is_dns_label(name), DNS_LABEL) } else { (253, is_dns_subdomain(name), DNS_SUBDOMAIN) };
    if name.len() > max {
        return Some(format!("must be no more than {max} characters"));
    }
    (!ok).then(|| rule.to_string())
}

fn invalid(field: &str, value: &Value, why: String) -> Cause {
    ("FieldValueInvalid", field.to_string(), format!("Invalid value: {value}: {why}"))
}

fn is_dns_label(s: &str) -> bool {
    s.len() <= 63 && is_dns_part(s)
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
fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns_part)
}

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`
fn is_qualified_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter().all(|c| c.is_ascii_alphanumeric() || b"-_.".contains(c))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

fn is_label_value(s: &str) -> bool {
    is_qualified_part(s)
}

/// apimachinery's `IsQualifiedName`: an optional DNS-subdomain prefix and
/// `/`, then a name of at most 63 characters.
fn qualified_name_problems(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let name = match s.split_once('/') {
        Some((prefix, name)) => {
            if prefix.is_empty() {
                out.push("prefix part must be non-empty".to_string());
            } else if !is_dns_subdomain(prefix) {
                out.push(format!("prefix part {DNS_SUBDOMAIN}"));
            }
            if name.contains('/') {
                out.push("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, with an optional DNS subdomain prefix and '/'".to_string());
                return out;
            }
            name
        }
        None => s,
    };
    if name.is_empty() {
        out.push("name part must be non-empty".to_string());
    } else {
        if name.len() > 63 {
            out.push("name part must be no more than 63 characters".to_string());
        }
        if !is_qualified_part(name) {
            out.push(QUALIFIED_NAME.to_string());
        }
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
        assert!(name_problem("gen-", false).is_some(), "a prefix is checked after its suffix is added");
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
                "metadata.finalizers[0]",
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
