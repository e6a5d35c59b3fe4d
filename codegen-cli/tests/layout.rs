//! docs/layout.md: the generated code in a crate of its own. The API types
//! live in `layout_types`; `kube-codegen all` runs with `--output-dir` into
//! `layout_client` and `--apis-module layout_types::apis`; the client crate
//! builds under `#![deny(warnings)]` and its unit test drives the generated
//! clientset (with a hand-written `<kind>_expansion.rs`, which the generator
//! declares and leaves alone), informer and lister on the fake API server.

#[path = "../../tests/support/scratch_crate.rs"]
mod scratch_crate;

use std::path::Path;
use std::process::Command;

use scratch_crate::ScratchCrate;

const TYPES_RS: &str = r#"use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// A student.
#[genclient]
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[resource(subresource(status))]
pub struct Student {
    #[serde(flatten, default)]
    pub types: TypeMeta,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: StudentSpec,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<StudentStatus>,
}

/// What a student is.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct StudentSpec {
    /// School.
    pub school: String,
}

/// Where a student is.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
pub struct StudentStatus {
    /// Enrolled.
    pub enrolled: bool,
}
"#;

const CLIENT_LIB_RS: &str = r#"//! The generated clients of `layout_types`, in a crate of their own.
#![deny(warnings)]
#![allow(missing_docs)]

#[rustfmt::skip]
pub mod client;

#[cfg(test)]
mod tests {
    use codegen_runtime::client::{CreateOptions, GetOptions};
    use layout_types::apis::example::v1::{Student, StudentSpec};

    use crate::client::{fake, informers::SharedInformerFactory};

    fn student(name: &str) -> Student {
        let mut s = Student::new(name, StudentSpec { school: "north".into() });
        s.metadata.namespace = Some("default".into());
        s
    }

    #[tokio::test]
    async fn clientset_informer_and_lister_of_another_crates_types() {
        let cs = fake::Clientset::new([student("wang").into()]).unwrap();
        let students = cs.example_v1().students("default");
        assert_eq!(students.namespace_of(), Some("default"), "the hand-written expansion is part of the client");
        students.create(&student("li"), &CreateOptions::default()).await.unwrap();
        assert_eq!(students.get("wang", &GetOptions::default()).await.unwrap().spec.school, "north");

        let factory = SharedInformerFactory::new(cs.client().clone(), None);
        let informer = factory.example().v1().students();
        let lister = informer.lister();
        informer.informer();
        factory.start();
        assert!(factory.wait_for_cache_sync().await.values().all(|synced| *synced));
        let mut names: Vec<String> = lister
            .list(&codegen_runtime::lister::everything())
            .iter()
            .filter_map(|s| s.metadata.name.clone())
            .collect();
        names.sort();
        assert_eq!(names, ["li", "wang"]);
        factory.shutdown().await;
    }
}
"#;

const EXPANSION_RS: &str = r#"//! Hand-written methods of the Student client.
use super::StudentClient;

impl StudentClient {
    /// The namespace this client works in.
    pub fn namespace_of(&self) -> Option<&str> {
        self.inner().namespace()
    }
}
"#;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn generated_clients_build_and_run_in_a_crate_of_their_own() {
    let ws = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let types = ScratchCrate::new(ws, "layout_types");
    let client = ScratchCrate::new(ws, "layout_client");
    for krate in [&types, &client] {
        let _ = std::fs::remove_dir_all(krate.dir.join("src"));
        let _ = std::fs::remove_dir_all(krate.dir.join("crd"));
    }
    let apis = types.dir.join("src/apis");
    write(&types.dir.join("src/lib.rs"), "//! The API types.\n#![allow(missing_docs)]\npub mod apis;\n");
    write(&apis.join("mod.rs"), "pub mod example;\n");
    write(&apis.join("example/mod.rs"), "pub mod v1;\n");
    write(
        &apis.join("example/v1/mod.rs"),
        "codegen_macros::group_name!(\"example.k8s.io\");\n\nmod types;\npub use types::*;\n\nmod register;\npub use register::*;\n",
    );
    write(&apis.join("example/v1/types.rs"), TYPES_RS);
    types.write_manifest("");
    // A hand-written expansion of the generated client (client-gen's
    // `<kind>_expansion.go`), there before the generator runs.
    let expansion = client.dir.join("src/client/clientset/example/v1/student_expansion.rs");
    write(&expansion, EXPANSION_RS);

    let out = Command::new(env!("CARGO_BIN_EXE_kube-codegen"))
        .args(["all", "layout_types/src/apis", "example:v1"])
        .args(["--output-dir", "layout_client/src/client", "--crd-dir", "layout_client/crd"])
        .args(["--apis-module", "layout_types::apis"])
        .current_dir(&types.root)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(apis.join("example/v1/register.rs").is_file(), "the register code stays with the types");
    assert!(client.dir.join("crd/example.k8s.io_students.yaml").is_file());
    let clientset = std::fs::read_to_string(client.dir.join("src/client/clientset/example/v1/student.rs")).unwrap();
    assert!(clientset.contains("use layout_types::apis::example::v1::Student;"), "{clientset}");
    assert_eq!(std::fs::read_to_string(&expansion).unwrap(), EXPANSION_RS, "the expansion is never touched");

    write(&client.dir.join("src/lib.rs"), CLIENT_LIB_RS);
    client.write_manifest(
        "layout_types = { path = \"../layout_types\" }\ntokio = { version = \"1\", features = [\"macros\", \"rt\"] }\n",
    );
    let out = client.cargo("test", &["--lib"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("test result: ok. 1 passed"), "{stdout}");
}
