//! The webhooks driven with reviews as the API server sends them, through
//! [`Webhooks::handle`] and through the TLS server.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::admission::{AdmissionResponse, Defaulter, Denied, Validator, Warnings};
use super::conversion::{Conversion, ConversionError, Convertible, Hub};
use super::{ServerTls, WebhookServer, Webhooks};

macro_rules! kind {
    ($ty:ident, $version:literal) => {
        impl k8s_openapi::Resource for $ty {
            const API_VERSION: &'static str = concat!("example.com/", $version);
            const GROUP: &'static str = "example.com";
            const KIND: &'static str = "Widget";
            const VERSION: &'static str = $version;
            const URL_PATH_SEGMENT: &'static str = "widgets";
            type Scope = k8s_openapi::NamespaceResourceScope;
        }
        impl k8s_openapi::Metadata for $ty {
            type Ty = ObjectMeta;
            fn metadata(&self) -> &ObjectMeta {
                &self.metadata
            }
            fn metadata_mut(&mut self) -> &mut ObjectMeta {
                &mut self.metadata
            }
        }
    };
}

/// The old version: `colour` and a required size.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WidgetV1 {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    metadata: ObjectMeta,
    spec: SpecV1,
}
kind!(WidgetV1, "v1");

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct SpecV1 {
    colour: String,
    size: i64,
}

/// The hub (storage version): `color` and an optional size.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct WidgetV2 {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    metadata: ObjectMeta,
    spec: SpecV2,
}
kind!(WidgetV2, "v2");

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct SpecV2 {
    color: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    size: Option<i64>,
}

impl Hub for WidgetV2 {}

impl Convertible for WidgetV1 {
    type Hub = WidgetV2;

    fn to_hub(self) -> Result<WidgetV2, ConversionError> {
        let spec = SpecV2 { color: self.spec.colour, size: Some(self.spec.size) };
        Ok(WidgetV2 { metadata: self.metadata, spec, ..Default::default() })
    }

    fn from_hub(hub: WidgetV2) -> Result<Self, ConversionError> {
        let size = hub.spec.size.unwrap_or(1);
        if size > 100 {
            return Err(ConversionError::new(format!("size {size} does not fit v1 (at most 100)")));
        }
        Ok(WidgetV1 { metadata: hub.metadata, spec: SpecV1 { colour: hub.spec.color, size }, ..Default::default() })
    }
}

impl Defaulter for WidgetV2 {
    fn apply_defaults(&mut self) {
        self.spec.size.get_or_insert(1);
        if self.spec.color.is_empty() {
            self.spec.color = "blue".into();
        }
    }
}

impl Validator for WidgetV2 {
    fn validate_create(&self) -> Result<Warnings, Denied> {
        match self.spec.size {
            Some(size) if size < 1 => {
                Err(Denied::invalid(format!("spec.size: Invalid value: {size}: must be at least 1")))
            }
            Some(size) if size > 10 => Ok(vec![format!("spec.size {size} is large")]),
            _ => Ok(Warnings::new()),
        }
    }

    fn validate_update(&self, old: &Self) -> Result<Warnings, Denied> {
        if self.spec.color != old.spec.color {
            return Err(Denied::invalid("spec.color: Invalid value: field is immutable"));
        }
        self.validate_create()
    }

    fn validate_delete(&self) -> Result<Warnings, Denied> {
        let protected = self.metadata.labels.as_ref().is_some_and(|l| l.contains_key("protected"));
        if protected { Err(Denied::new("widget is protected")) } else { Ok(Warnings::new()) }
    }
}

/// Only the create check: an update is checked the same way (the trait's
/// default), and the denial carries its own code.
impl Validator for WidgetV1 {
    fn validate_create(&self) -> Result<Warnings, Denied> {
        if self.spec.size < 0 {
            Err(Denied::new("spec.size is negative").with_code(409, "Conflict"))
        } else {
            Ok(Warnings::new())
        }
    }
}

fn webhooks() -> Webhooks {
    Webhooks::new()
        .conversion("/convert", Conversion::new().spoke::<WidgetV1>())
        .mutating::<WidgetV2>("/mutate-widget")
        .validating::<WidgetV2>("/validate-widget")
}

fn metadata(name: &str) -> Value {
    json!({
        "name": name, "namespace": "default", "uid": "0b9a3c4e-5f61-4c1e-9d7a-2f1f8b7b1c11",
        "resourceVersion": "41", "generation": 1, "creationTimestamp": "2026-12-03T10:00:00Z",
        "labels": {"app": "demo"}, "annotations": {"note": "kept"},
        "managedFields": [{"manager": "kubectl", "operation": "Update", "apiVersion": "example.com/v1",
            "time": "2026-12-03T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:colour": {}}}}]
    })
}

fn post(webhooks: &Webhooks, path: &str, body: &Value) -> Value {
    let answer = webhooks.handle("POST", path, &serde_json::to_vec(body).unwrap());
    assert_eq!(answer.status, 200, "{}", String::from_utf8_lossy(&answer.body));
    assert_eq!(answer.content_type, "application/json");
    serde_json::from_slice(&answer.body).unwrap()
}

/// A ConversionReview as kube-apiserver 1.37 sends it.
fn conversion_review(desired: &str, objects: Vec<Value>) -> Value {
    json!({
        "kind": "ConversionReview",
        "apiVersion": "apiextensions.k8s.io/v1",
        "request": { "uid": "705ab4f5-6393-11e8-b7cc-42010a800002", "desiredAPIVersion": desired, "objects": objects }
    })
}

