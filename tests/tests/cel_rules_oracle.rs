//! Differential test of the CEL rule check against kube-apiserver: for each
//! rule, kube-codegen warns about it exactly when the API server refuses to
//! create the CRD. The rules are ones the check decides: syntax, the
//! properties a rule names (free-form fields included, through index
//! steps), `oldSelf` where the server cannot match old and new values,
//! `field_path`, `message_expression`, a plain field met by a literal of
//! another type (`self.minReplicas == 'a'`), and the cost budget. Other
//! type errors, which the API server also refuses, are not checked when
//! generating and are left out here (see
//! `codegen-core/src/emit/cel_check.rs`).

use std::path::Path;

use anyhow::{Context, Result};
use codegen_core::{GeneratorKind, GroupVersions, Mode, Settings};
use codegen_testenv::TestEnv;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, DeleteParams, PostParams};

const MOD_RS: &str = "codegen_macros::group_name!(\"cel.example.com\");\n\nmod types;\npub use types::*;\n";

/// The CRD kube-codegen writes for a Scaler whose spec carries `rule`, or
/// the rendered warnings about the rule. The spec's replica bounds are a
/// struct flattened into it; with `on_flattened` the rule is written on
/// that struct, and so it names the spec's other fields from there (the
/// CRD is the same either way).
fn generate(root: &Path, rule: &str, on_flattened: bool) -> Result<String, String> {
    let (on_spec, on_bounds) = if on_flattened {
        (String::new(), format!("#[validate(rule(rule = {rule:?}))]\n"))
    } else {
        (format!("#[validate(rule(rule = {rule:?}))]\n"), String::new())
    };
    let types = format!(
        "use codegen_macros::{{ApiType, genclient}};\n\
         use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
         use serde::{{Deserialize, Serialize}};\n\n\
         /// A scaler.\n\
         #[genclient(no_status)]\n\
         #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
         pub struct Scaler {{\n    #[serde(flatten, default)]\n    pub types: kube::core::TypeMeta,\n    #[serde(default)]\n    pub metadata: ObjectMeta,\n    pub spec: ScalerSpec,\n}}\n\n\
         /// How to scale.\n\
         #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
         #[serde(rename_all = \"camelCase\")]\n\
         {on_spec}\
         pub struct ScalerSpec {{\n\
         \x20   /// The bounds.\n    #[serde(flatten)]\n    pub bounds: Bounds,\n\
         \x20   /// Mode.\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub mode: Option<String>,\n\
         \x20   /// A dashed name.\n    #[serde(rename = \"x-y\", default)]\n    pub x_y: String,\n\
         \x20   /// Labels.\n    #[serde(default)]\n    pub labels: std::collections::BTreeMap<String, String>,\n\
         \x20   /// Targets.\n    #[serde(default)]\n    pub targets: Vec<Target>,\n\
         \x20   /// Targets by route.\n    #[serde(default)]\n    pub routes: std::collections::BTreeMap<String, Target>,\n\
         }}\n\n\
         /// Replica bounds.\n\
         #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
         #[serde(rename_all = \"camelCase\")]\n\
         {on_bounds}\
         pub struct Bounds {{\n\
         \x20   /// Fewest.\n    pub min_replicas: i32,\n\
         \x20   /// Most.\n    pub max_replicas: i32,\n\
         }}\n\n\
         /// A target.\n\
         #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
         pub struct Target {{\n    /// Its name.\n    pub name: String,\n}}\n"
    );
    match write_crd(root, &types) {
        Ok(report) if report.warnings.is_empty() => {
            Ok(std::fs::read_to_string(root.join("crd/cel.example.com_scalers.yaml")).unwrap())
        }
        Ok(report) => Err(codegen_core::diag::render_all(&report.warnings)),
        Err(diags) => panic!("{}", codegen_core::diag::render_all(&diags)),
    }
}

/// Writes the package `cel/v1` with `types` under `root` and generates its
/// CRD into `root/crd`.
fn write_crd(root: &Path, types: &str) -> Result<codegen_core::Report, Vec<codegen_core::Diagnostic>> {
    let dir = root.join("apis/cel/v1");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mod.rs"), MOD_RS).unwrap();
    std::fs::write(dir.join("types.rs"), types).unwrap();
    let settings = Settings::new(root.join("apis"))
        .with_output_dir(root.join("client"))
        .with_crd_dir(root.join("crd"))
        .with_generators([GeneratorKind::Crd])
        .with_group(GroupVersions::parse("cel:v1").unwrap());
    codegen_core::run(&settings, Mode::Write)
}

/// Whether the API server creates the CRD `base` with `rule` as the spec's
/// only rule (under a group of its own, deleted again).
async fn server_accepts(crds: &Api<CustomResourceDefinition>, base: &str, rule: &str, i: usize) -> Result<bool> {
    let mut crd: CustomResourceDefinition = serde_yaml::from_str(base)?;
    let group = format!("c{i}.cel.example.com");
    crd.metadata.name = Some(format!("scalers.{group}"));
    crd.spec.group = group;
    let spec = crd.spec.versions[0]
        .schema
        .as_mut()
        .and_then(|s| s.open_api_v3_schema.as_mut())
        .and_then(|s| s.properties.as_mut())
        .and_then(|p| p.get_mut("spec"))
        .context("the spec's schema")?;
    let rules = spec.x_kubernetes_validations.as_mut().context("the placeholder rule")?;
    rules[0].rule = rule.to_string();
    match crds.create(&PostParams::default(), &crd).await {
        Ok(_) => {
            crds.delete(&format!("scalers.c{i}.cel.example.com"), &DeleteParams::default()).await?;
            Ok(true)
        }
        Err(kube::Error::Api(status)) if status.code == 422 => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[tokio::test]
async fn rules_are_warned_of_as_the_api_server_refuses_them() -> Result<()> {
    let rules = [
        "self.minReplicas <= self.maxReplicas",
        "self.minReplicas <= self.maxReplica",
        "has(self.mode) ? self.mode != '' : true",
        "has(self.modes)",
        "self.x__dash__y.size() < 10",
        "self.x_y.size() < 10",
        "self.labels.all(k, k.size() < 64)",
        "!has(self.labels.app) || self.labels.app != ''",
        "self.targets.all(t, t.name != '')",
        "self.targets.all(t, t.name != self.nom)",
        "self.minReplicas <=",
        "self.minReplicas < (self.maxReplicas",
        "[self.minReplicas, self.maxReplicas].all(n, n >= 0)",
        "{'a': self.minReplicas}.a >= 0",
        "self.spec.minReplicas >= 0",
        "self.?mode.orValue('') != 'off'",
        "self.?modes.hasValue()",
        "has(self.mode) && self.minReplicas > 0",
        "self.targets.all(t, t.nmae != '')",
        "self.targets.all(t, t.?name.orValue('') != '')",
        // Index steps into a list's items and a map's values.
        "self.targets[0].name != ''",
        "self.targets[0].nmae != ''",
        "self.routes['a'].name != ''",
        "self.routes['a'].nmae != ''",
        "self.routes[?'a'].?nmae.hasValue()",
        "self.routes.all(k, self.routes[k].nmae != '')",
        "has(self.mode) && self.routes[self.mode].name != ''",
        "has(self.mode) && self.routes[self.mdoe].name != ''",
        // A plain field met by a literal of another type.
        "self.minReplicas == '1'",
        "self.minReplicas + 1 > self.maxReplicas",
        "self.minReplicas == 1.0",
        "self.minReplicas < 1.5",
        "self.minReplicas < 2u",
        "self.minReplicas == 2u",
        "self.minReplicas + 1.5 > 2.0",
        "has(self.mode) && self.mode == 1",
        "self.x__dash__y + 1 == 'a1'",
        "self.labels['a'] == true",
        "self.targets.all(t, t.name == 0)",
        // The cost budget: the labels and targets have no bounds.
        "self.targets.all(t, t.name.matches('^[a-z]+$'))",
        "self.targets.all(t, t.name.startsWith('a'))",
        "self.labels.all(k, self.labels[k].contains('x'))",
        "self.labels.all(k, k.matches('^[a-z]+$'))",
    ];
    let dir = tempfile::tempdir()?;
    let base = generate(&dir.path().join("base"), "self.minReplicas >= 0", false).map_err(anyhow::Error::msg)?;
    let env = TestEnv::shared();
    let crds: Api<CustomResourceDefinition> = Api::all(env.admin_client().await?);
    let mut disagreements = Vec::new();
    let mut refused = 0;
    for (i, rule) in rules.iter().enumerate() {
        let theirs = server_accepts(&crds, &base, rule, i).await?;
        for on_flattened in [false, true] {
            let ours = generate(&dir.path().join(format!("r{i}-{on_flattened}")), rule, on_flattened);
            if let Err(rendered) = &ours {
                assert!(rendered.contains("CEL rule"), "{rule}: a warning for another reason:\n{rendered}");
                refused += 1;
            }
            if ours.is_ok() != theirs {
                let place = if on_flattened { "on the flattened struct" } else { "on the spec" };
                disagreements.push(format!(
                    "{rule} ({place}): kube-codegen {}, kube-apiserver {}",
                    verdict(ours.is_ok()),
                    verdict(theirs)
                ));
            }
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    assert!(refused >= 5, "the list holds rules both refuse ({refused})");
    Ok(())
}

fn verdict(accepted: bool) -> &'static str {
    if accepted { "accepts" } else { "refuses" }
}

/// One rule text written on two types is judged on each type's own node:
/// the warning goes to the type whose schema lacks the names, only.
#[test]
fn a_rule_is_judged_where_it_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let types = "use codegen_macros::{ApiType, genclient};\n\
                 use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
                 use serde::{Deserialize, Serialize};\n\n\
                 /// A scaler.\n\
                 #[genclient(no_status)]\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 pub struct Scaler {\n    #[serde(flatten, default)]\n    pub types: kube::core::TypeMeta,\n    #[serde(default)]\n    pub metadata: ObjectMeta,\n    pub spec: ScalerSpec,\n}\n\n\
                 /// Both ranges.\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 pub struct ScalerSpec {\n    /// Short names.\n    pub short: Short,\n    /// Long names.\n    pub long: Long,\n}\n\n\
                 /// A range with short names.\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 #[validate(rule(rule = \"self.min <= self.max\"))]\n\
                 pub struct Short {\n    /// Low.\n    pub min: i32,\n    /// High.\n    pub max: i32,\n}\n\n\
                 /// A range with long names.\n\
                 #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
                 #[validate(rule(rule = \"self.min <= self.max\"))]\n\
                 pub struct Long {\n    /// Low.\n    pub minimum: i32,\n    /// High.\n    pub maximum: i32,\n}\n";
    let report = write_crd(root, types).unwrap_or_else(|d| panic!("{}", codegen_core::diag::render_all(&d)));
    let lines: Vec<(String, usize)> =
        report.warnings.iter().map(|d| (d.message.clone(), d.location.as_ref().map_or(0, |l| l.line))).collect();
    let long_rule_line = types.lines().position(|l| l.contains("struct Long")).unwrap();
    assert_eq!(lines.len(), 2, "{lines:?}");
    for (message, line) in &lines {
        assert!(message.contains("self.min") || message.contains("self.max"), "{message}");
        // The rule's line, just above `pub struct Long` (1-based).
        assert_eq!(*line, long_rule_line, "{lines:?}");
    }
}

/// Types with `{spec}` on the spec, `{port}` on a plain list's items,
/// `{port_field}` on their field, `{volume}` on a list-map's items and
/// `{path_field}` on their field.
const PLACES: &str = "use codegen_macros::{ApiType, genclient};\n\
     use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
     use serde::{Deserialize, Serialize};\n\n\
     /// A scaler.\n\
     #[genclient(no_status)]\n\
     #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
     pub struct Scaler {\n    #[serde(flatten, default)]\n    pub types: kube::core::TypeMeta,\n    #[serde(default)]\n    pub metadata: ObjectMeta,\n    pub spec: ScalerSpec,\n}\n\n\
     /// How to scale.\n\
     #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
     {spec}\n\
     pub struct ScalerSpec {\n\
     \x20   /// Anything.\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    pub free: Option<serde_json::Value>,\n\
     \x20   /// Settings kept as they are.\n    #[serde(default, skip_serializing_if = \"Option::is_none\")]\n    \
     #[validate(schema_json = r#\"{\"type\": \"object\", \"x-kubernetes-preserve-unknown-fields\": true}\"#)]\n    pub config: Option<serde_json::Value>,\n\
     \x20   /// Fewest.\n    #[serde(default)]\n    pub min: i32,\n\
     \x20   /// Ports, a plain list.\n    #[serde(default)]\n    pub ports: Vec<Port>,\n\
     \x20   /// Volumes, a list-map.\n    #[serde(default)]\n    #[validate(list_type = \"map\", list_map_keys(\"name\"))]\n    pub volumes: Vec<Volume>,\n\
     }\n\n\
     /// A port.\n\
     #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
     {port}\n\
     pub struct Port {\n    /// Its number.\n    {port_field}\n    pub port: i32,\n}\n\n\
     /// A volume.\n\
     #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
     {volume}\n\
     pub struct Volume {\n    /// Its name.\n    pub name: String,\n    /// Where.\n    #[validate(max_length = 64)]\n    {path_field}\n    pub path: String,\n}\n";

/// Free-form fields, `oldSelf` below a plain list's items and a list-map's,
/// `immutable` there, and a rule's `field_path` and `message_expression`:
/// kube-codegen warns exactly when kube-apiserver refuses the CRD.
#[tokio::test]
async fn places_and_parts_are_warned_of_as_the_api_server_refuses_them() -> Result<()> {
    let rule = |r: &str| format!("#[validate(rule(rule = {r:?}))]");
    let with = |r: &str, part: &str| format!("#[validate(rule(rule = {r:?}, {part}))]");
    let immutable = "#[validate(immutable)]".to_string();
    // (place, attribute)
    let cases: Vec<(&str, String)> = vec![
        ("spec", rule("has(self.free)")),
        ("spec", rule("!has(self.config) || has(self.config.receivers)")),
        ("spec", rule("has(self.config)")),
        ("spec", rule("self.ports.all(p, p.port > 0)")),
        ("port", rule("self.port == oldSelf.port")),
        ("port", rule("self.port > 0")),
        ("volume", rule("self.path == oldSelf.path")),
        ("port_field", immutable.clone()),
        ("path_field", immutable),
        ("spec", with("self.min >= 0", "field_path = \".min\"")),
        ("spec", with("self.min >= 0", "field_path = \".mni\"")),
        ("spec", with("self.min >= 0", "field_path = \"min\"")),
        ("spec", with("self.min >= 0", "field_path = \".ports[0]\"")),
        ("spec", with("self.min >= 0", "message_expression = \"'min is ' + string(self.min)\"")),
        ("spec", with("self.min >= 0", "message_expression = \"'min is ' + string(self.mni)\"")),
        ("spec", with("self.min >= 0", "message_expression = \"'unterminated\"")),
    ];
    let dir = tempfile::tempdir()?;
    let env = TestEnv::shared();
    let crds: Api<CustomResourceDefinition> = Api::all(env.admin_client().await?);
    let mut disagreements = Vec::new();
    let mut refused = 0;
    for (i, (place, attr)) in cases.iter().enumerate() {
        let mut types = PLACES.to_string();
        for p in ["spec", "port", "port_field", "volume", "path_field"] {
            let text = if p == *place { attr.as_str() } else { "" };
            types = types.replace(&format!("{{{p}}}"), text);
        }
        let root = dir.path().join(format!("p{i}"));
        let report = write_crd(&root, &types).map_err(|d| anyhow::anyhow!(codegen_core::diag::render_all(&d)))?;
        let warned = !report.warnings.is_empty();
        let text = std::fs::read_to_string(root.join("crd/cel.example.com_scalers.yaml"))?;
        let mut crd: CustomResourceDefinition = serde_yaml::from_str(&text)?;
        let group = format!("p{i}.cel.example.com");
        crd.metadata.name = Some(format!("scalers.{group}"));
        crd.spec.group = group;
        let theirs = match crds.create(&PostParams::default(), &crd).await {
            Ok(_) => {
                crds.delete(&format!("scalers.p{i}.cel.example.com"), &DeleteParams::default()).await?;
                true
            }
            Err(kube::Error::Api(status)) if status.code == 422 => false,
            Err(e) => return Err(e.into()),
        };
        refused += usize::from(!theirs);
        if warned == theirs {
            disagreements.push(format!(
                "{attr} (on {place}): kube-codegen {}, kube-apiserver {}\n{}",
                verdict(!warned),
                verdict(theirs),
                codegen_core::diag::render_all(&report.warnings)
            ));
        }
    }
    assert!(disagreements.is_empty(), "{}", disagreements.join("\n"));
    assert!(refused >= 8, "the cases hold rules both refuse ({refused})");
    Ok(())
}
