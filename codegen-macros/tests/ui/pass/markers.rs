use codegen_macros::{ApiType, genclient};

codegen_macros::group_name!("example.k8s.io");

/// A kind with every kind of marker.
#[genclient(no_status, skip_verbs(delete_collection), method(name = "get_scale", verb = "get", subresource = "scale", result = "Scale"))]
#[derive(Clone, ApiType)]
#[resource(plural = "students", short_names("stu"), categories("all"), subresource(scale(spec_replicas_path = ".spec.replicas", status_replicas_path = ".status.replicas")), printcolumn(name = "School", type = "string", json_path = ".spec.school"))]
pub struct Student {
    #[validate(minimum = 1, maximum = 65535, exclusive_maximum, multiple_of = 1)]
    pub id: i32,
    #[validate(min_length = 1, max_length = 63, pattern = "^[a-z]+$", format = "hostname", default = "a")]
    pub name: String,
    #[validate(enum_values("a", "b"), nullable, optional)]
    pub letter: Option<String>,
    #[validate(min_items = 1, max_items = 3, list_type = "set", items(max_length = 10))]
    pub tags: Vec<String>,
    #[validate(min_properties = 1, max_properties = 5, map_type = "granular", required)]
    pub labels: std::collections::BTreeMap<String, String>,
    #[validate(preserve_unknown_fields, embedded_resource)]
    pub raw: (),
    #[validate(int_or_string, rule(rule = "self != ''", message = "empty", reason = "FieldValueInvalid"))]
    pub port: String,
    #[validate(default_json = r#"{"a": 1}"#)]
    pub obj: (),
}

fn main() {
    assert_eq!(GROUP_NAME, "example.k8s.io");
}