#[test]
fn conversion_converts_a_batch_in_order_and_echoes_the_uid() {
    let v1 = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": metadata("a"),
        "spec": {"colour": "red", "size": 3}});
    let v2 = json!({"apiVersion": "example.com/v2", "kind": "Widget", "metadata": metadata("b"),
        "spec": {"color": "green"}});
    let review = post(&webhooks(), "/convert?timeout=30s", &conversion_review("example.com/v2", vec![v1, v2.clone()]));
    assert_eq!(review["apiVersion"], "apiextensions.k8s.io/v1");
    assert_eq!(review["kind"], "ConversionReview");
    let response = &review["response"];
    assert_eq!(response["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
    assert_eq!(response["result"]["status"], "Success");
    let objects = response["convertedObjects"].as_array().unwrap();
    assert_eq!(objects.len(), 2);
    assert_eq!(
        objects[0],
        json!({"apiVersion": "example.com/v2", "kind": "Widget", "metadata": metadata("a"),
            "spec": {"color": "red", "size": 3}})
    );
    // Already in the desired version: returned as it came.
    assert_eq!(objects[1], v2);

    // And back to the spoke.
    let review = post(&webhooks(), "/convert", &conversion_review("example.com/v1", vec![objects[0].clone()]));
    assert_eq!(
        review["response"]["convertedObjects"][0],
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": metadata("a"),
            "spec": {"colour": "red", "size": 3}})
    );
}

/// A v1 whose conversion builds metadata of its own: only its labels and
/// annotations reach the API server, the rest of the object's metadata
/// comes back as it came (the API server refuses a changed name or uid).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ForgetfulV1 {
    #[serde(default)]
    metadata: ObjectMeta,
    spec: SpecV1,
}
kind!(ForgetfulV1, "v1");

impl Convertible for ForgetfulV1 {
    type Hub = WidgetV2;

    fn to_hub(self) -> Result<WidgetV2, ConversionError> {
        let metadata = ObjectMeta { labels: Some([("converted".into(), "yes".into())].into()), ..Default::default() };
        Ok(WidgetV2 { metadata, spec: SpecV2 { color: self.spec.colour, size: None }, ..Default::default() })
    }

    fn from_hub(hub: WidgetV2) -> Result<Self, ConversionError> {
        Ok(ForgetfulV1 { metadata: ObjectMeta::default(), spec: SpecV1 { colour: hub.spec.color, size: 1 } })
    }
}

#[test]
fn a_conversion_changes_only_labels_and_annotations_of_the_metadata() {
    let conversion = Conversion::new().spoke::<ForgetfulV1>();
    let v1 = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": metadata("a"), "spec": {"colour": "red", "size": 3}});
    let v2 = conversion.convert(v1, "example.com/v2").unwrap();
    let mut expected = metadata("a");
    expected["labels"] = json!({"converted": "yes"});
    expected.as_object_mut().unwrap().remove("annotations");
    assert_eq!(v2["metadata"], expected, "name, uid and the rest kept; labels and annotations as converted");
    let back = conversion.convert(v2, "example.com/v1").unwrap();
    let mut expected = metadata("a");
    let fields = expected.as_object_mut().unwrap();
    fields.remove("labels");
    fields.remove("annotations");
    assert_eq!(back["metadata"], expected);
}

#[test]
fn a_failing_conversion_is_a_failure_status_with_the_message() {
    let ok = json!({"apiVersion": "example.com/v2", "kind": "Widget", "metadata": metadata("small"),
        "spec": {"color": "red", "size": 5}});
    let big = json!({"apiVersion": "example.com/v2", "kind": "Widget", "metadata": metadata("big"),
        "spec": {"color": "red", "size": 500}});
    let review = post(&webhooks(), "/convert", &conversion_review("example.com/v1", vec![ok, big]));
    let response = &review["response"];
    assert_eq!(response["uid"], "705ab4f5-6393-11e8-b7cc-42010a800002");
    assert_eq!(response["result"]["status"], "Failure");
    assert_eq!(
        response["result"]["message"],
        "converting Widget default/big to example.com/v1: size 500 does not fit v1 (at most 100)"
    );
    assert!(response.get("convertedObjects").is_none_or(|o| o.as_array().is_some_and(Vec::is_empty)), "{response}");
}

#[test]
fn conversion_of_unknown_kinds_versions_and_undecodable_objects_fails() {
    let conversion = Conversion::new().spoke::<WidgetV1>();
    let err =
        conversion.convert(json!({"apiVersion": "example.com/v1", "kind": "Gadget"}), "example.com/v2").unwrap_err();
    assert_eq!(err.message(), "no conversion is registered for kind \"Gadget\" of group \"example.com\"");
    // Kinds are told apart by group: another group's Widget is not this one.
    let err = conversion.convert(json!({"apiVersion": "other.com/v1", "kind": "Widget"}), "other.com/v2").unwrap_err();
    assert_eq!(err.message(), "no conversion is registered for kind \"Widget\" of group \"other.com\"");
    let err = conversion
        .convert(
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"colour": "red", "size": 1}}),
            "example.com/v9",
        )
        .unwrap_err();
    assert_eq!(err.message(), "Widget has no version \"example.com/v9\" (known: example.com/v1, example.com/v2)");
    let err = conversion
        .convert(json!({"apiVersion": "example.com/v1", "kind": "Widget", "spec": {"colour": 7}}), "example.com/v2")
        .unwrap_err();
    assert!(err.message().starts_with("decoding Widget example.com/v1: invalid type: integer `7`"), "{err}");

    let answer = webhooks().handle("POST", "/convert", b"{\"kind\":");
    assert_eq!(answer.status, 400);
    assert!(String::from_utf8_lossy(&answer.body).starts_with("reading the ConversionReview"));
    let review =
        post(&webhooks(), "/convert", &json!({"kind": "ConversionReview", "apiVersion": "apiextensions.k8s.io/v1"}));
    assert_eq!(review["response"]["result"]["status"], "Failure");
    assert_eq!(review["response"]["result"]["message"], "the ConversionReview has no request");
}

