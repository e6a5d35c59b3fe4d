//! A macro-mode package spread over a module tree: the engine reads what the
//! `mod` declarations reach (`#[path]` included) and nothing else. The
//! directory also holds a file that does not parse and one with a broken
//! kind, neither declared; a kind behind `#[cfg(any())]` is broken too.
#[path = "package_module_tree/v1/mod.rs"]
mod v1;

fn main() {
    let crd = v1::Widget::crd();
    assert_eq!(crd.metadata.name.as_deref(), Some("widgets.tree.example.com"));
    let version = &crd.spec.versions[0];
    let schema = version.schema.as_ref().unwrap().open_api_v3_schema.as_ref().unwrap();
    let spec = &schema.properties.as_ref().unwrap()["spec"];
    let size = &spec.properties.as_ref().unwrap()["size"];
    // `Size` lives in `parts/size.rs`, reached through `#[path]`.
    assert_eq!(size.minimum, Some(1.0));
    assert!(v1::Widget::CRD_YAML.contains("name: widgets.tree.example.com"));
}
