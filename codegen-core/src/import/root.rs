//! The root type of an imported kind: `#[genclient]`, `#[resource(..)]` from
//! the CRD's names, scope, subresources, columns and version flags, then
//! TypeMeta, metadata and the schema's other root properties.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::quote;
use serde_json::{Map, Value};

use super::read::{Crd, CrdVersion};
use super::types::{Field, Item, Ty, TypeBuilder, escape_rules, lit, type_name};
use crate::emit::crd::required_annotations;
use crate::ident::pluralize;

/// Annotations no user writes: controller-gen's version stamp, and the
/// copy `kubectl apply` keeps of what it applied (in `kubectl get -o yaml`).
const STAMPS: &[&str] = &["controller-gen.kubebuilder.io/version", "kubectl.kubernetes.io/last-applied-configuration"];

/// The Rust name of a kind (the kind itself when it is an identifier).
pub(crate) fn kind_type_name(kind: &str) -> String {
    if !kind.is_empty()
        && kind.chars().all(|c| c.is_ascii_alphanumeric())
        && kind.starts_with(|c: char| c.is_ascii_uppercase())
    {
        kind.to_string()
    } else {
        type_name(kind)
    }
}

/// Builds the root struct of `crd` at `version` (and the types below it) into `b`.
pub(crate) fn root(b: &mut TypeBuilder, crd: &Crd, version: &CrdVersion, multi_version: bool, name: &str) {
    let schema = &version.schema;
    let path = format!("spec.versions[{}].schema.openAPIV3Schema", version.name);
    let props = schema.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();

    // The root's own properties; apiVersion, kind and metadata are fixed.
    let mut body = schema.clone();
    let mut others = Map::new();
    for (k, v) in &props {
        if !matches!(k.as_str(), "apiVersion" | "kind" | "metadata") {
            others.insert(k.clone(), v.clone());
        }
    }
    body.insert("properties".into(), Value::Object(others));
    // A root that requires metadata (Argo's CRDs) says what always holds.
    if let Some(Value::Array(required)) = body.get_mut("required") {
        required.retain(|r| !matches!(r.as_str(), Some("apiVersion" | "kind" | "metadata")));
    }
    if let Some(meta) = props.get("metadata")
        && meta != &serde_json::json!({"type": "object"})
    {
        b.dropped.push((format!("{path}.metadata"), "the metadata schema (kube-codegen writes `type: object`)".into()));
    }
    let mut fields = b.fields(&body, name, &path);
    // A root that keeps unknown fields (Tekton's, Knative's CRDs): a map
    // holds what its properties do not name, as for a nested object, and
    // a status subresource gets a free-form `status`, which the generator
    // needs for its status verbs and which takes any value under such a
    // root anyway.
    let preserve = schema.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true));
    if preserve && (version.status_subresource || version.scale.is_some()) && !props.contains_key("status") {
        fields.push(Field {
            json: "status".into(),
            ident: "status".into(),
            ty: Ty::Json,
            option: true,
            optional: true,
            flatten: false,
            doc: Some("The status, free-form: the CRD does not describe it.".into()),
            validate: vec![quote!(preserve_unknown_fields)],
        });
    }
    if preserve {
        super::types::push_additional_fields(&mut fields);
    }
    // spec first, status last, as people read a kind.
    fields.sort_by_key(|f| match f.json.as_str() {
        _ if f.flatten => 3,
        "spec" => 0,
        "status" => 2,
        _ => 1,
    });
    let mut all = vec![
        Field {
            json: String::new(),
            ident: "types".into(),
            ty: Ty::TypeMeta,
            option: false,
            optional: false,
            flatten: true,
            doc: None,
            validate: Vec::new(),
        },
        Field {
            json: "metadata".into(),
            ident: "metadata".into(),
            ty: Ty::ObjectMeta,
            option: false,
            optional: false,
            flatten: false,
            doc: None,
            validate: Vec::new(),
        },
    ];
    for mut f in fields {
        if f.ident == "types" || f.ident == "metadata" {
            f.ident = format!("{}_", f.ident);
        }
        // A required status is what the CRD says: keep it without the generator's warning.
        if f.json == "status" && !f.optional && !f.option {
            f.validate.push(quote!(required));
        }
        all.push(f);
    }

    // Type-level markers: the root node's own keys.
    let mut rest = schema.clone();
    for k in ["type", "properties", "required", "description"] {
        rest.remove(k);
    }
    if preserve {
        // Said by the flattened map.
        rest.remove("x-kubernetes-preserve-unknown-fields");
    }
    escape_rules(&mut rest, schema.get("properties"));
    let validate = match b.root_markers(&mut rest, &path) {
        Ok(m) => m,
        Err(key) => {
            b.dropped.push((path.clone(), format!("`{key}` on the root schema")));
            Vec::new()
        }
    };
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        b.dropped.push((path.clone(), "the root schema is not `type: object`".into()));
    }

    let has_status = all.iter().any(|f| f.json == "status");
    let mut attrs = Vec::new();
    let mut genclient = Vec::new();
    if !crd.namespaced {
        genclient.push(quote!(cluster_scoped));
    }
    if has_status && !version.status_subresource {
        genclient.push(quote!(no_status));
    }
    attrs.push(if genclient.is_empty() { quote!(#[genclient]) } else { quote!(#[genclient(#(#genclient),*)]) });
    let mut res: Vec<TokenStream> = Vec::new();
    if name != crd.kind {
        let l = lit(&crd.kind);
        res.push(quote!(kind = #l));
    }
    // Written out also where controller-gen's plural differs from ours
    // (which would be a warning), so the CRD keeps its name either way.
    let ours = pluralize(&crd.kind, &BTreeMap::new());
    if crd.plural != ours || crate::plural::controller_gen_plural(&crd.kind) != ours {
        let l = lit(&crd.plural);
        res.push(quote!(plural = #l));
    }
    if let Some(s) = &crd.singular
        && *s != crd.kind.to_lowercase()
    {
        let l = lit(s);
        res.push(quote!(singular = #l));
    }
    if let Some(l) = &crd.list_kind
        && *l != format!("{}List", crd.kind)
    {
        let l = lit(l);
        res.push(quote!(list_kind = #l));
    }
    for (key, list) in [("short_names", &crd.short_names), ("categories", &crd.categories)] {
        if !list.is_empty() {
            let key = quote::format_ident!("{key}");
            let lits = list.iter().map(|s| lit(s));
            res.push(quote!(#key(#(#lits),*)));
        }
    }
    if version.status_subresource {
        res.push(quote!(subresource(status)));
    }
    if let Some((spec, status, selector)) = &version.scale {
        let (spec, status) = (lit(spec), lit(status));
        let selector = selector.as_ref().map(|s| {
            let l = lit(s);
            quote!(, label_selector_path = #l)
        });
        res.push(quote!(subresource(scale(spec_replicas_path = #spec, status_replicas_path = #status #selector))));
    }
    // A column reading what the schema does not declare shows `<none>` on
    // the server, and is an error of the generator: left out, said.
    // The root's `metadata` as the generator writes it (`type: object`,
    // under which any path is taken): columns of metadata fields stay.
    let mut walked = super::types::generator_keys_only(&Value::Object(schema.clone()));
    if let Some(Value::Object(properties)) = walked.get_mut("properties") {
        properties.insert("metadata".into(), serde_json::json!({"type": "object"}));
    }
    let typed: Option<crate::emit::schema::JsonSchemaProps> = serde_json::from_value(walked).ok();
    for c in &version.printer_columns {
        if let (Some(typed), Some(json_path)) = (&typed, c.get("jsonPath").and_then(Value::as_str))
            && let Ok(steps) = crate::jsonpath::parse_column_path(json_path)
            && let crate::emit::schema::Walk::Missing { .. } = crate::emit::schema::walk(typed, &steps)
        {
            let column = c.get("name").and_then(Value::as_str).unwrap_or_default();
            b.dropped.push((
                format!("spec.versions[{}].additionalPrinterColumns", version.name),
                format!("the printer column `{column}`, whose `{json_path}` is not in the schema"),
            ));
            continue;
        }
        let mut parts = Vec::new();
        for key in ["name", "type", "jsonPath", "description", "format"] {
            if let Some(v) = c.get(key).and_then(Value::as_str) {
                let l = lit(v);
                parts.push(match key {
                    "name" => quote!(name = #l),
                    "type" => quote!(type = #l),
                    "jsonPath" => quote!(json_path = #l),
                    "description" => quote!(description = #l),
                    _ => quote!(format = #l),
                });
            }
        }
        if let Some(p) = c.get("priority").and_then(Value::as_i64) {
            let p = proc_macro2::Literal::i64_unsuffixed(p);
            parts.push(quote!(priority = #p));
        }
        res.push(quote!(printcolumn(#(#parts),*)));
    }
    for f in &version.selectable_fields {
        let l = lit(f);
        res.push(quote!(selectable_field(json_path = #l)));
    }
    if multi_version && version.storage {
        res.push(quote!(storage));
    }
    if !version.served {
        res.push(quote!(served = false));
    }
    if version.deprecated {
        res.push(match &version.deprecation_warning {
            Some(w) => {
                let l = lit(w);
                quote!(deprecated = #l)
            }
            None => quote!(deprecated),
        });
    }
    let implied = required_annotations(&crd.group);
    let annotations: Vec<String> = crd
        .annotations
        .iter()
        .filter(|(k, v)| !STAMPS.contains(&k.as_str()) && implied.get(*k) != Some(*v))
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for (key, list) in
        [("annotations", annotations), ("labels", crd.labels.iter().map(|(k, v)| format!("{k}={v}")).collect())]
    {
        if !list.is_empty() {
            let key = quote::format_ident!("{key}");
            let lits = list.iter().map(|s| lit(s));
            res.push(quote!(#key(#(#lits),*)));
        }
    }
    if !res.is_empty() {
        attrs.push(quote!(#[resource(#(#res),*)]));
    }
    let doc = schema.get("description").and_then(Value::as_str).map(String::from);
    b.paths.insert(name.to_string(), path);
    b.items.push(Item::Struct { name: name.to_string(), doc, fields: all, validate, root: attrs });
}