/// An AdmissionReview as kube-apiserver 1.37 sends it.
fn admission_review(operation: &str, object: Option<Value>, old: Option<Value>) -> Value {
    json!({
        "kind": "AdmissionReview",
        "apiVersion": "admission.k8s.io/v1",
        "request": {
            "uid": "a2a6d1c8-2c53-4b6e-8c0f-6d8c7a8f9e01",
            "kind": {"group": "example.com", "version": "v2", "kind": "Widget"},
            "resource": {"group": "example.com", "version": "v2", "resource": "widgets"},
            "requestKind": {"group": "example.com", "version": "v1", "kind": "Widget"},
            "requestResource": {"group": "example.com", "version": "v1", "resource": "widgets"},
            "name": "a", "namespace": "default", "operation": operation,
            "userInfo": {"username": "admin", "groups": ["system:masters", "system:authenticated"]},
            "object": object, "oldObject": old, "dryRun": false,
            "options": {"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}
        }
    })
}

fn widget(spec: Value) -> Value {
    json!({"apiVersion": "example.com/v2", "kind": "Widget", "metadata": metadata("a"), "spec": spec})
}

fn answer_of(review: &Value) -> AdmissionResponse {
    assert_eq!(review["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(review["kind"], "AdmissionReview");
    let response: AdmissionResponse = serde_json::from_value(review["response"].clone()).unwrap();
    assert_eq!(response.uid, "a2a6d1c8-2c53-4b6e-8c0f-6d8c7a8f9e01");
    response
}

#[test]
fn mutating_answers_with_a_base64_json_patch_of_the_defaults() {
    let object = widget(json!({"color": ""}));
    let review = post(&webhooks(), "/mutate-widget", &admission_review("CREATE", Some(object.clone()), None));
    // base64 on the wire, as the API server reads a []byte.
    assert!(review["response"]["patch"].is_string(), "{review}");
    assert_eq!(review["response"]["patchType"], "JSONPatch");
    let response = answer_of(&review);
    assert!(response.allowed);
    let patch = response.json_patch().expect("a patch");
    let mut patched = object;
    json_patch::patch(&mut patched, &patch).unwrap();
    assert_eq!(patched, widget(json!({"color": "blue", "size": 1})));
    let ops = serde_json::to_value(&patch).unwrap();
    assert_eq!(
        ops,
        json!([{"op": "replace", "path": "/spec/color", "value": "blue"}, {"op": "add", "path": "/spec/size", "value": 1}])
    );

    // Nothing to default: no patch at all.
    let review = post(
        &webhooks(),
        "/mutate-widget",
        &admission_review("UPDATE", Some(widget(json!({"color": "red", "size": 2}))), None),
    );
    assert_eq!(review["response"], json!({"uid": "a2a6d1c8-2c53-4b6e-8c0f-6d8c7a8f9e01", "allowed": true}));
    // A delete is not defaulted.
    let review =
        post(&webhooks(), "/mutate-widget", &admission_review("DELETE", None, Some(widget(json!({"color": ""})))));
    assert!(answer_of(&review).allowed && answer_of(&review).patch.is_none());
}

/// Fields the Rust type does not know (a newer CRD's) are not removed by
/// the defaulting patch, and a whole number read into a float is no change
/// (controller-runtime's defaulter drops removals too).
#[test]
fn the_defaulting_patch_keeps_unknown_fields_and_whole_numbers() {
    #[derive(Clone, Debug, Default, Serialize, Deserialize)]
    struct Gauge {
        #[serde(default)]
        metadata: ObjectMeta,
        spec: GaugeSpec,
    }
    #[derive(Clone, Debug, Default, Serialize, Deserialize)]
    struct GaugeSpec {
        level: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        aliases: Vec<String>,
    }
    impl k8s_openapi::Resource for Gauge {
        const API_VERSION: &'static str = "example.com/v2";
        const GROUP: &'static str = "example.com";
        const KIND: &'static str = "Widget";
        const VERSION: &'static str = "v2";
        const URL_PATH_SEGMENT: &'static str = "widgets";
        type Scope = k8s_openapi::NamespaceResourceScope;
    }
    impl k8s_openapi::Metadata for Gauge {
        type Ty = ObjectMeta;
        fn metadata(&self) -> &ObjectMeta {
            &self.metadata
        }
        fn metadata_mut(&mut self) -> &mut ObjectMeta {
            &mut self.metadata
        }
    }
    impl Defaulter for Gauge {
        fn apply_defaults(&mut self) {
            self.spec.unit.get_or_insert_with(|| "m".into());
            self.spec.aliases.dedup();
        }
    }
    let webhooks = Webhooks::new().mutating::<Gauge>("/mutate-gauge");
    let object = |spec: Value| json!({"apiVersion": "example.com/v2", "kind": "Widget", "metadata": metadata("a"), "spec": spec});
    let unchanged = object(json!({"level": 3, "unit": "cm", "retries": 2}));
    let review = post(&webhooks, "/mutate-gauge", &admission_review("CREATE", Some(unchanged), None));
    assert_eq!(review["response"]["patch"], Value::Null, "nothing defaulted: {review}");
    assert_eq!(review["response"]["patchType"], Value::Null);
    let defaulted = object(json!({"level": 3, "retries": 2}));
    let review = post(&webhooks, "/mutate-gauge", &admission_review("CREATE", Some(defaulted), None));
    let ops = serde_json::to_value(answer_of(&review).json_patch().expect("a patch")).unwrap();
    assert_eq!(ops, json!([{"op": "add", "path": "/spec/unit", "value": "m"}]));
    // A removal the defaulter makes is kept; a float written `3.0` is no change.
    let repeated = object(json!({"level": 3.0, "unit": "cm", "aliases": ["a", "a"], "retries": 2}));
    let review = post(&webhooks, "/mutate-gauge", &admission_review("CREATE", Some(repeated), None));
    let ops = serde_json::to_value(answer_of(&review).json_patch().expect("a patch")).unwrap();
    assert_eq!(ops, json!([{"op": "remove", "path": "/spec/aliases/1"}]));
}

/// An object being deleted may drop its finalizer even when it no longer
/// passes the create rules; an old object that no longer decodes leaves the
/// update checked as a create instead of refused.
#[test]
fn updates_of_deleted_or_undecodable_old_objects_are_not_stuck() {
    // WidgetV1 keeps the trait's `validate_update`.
    let v1_webhooks = Webhooks::new().validating::<WidgetV1>("/validate-v1");
    let v1 = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": metadata("a"), "spec": {"colour": "red", "size": -1}});
    let v1_update = |new: &Value, old: &Value| {
        let mut review = admission_review("UPDATE", Some(new.clone()), Some(old.clone()));
        review["request"]["kind"]["version"] = json!("v1");
        review
    };
    let mut v1_deleting = v1.clone();
    v1_deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
    let mut v1_old = v1_deleting.clone();
    v1_old["metadata"]["finalizers"] = json!(["example.com/cleanup"]);
    assert!(
        answer_of(&post(&v1_webhooks, "/validate-v1", &v1_update(&v1_deleting, &v1_old))).allowed,
        "the finalizer goes"
    );
    assert!(!answer_of(&post(&v1_webhooks, "/validate-v1", &v1_update(&v1, &v1))).allowed, "not being deleted");

    let mut deleting = widget(json!({"color": "red", "size": 0}));
    deleting["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");

    let undecodable_old = widget(json!({"color": 5}));
    let review =
        admission_review("UPDATE", Some(widget(json!({"color": "red", "size": 2}))), Some(undecodable_old.clone()));
    assert!(answer_of(&post(&webhooks(), "/validate-widget", &review)).allowed);
    let review =
        admission_review("UPDATE", Some(widget(json!({"color": "red", "size": 0}))), Some(undecodable_old.clone()));
    let denied = answer_of(&post(&webhooks(), "/validate-widget", &review));
    assert_eq!(denied.status.map(|s| s.code), Some(422), "checked as a create");
    let review = admission_review("UPDATE", Some(deleting), Some(undecodable_old));
    assert!(answer_of(&post(&webhooks(), "/validate-widget", &review)).allowed);
}

#[test]
fn validating_allows_denies_and_warns_per_operation() {
    let allowed = post(
        &webhooks(),
        "/validate-widget",
        &admission_review("CREATE", Some(widget(json!({"color": "red", "size": 2}))), None),
    );
    assert_eq!(allowed["response"], json!({"uid": "a2a6d1c8-2c53-4b6e-8c0f-6d8c7a8f9e01", "allowed": true}));

    let warned = answer_of(&post(
        &webhooks(),
        "/validate-widget",
        &admission_review("CREATE", Some(widget(json!({"color": "red", "size": 50}))), None),
    ));
    assert!(warned.allowed);
    assert_eq!(warned.warnings, vec!["spec.size 50 is large".to_owned()]);

    let review = post(
        &webhooks(),
        "/validate-widget",
        &admission_review("CREATE", Some(widget(json!({"color": "red", "size": 0}))), None),
    );
    assert_eq!(
        review["response"]["status"],
        json!({"status": "Failure", "message": "spec.size: Invalid value: 0: must be at least 1", "reason": "Invalid", "code": 422})
    );
    assert_eq!(review["response"]["allowed"], false);

    // Update: the old object is passed as `old`.
    let update =
        admission_review("UPDATE", Some(widget(json!({"color": "red"}))), Some(widget(json!({"color": "blue"}))));
    let denied = answer_of(&post(&webhooks(), "/validate-widget", &update));
    assert!(!denied.allowed);
    assert_eq!(denied.status.unwrap().message, "spec.color: Invalid value: field is immutable");

    // Delete: the object is `oldObject`.
    let mut protected = widget(json!({"color": "red"}));
    protected["metadata"]["labels"]["protected"] = json!("yes");
    let denied = answer_of(&post(&webhooks(), "/validate-widget", &admission_review("DELETE", None, Some(protected))));
    let status = denied.status.unwrap();
    assert_eq!(
        (status.code, status.reason.as_str(), status.message.as_str()),
        (403, "Forbidden", "widget is protected")
    );
    let allowed = answer_of(&post(
        &webhooks(),
        "/validate-widget",
        &admission_review("DELETE", None, Some(widget(json!({"color": "red"})))),
    ));
    assert!(allowed.allowed);
}

#[test]
fn an_update_is_checked_as_a_create_by_default_and_a_denial_keeps_its_code() {
    let webhooks = Webhooks::new().validating::<WidgetV1>("/validate-v1");
    let v1 = |size: i64| json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": metadata("a"), "spec": {"colour": "red", "size": size}});
    let review = |new: i64, old: i64| {
        let mut review = admission_review("UPDATE", Some(v1(new)), Some(v1(old)));
        review["request"]["kind"]["version"] = json!("v1");
        review["request"]["resource"]["version"] = json!("v1");
        review
    };
    let denied = answer_of(&post(&webhooks, "/validate-v1", &review(-1, 2)));
    assert!(!denied.allowed);
    let status = denied.status.unwrap();
    assert_eq!(
        (status.code, status.reason.as_str(), status.message.as_str()),
        (409, "Conflict", "spec.size is negative")
    );
    // The new object is what is checked, not the old one.
    assert!(answer_of(&post(&webhooks, "/validate-v1", &review(3, -1))).allowed);
}

#[test]
fn admission_of_another_kind_or_an_undecodable_object_is_denied_with_400() {
    let mut review = admission_review("CREATE", Some(widget(json!({"color": "red"}))), None);
    review["request"]["kind"]["version"] = json!("v1");
    let denied = answer_of(&post(&webhooks(), "/validate-widget", &review));
    let status = denied.status.unwrap();
    assert_eq!(status.code, 400);
    assert_eq!(
        status.message,
        "this webhook admits example.com/v2, Kind=Widget, not example.com/v1, Kind=Widget (check the webhook's rules and matchPolicy)"
    );

    let review = admission_review("CREATE", Some(widget(json!({"color": 5}))), None);
    let status = answer_of(&post(&webhooks(), "/mutate-widget", &review)).status.unwrap();
    assert_eq!(status.code, 400);
    assert!(status.message.starts_with("decoding Widget v2: invalid type: integer `5`"), "{}", status.message);

    let answer = webhooks().handle("POST", "/validate-widget", b"[]");
    assert_eq!(answer.status, 400);
    let answer = webhooks().handle(
        "POST",
        "/validate-widget",
        br#"{"kind":"AdmissionReview","apiVersion":"admission.k8s.io/v1"}"#,
    );
    assert_eq!(
        (answer.status, String::from_utf8_lossy(&answer.body).as_ref()),
        (400, "the AdmissionReview has no request")
    );
}

#[test]
fn unknown_paths_and_methods() {
    let answer = webhooks().handle("POST", "/nope", b"{}");
    assert_eq!((answer.status, answer.body.as_slice()), (404, b"no webhook at /nope".as_slice()));
    let answer = webhooks().handle("GET", "/convert", b"");
    assert_eq!((answer.status, answer.body.as_slice()), (405, b"webhooks take POST, not GET".as_slice()));
}

/// A CA and a serving certificate for 127.0.0.1 made with openssl
/// (codegen-testenv): (ca.pem, tls.crt, tls.key).
pub(crate) fn loopback_certificates() -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    codegen_testenv::tls::loopback_certificates(dir.path()).unwrap()
}

/// A TLS client configuration trusting the CA of `ca_pem`.
fn client_config(ca_pem: &[u8]) -> std::sync::Arc<rustls::ClientConfig> {
    use rustls::pki_types::pem::PemObject;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(rustls::pki_types::CertificateDer::from_pem_slice(ca_pem).unwrap()).unwrap();
    let config =
        rustls::ClientConfig::builder_with_provider(std::sync::Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    std::sync::Arc::new(config)
}

/// Sends `raw` (one or more HTTP/1.1 requests) over TLS and reads until the
/// server closes the connection.
async fn exchange(addr: std::net::SocketAddr, ca_pem: &[u8], raw: &[u8]) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let connector = tokio_rustls::TlsConnector::from(client_config(ca_pem));
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = rustls::pki_types::ServerName::IpAddress(addr.ip().into());
    let mut tls = connector.connect(name, tcp).await.unwrap();
    tls.write_all(raw).await.unwrap();
    let mut out = Vec::new();
    let _ = tls.read_to_end(&mut out).await;
    String::from_utf8(out).unwrap()
}

#[tokio::test]
async fn the_server_answers_over_tls_with_keep_alive_and_chunked_bodies() {
    let (ca, cert, key) = loopback_certificates();
    let server =
        WebhookServer::bind("127.0.0.1:0", ServerTls::from_pem(&cert, &key).unwrap(), webhooks()).await.unwrap();
    let addr = server.local_addr();

    let first = serde_json::to_string(&conversion_review(
        "example.com/v2",
        vec![json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": metadata("a"), "spec": {"colour": "red", "size": 3}})],
    ))
    .unwrap();
    let second =
        serde_json::to_string(&admission_review("CREATE", Some(widget(json!({"color": "red", "size": 0}))), None))
            .unwrap();
    let (head, tail) = second.split_at(second.len() / 2);
    let raw = format!(
        "POST /convert?timeout=30s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{first}\
         POST /validate-widget?timeout=10s HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n\
         {:x}\r\n{head}\r\n{:x}\r\n{tail}\r\n0\r\n\r\n",
        first.len(),
        head.len(),
        tail.len(),
    );
    let answer = exchange(addr, &ca, raw.as_bytes()).await;
    let responses: Vec<&str> = answer.split("HTTP/1.1 ").skip(1).collect();
    assert_eq!(responses.len(), 2, "{answer}");
    assert!(responses[0].starts_with("200 OK\r\nContent-Type: application/json\r\n"), "{answer}");
    assert!(responses[0].contains(r#""convertedObjects":[{"apiVersion":"example.com/v2""#), "{answer}");
    assert!(responses[1].contains("Connection: close\r\n"), "{answer}");
    assert!(responses[1].contains(r#""message":"spec.size: Invalid value: 0: must be at least 1""#), "{answer}");

    let answer = exchange(addr, &ca, b"GET /convert HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"), "{answer}");
    let answer = exchange(addr, &ca, b"BROKEN\r\n\r\n").await;
    assert!(answer.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{answer}");

    server.shutdown().await;
    assert!(tokio::net::TcpStream::connect(addr).await.is_err(), "the listener is closed after shutdown");
}

#[test]
fn bad_pem_is_a_tls_error() {
    let err = ServerTls::from_pem(b"", b"").unwrap_err();
    assert_eq!(err.to_string(), "webhook TLS: no certificate in the certificate PEM");
    let (_, cert, _) = loopback_certificates();
    let err = ServerTls::from_pem(&cert, b"nope").unwrap_err();
    assert!(err.to_string().starts_with("webhook TLS: reading the private key"), "{err}");
}

#[test]
fn pem_files_load_as_pem() {
    let (_, cert, key) = loopback_certificates();
    let dir = std::env::temp_dir().join(format!("codegen-runtime-webhook-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("tls.crt"), &cert).unwrap();
    std::fs::write(dir.join("tls.key"), &key).unwrap();
    assert!(ServerTls::from_pem_files(dir.join("tls.crt"), dir.join("tls.key")).is_ok());
    let err = ServerTls::from_pem_files(dir.join("missing.crt"), dir.join("tls.key")).unwrap_err();
    assert!(err.to_string().starts_with("webhook TLS: reading "), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A server on PEM files serves a renewed pair from the next connection
/// on (cert-manager rotates the Secret's files in place), and keeps the
/// last pair while the files do not load.
#[tokio::test]
async fn a_server_on_pem_files_serves_the_renewed_certificate() {
    let dir = tempfile::tempdir().unwrap();
    let (crt, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    let (ca_a, cert_a, key_a) = loopback_certificates();
    std::fs::write(&crt, &cert_a).unwrap();
    std::fs::write(&key, &key_a).unwrap();
    let server =
        WebhookServer::bind("127.0.0.1:0", ServerTls::from_pem_files(&crt, &key).unwrap(), webhooks()).await.unwrap();
    let addr = server.local_addr();
    let get = b"GET /convert HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let handshake = |ca: Vec<u8>| async move {
        let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
        let name = rustls::pki_types::ServerName::IpAddress(addr.ip().into());
        tokio_rustls::TlsConnector::from(client_config(&ca)).connect(name, tcp).await.is_ok()
    };
    assert!(exchange(addr, &ca_a, get).await.starts_with("HTTP/1.1 405"));

    // Half a rotation: the new certificate with the old key does not load.
    let (ca_b, cert_b, key_b) = loopback_certificates();
    std::fs::write(&crt, &cert_b).unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert!(handshake(ca_a.clone()).await, "the last pair serves while the new one is incomplete");
    std::fs::write(&key, &key_b).unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    assert!(exchange(addr, &ca_b, get).await.starts_with("HTTP/1.1 405"), "the renewed certificate");
    assert!(!handshake(ca_a).await, "the old one is gone");
    server.shutdown().await;
}

#[test]
fn manifests_point_at_the_server_for_the_kind() {
    use super::manifests::{
        ClientConfig, FailurePolicy, crd_conversion, mutating_webhook_configuration, validating_webhook_configuration,
    };
    let url = ClientConfig::url("https://127.0.0.1:9443/").with_ca_bundle(b"CA".to_vec());
    let m = mutating_webhook_configuration::<WidgetV2>(
        "widgets",
        "mwidget.example.com",
        "/mutate",
        &url,
        FailurePolicy::Fail,
    );
    assert_eq!(
        serde_json::to_value(&m).unwrap(),
        json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": "widgets"}, "webhooks": [{
            "admissionReviewVersions": ["v1"],
            "clientConfig": {"caBundle": "Q0E=", "url": "https://127.0.0.1:9443/mutate"},
            "failurePolicy": "Fail", "matchPolicy": "Equivalent", "name": "mwidget.example.com",
            "rules": [{"apiGroups": ["example.com"], "apiVersions": ["v2"], "operations": ["CREATE", "UPDATE"], "resources": ["widgets"]}],
            "sideEffects": "None", "timeoutSeconds": 10}]})
    );
    let service = ClientConfig::service("system", "webhook-service", Some(9443));
    let v = validating_webhook_configuration::<WidgetV2>(
        "widgets",
        "vwidget.example.com",
        "/validate",
        &service,
        FailurePolicy::Ignore,
    );
    let webhook = &serde_json::to_value(&v).unwrap()["webhooks"][0];
    assert_eq!(
        webhook["clientConfig"],
        json!({"service": {"name": "webhook-service", "namespace": "system", "path": "/validate", "port": 9443}})
    );
    assert_eq!(webhook["failurePolicy"], "Ignore");
    assert_eq!(webhook["rules"][0]["operations"], json!(["CREATE", "UPDATE"]), "kubebuilder's verbs");
    assert_eq!(
        serde_json::to_value(crd_conversion("/convert", &url)).unwrap(),
        json!({"strategy": "Webhook", "webhook": {
            "clientConfig": {"caBundle": "Q0E=", "url": "https://127.0.0.1:9443/convert"},
            "conversionReviewVersions": ["v1"]}})
    );
}

#[test]
fn copy_fields_copies_present_fields_and_removes_absent_ones() {
    let v1 = WidgetV1 {
        metadata: ObjectMeta { name: Some("a".into()), ..Default::default() },
        spec: SpecV1 { colour: "red".into(), size: 3 },
        ..Default::default()
    };
    let hub = WidgetV2 { spec: SpecV2 { color: "x".into(), size: None }, ..Default::default() };
    // `/spec/size` is present in v1: copied; `/metadata` too.
    let hub = super::copy_fields(&v1, hub, &["/metadata", "/spec/size"]).unwrap();
    assert_eq!((hub.metadata.name.as_deref(), hub.spec.size, hub.spec.color.as_str()), (Some("a"), Some(3), "x"));
    // Absent in the source: removed from the destination.
    let none = WidgetV2 { spec: SpecV2 { color: "y".into(), size: None }, ..Default::default() };
    let hub = super::copy_fields(&none, hub, &["/spec/size", "/spec/missing/deep"]).unwrap();
    assert_eq!(hub.spec.size, None);
    // A copy the destination type cannot hold is an error.
    let err = super::copy_fields(&json!({"spec": {"size": "big"}}), hub, &["/spec/size"]).unwrap_err();
    assert!(err.message().starts_with("decoding the copied fields: invalid type: string \"big\""), "{err}");
}

#[tokio::test]
async fn expect_continue_and_shutdown_closes_open_connections() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (ca, cert, key) = loopback_certificates();
    let server =
        WebhookServer::bind("127.0.0.1:0", ServerTls::from_pem(&cert, &key).unwrap(), webhooks()).await.unwrap();
    let addr = server.local_addr();
    let body = serde_json::to_string(&conversion_review("example.com/v2", vec![])).unwrap();
    let raw = format!(
        "POST /convert HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let answer = exchange(addr, &ca, raw.as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n"), "{answer}");

    // An idle kept-alive connection is closed by shutdown.
    let connector = tokio_rustls::TlsConnector::from(client_config(&ca));
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let mut tls = connector.connect(rustls::pki_types::ServerName::IpAddress(addr.ip().into()), tcp).await.unwrap();
    tls.write_all(b"GET /convert HTTP/1.1\r\nHost: x\r\n\r\n").await.unwrap();
    let mut first = [0u8; 12];
    tls.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 405");
    server.shutdown().await;
    let mut rest = Vec::new();
    let read = tokio::time::timeout(std::time::Duration::from_secs(5), tls.read_to_end(&mut rest)).await;
    assert!(read.is_ok(), "the connection is closed, not left open");
}

/// An admission handler that panics.
struct Panics;

impl super::AdmissionHandler for Panics {
    fn admit(&self, _: &kube::core::admission::AdmissionRequest<kube::core::DynamicObject>) -> AdmissionResponse {
        panic!("boom")
    }
}

#[tokio::test]
async fn a_panicking_handler_is_a_500_and_the_server_goes_on() {
    let (ca, cert, key) = loopback_certificates();
    let webhooks = webhooks().admission("/panics", Panics);
    let server = WebhookServer::bind("127.0.0.1:0", ServerTls::from_pem(&cert, &key).unwrap(), webhooks).await.unwrap();
    let body = serde_json::to_string(&admission_review("CREATE", Some(widget(json!({"color": "red"}))), None)).unwrap();
    let request = |path: &str| {
        format!("POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
    };
    let answer = exchange(server.local_addr(), &ca, request("/panics").as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 500 Internal Server Error\r\n"), "{answer}");
    assert!(answer.contains("the webhook handler panicked"), "{answer}");
    let answer = exchange(server.local_addr(), &ca, request("/validate-widget").as_bytes()).await;
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
}

/// An admission handler that says it runs, then waits (blocking its
/// thread) until [`Signals`] runs, and allows; it denies if that takes 10 s.
struct Waits {
    entered: std::sync::mpsc::SyncSender<()>,
    go_on: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
}

impl super::AdmissionHandler for Waits {
    fn admit(&self, req: &kube::core::admission::AdmissionRequest<kube::core::DynamicObject>) -> AdmissionResponse {
        self.entered.send(()).unwrap();
        let go_on = self.go_on.lock().unwrap();
        match go_on.recv_timeout(std::time::Duration::from_secs(10)) {
            Ok(()) => AdmissionResponse::allow(req.uid.clone()),
            Err(_) => AdmissionResponse::deny(req.uid.clone(), super::Denied::new("the other handler never ran")),
        }
    }
}

/// An admission handler that lets [`Waits`] go on.
struct Signals(std::sync::mpsc::SyncSender<()>);

impl super::AdmissionHandler for Signals {
    fn admit(&self, req: &kube::core::admission::AdmissionRequest<kube::core::DynamicObject>) -> AdmissionResponse {
        self.0.send(()).unwrap();
        AdmissionResponse::allow(req.uid.clone())
    }
}

// On a runtime with a single thread: a handler that blocks its thread would
// stop the server from answering the request that unblocks it, were the
// handlers run on the async workers rather than on blocking threads.
#[tokio::test(flavor = "current_thread")]
async fn handlers_run_on_blocking_threads_not_on_the_async_workers() {
    let (ca, cert, key) = loopback_certificates();
    let (entered_tx, entered_rx) = std::sync::mpsc::sync_channel(1);
    let (go_on_tx, go_on_rx) = std::sync::mpsc::sync_channel(1);
    let waits = Waits { entered: entered_tx, go_on: std::sync::Mutex::new(go_on_rx) };
    let webhooks = webhooks().admission("/waits", waits).admission("/signals", Signals(go_on_tx));
    let server = WebhookServer::bind("127.0.0.1:0", ServerTls::from_pem(&cert, &key).unwrap(), webhooks).await.unwrap();
    let addr = server.local_addr();
    let body = serde_json::to_string(&admission_review("CREATE", Some(widget(json!({"color": "red"}))), None)).unwrap();
    let request = move |path: &str| {
        format!("POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())
    };
    let waits = request("/waits");
    let ca_waits = ca.clone();
    let waiting = tokio::spawn(async move { exchange(addr, &ca_waits, waits.as_bytes()).await });
    // The first handler is blocking its thread before the second request
    // is sent (waited for off this runtime's only thread).
    let entered = tokio::task::spawn_blocking(move || entered_rx.recv_timeout(std::time::Duration::from_secs(20)));
    entered.await.unwrap().expect("the first handler ran");
    let signalled = exchange(addr, &ca, request("/signals").as_bytes()).await;
    assert!(signalled.starts_with("HTTP/1.1 200 OK\r\n"), "{signalled}");
    let answer = waiting.await.unwrap();
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.contains(r#""allowed":true"#), "{answer}");
}

#[tokio::test]
async fn a_connection_beyond_the_limit_closes_the_one_waiting_longest() {
    use tokio::io::AsyncReadExt as _;
    let (ca, cert, key) = loopback_certificates();
    let server =
        WebhookServer::bind("127.0.0.1:0", ServerTls::from_pem(&cert, &key).unwrap(), webhooks()).await.unwrap();
    let addr = server.local_addr();
    // Connections that never start their TLS handshake fill the server.
    let mut silent = Vec::new();
    for _ in 0..super::server::MAX_CONNECTIONS {
        silent.push(tokio::net::TcpStream::connect(addr).await.unwrap());
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let request = b"GET /convert HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let answer = tokio::time::timeout(std::time::Duration::from_secs(5), exchange(addr, &ca, request))
        .await
        .expect("served although the silent connections filled the server");
    assert!(answer.starts_with("HTTP/1.1 405"), "{answer}");
    // The oldest silent connection made room; the others are still open.
    let mut byte = [0u8; 1];
    let oldest = tokio::time::timeout(std::time::Duration::from_secs(5), silent[0].read(&mut byte)).await;
    assert!(matches!(oldest, Ok(Ok(0) | Err(_))), "the oldest silent connection is closed: {oldest:?}");
    for newer in &mut silent[1..] {
        let read = tokio::time::timeout(std::time::Duration::from_millis(100), newer.read(&mut byte)).await;
        assert!(read.is_err(), "a newer silent connection was closed: {read:?}");
    }
    server.shutdown().await;
}

/// An admission handler that waits (blocking its thread) until its gate
/// opens, then allows; it counts the requests that entered.
struct Gated {
    entered: std::sync::mpsc::Sender<()>,
    open: std::sync::Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
}

impl super::AdmissionHandler for Gated {
    fn admit(&self, req: &kube::core::admission::AdmissionRequest<kube::core::DynamicObject>) -> AdmissionResponse {
        self.entered.send(()).unwrap();
        let (open, opened) = &*self.open;
        let guard = open.lock().unwrap();
        let (guard, _) = opened.wait_timeout_while(guard, std::time::Duration::from_secs(10), |open| !*open).unwrap();
        if *guard {
            AdmissionResponse::allow(req.uid.clone())
        } else {
            AdmissionResponse::deny(req.uid.clone(), super::Denied::new("the gate never opened"))
        }
    }
}

#[tokio::test]
async fn connections_beyond_the_limit_wait_while_every_one_is_busy() {
    let (ca, cert, key) = loopback_certificates();
    let (entered_tx, entered_rx) = std::sync::mpsc::channel();
    let open = std::sync::Arc::new((std::sync::Mutex::new(false), std::sync::Condvar::new()));
    let webhooks = webhooks().admission("/gated", Gated { entered: entered_tx, open: open.clone() });
    let server = WebhookServer::bind("127.0.0.1:0", ServerTls::from_pem(&cert, &key).unwrap(), webhooks).await.unwrap();
    let addr = server.local_addr();
    let body = serde_json::to_string(&admission_review("CREATE", Some(widget(json!({"color": "red"}))), None)).unwrap();
    let gated =
        format!("POST /gated HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
    let mut busy = Vec::new();
    for _ in 0..super::server::MAX_CONNECTIONS {
        let (ca, gated) = (ca.clone(), gated.clone());
        busy.push(tokio::spawn(async move { exchange(addr, &ca, gated.as_bytes()).await }));
    }
    let entered = tokio::task::spawn_blocking(move || {
        (0..super::server::MAX_CONNECTIONS).all(|_| entered_rx.recv_timeout(std::time::Duration::from_secs(20)).is_ok())
    });
    assert!(entered.await.unwrap(), "every gated request reached its handler");
    let request = b"GET /convert HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    let waiting = tokio::spawn(async move { exchange(addr, &ca, request).await });
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    assert!(!waiting.is_finished(), "a connection beyond the limit was served while all were busy");
    *open.0.lock().unwrap() = true;
    open.1.notify_all();
    let answer = tokio::time::timeout(std::time::Duration::from_secs(5), waiting).await.expect("served once one ended");
    assert!(answer.unwrap().starts_with("HTTP/1.1 405"));
    for answer in busy {
        let answer = answer.await.unwrap();
        assert!(answer.contains(r#""allowed":true"#), "{answer}");
    }
    server.shutdown().await;
}
