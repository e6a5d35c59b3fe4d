//! A kind whose plural (client-gen's rules) differs from the one
//! controller-gen gives it (flect's) is a warning: the plural names the CRD,
//! so a CRD controller-gen wrote for the kind is another CRD. Naming the
//! plural, or a plural exception, silences it.

use std::path::Path;

use codegen_core::{GeneratorKind, GroupVersions, Mode, Settings};

const MOD_RS: &str = "codegen_macros::group_name!(\"people.example.com\");\n\nmod types;\npub use types::*;\n";

/// The CRD files and warnings (message, note, help) for `kind` with
/// `resource` above it (`""` for none).
fn generate(root: &Path, kind: &str, resource: &str, exception: Option<&str>) -> (Vec<String>, Vec<String>) {
    let types = format!(
        "use codegen_macros::{{ApiType, genclient}};\n\
         use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
         use serde::{{Deserialize, Serialize}};\n\n\
         /// Someone.\n\
         #[genclient(no_status)]\n\
         {resource}\n\
         #[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]\n\
         pub struct {kind} {{\n    #[serde(flatten, default)]\n    pub types: kube::core::TypeMeta,\n    #[serde(default)]\n    pub metadata: ObjectMeta,\n    /// Who.\n    #[serde(default)]\n    pub spec: Option<String>,\n}}\n"
    );
    let dir = root.join("apis/people/v1");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mod.rs"), MOD_RS).unwrap();
    std::fs::write(dir.join("types.rs"), types).unwrap();
    let mut settings = Settings::new(root.join("apis"))
        .with_output_dir(root.join("client"))
        .with_crd_dir(root.join("crd"))
        .with_generators([GeneratorKind::Crd])
        .with_group(GroupVersions::parse("people:v1").unwrap());
    if let Some(plural) = exception {
        settings = settings.with_plural_exception(kind, plural);
    }
    match codegen_core::run(&settings, Mode::Write) {
        Ok(report) => {
            let mut files: Vec<String> = std::fs::read_dir(root.join("crd"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            files.sort();
            let warnings =
                report.warnings.iter().map(|d| codegen_core::diag::render_all(std::slice::from_ref(d))).collect();
            (files, warnings)
        }
        Err(diags) => panic!("{}", codegen_core::diag::render_all(&diags)),
    }
}

#[test]
fn a_plural_controller_gen_would_not_give_is_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let (files, warnings) = generate(dir.path(), "Person", "", None);
    assert_eq!(files, ["people.example.com_persons.yaml"]);
    assert_eq!(warnings.len(), 1, "{warnings:#?}");
    let warning = &warnings[0];
    for part in [
        "kind `Person` gets the plural `persons` (client-gen's rules); controller-gen gives it `people`",
        "types.rs",
        "#[resource(plural = \"people\")]",
        "#[resource(plural = \"persons\")]",
    ] {
        assert!(warning.contains(part), "{part:?} in:\n{warning}");
    }
}

#[test]
fn a_named_plural_or_an_exception_silences_it() {
    for (resource, exception, file) in [
        ("#[resource(plural = \"people\")]", None, "people.example.com_people.yaml"),
        ("#[resource(plural = \"persons\")]", None, "people.example.com_persons.yaml"),
        ("", Some("People"), "people.example.com_people.yaml"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let (files, warnings) = generate(dir.path(), "Person", resource, exception);
        assert_eq!(files, [file], "{resource} {exception:?}");
        assert_eq!(warnings, Vec::<String>::new(), "{resource} {exception:?}");
    }
}

#[test]
fn plurals_both_tools_agree_on_are_quiet() {
    for (kind, file) in
        [("Student", "people.example.com_students.yaml"), ("Policy", "people.example.com_policies.yaml")]
    {
        let dir = tempfile::tempdir().unwrap();
        let (files, warnings) = generate(dir.path(), kind, "", None);
        assert_eq!(files, [file]);
        assert_eq!(warnings, Vec::<String>::new(), "{kind}");
    }
}
