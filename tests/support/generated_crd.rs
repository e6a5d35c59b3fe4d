//! A CRD generated from Rust source written in the test, installed on the
//! test server, and objects checked against it: the server's verdict on a
//! dry-run create next to the runtime's validation of the same object.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use codegen_core::{GeneratorKind, GroupVersions, Mode, Settings};
use codegen_testenv::TestEnv;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};

/// A field error as a triple: field, reason, message.
pub type Cause = (String, String, String);

/// The CRD `kube-codegen crd` writes for package `group_dir` (version `v1`)
/// holding `types_rs`, read from `crd_file` of its CRD directory.
pub fn generate(root: &Path, group_dir: &str, group: &str, types_rs: &str, crd_file: &str) -> CustomResourceDefinition {
    let dir = root.join(format!("apis/{group_dir}/v1"));
    std::fs::create_dir_all(&dir).unwrap();
    let mod_rs = format!("codegen_macros::group_name!(\"{group}\");\n\nmod types;\npub use types::*;\n");
    std::fs::write(dir.join("mod.rs"), mod_rs).unwrap();
    std::fs::write(dir.join("types.rs"), types_rs).unwrap();
    let settings = Settings::new(root.join("apis"))
        .with_output_dir(root.join("client"))
        .with_crd_dir(root.join("crd"))
        .with_generators([GeneratorKind::Crd])
        .with_group(GroupVersions::parse(&format!("{group_dir}:v1")).unwrap());
    if let Err(diags) = codegen_core::run(&settings, Mode::Write) {
        panic!("{}", codegen_core::diag::render_all(&diags));
    }
    let text = std::fs::read_to_string(root.join("crd").join(crd_file)).unwrap();
    serde_yaml::from_str(&text).unwrap()
}

/// A CRD installed on the test server, with a namespace to create its
/// objects in; [`Installed::remove`] deletes the CRD.
pub struct Installed {
    crds: Api<CustomResourceDefinition>,
    name: String,
    gvk: GroupVersionKind,
    /// The kind's objects in the namespace.
    pub api: Api<DynamicObject>,
    /// The CRD's first version's schema as the runtime's validation reads
    /// it, with the patterns' Rust spellings.
    pub schema: &'static str,
}

/// Installs `crd` (an earlier run's copy is replaced) and waits until it
/// is established.
pub async fn install(env: &TestEnv, crd: &CustomResourceDefinition, namespace: &str) -> Result<Installed> {
    let client = env.admin_client().await?;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let name = crd.metadata.name.clone().expect("the CRD has a name");
    let _ = crds.delete(&name, &Default::default()).await;
    let mut created = false;
    for _ in 0..50 {
        match crds.create(&PostParams::default(), crd).await {
            Ok(_) => {
                created = true;
                break;
            }
            // The deletion of an earlier run's CRD may still be going on.
            Err(kube::Error::Api(s)) if s.code == 409 => tokio::time::sleep(Duration::from_millis(200)).await,
            Err(e) => return Err(e.into()),
        }
    }
    assert!(created, "the CRD {name} is created");
    env.wait_crd_established(&name, Duration::from_secs(60)).await?;
    let ns = env.create_namespace(namespace).await?;
    let version = &crd.spec.versions[0];
    let gvk = GroupVersionKind::gvk(&crd.spec.group, &version.name, &crd.spec.names.kind);
    let api = Api::namespaced_with(client, &ns, &ApiResource::from_gvk(&gvk));
    let mut schema = serde_json::to_value(&version.schema.as_ref().expect("a schema").open_api_v3_schema)?;
    codegen_core::emit::validate::add_rust_patterns(&mut schema);
    let schema: &'static str = Box::leak(schema.to_string().into_boxed_str());
    Ok(Installed { crds, name, gvk, api, schema })
}

impl Installed {
    /// An object of the kind named `name` with `spec`.
    pub fn object(&self, name: &str, spec: serde_json::Value) -> DynamicObject {
        let api_version = format!("{}/{}", self.gvk.group, self.gvk.version);
        serde_json::from_value(serde_json::json!({
            "apiVersion": api_version,
            "kind": self.gvk.kind,
            "metadata": {"name": name},
            "spec": spec,
        }))
        .expect("an object")
    }

    /// The server's verdict on a dry-run create of `object` ("created" or
    /// "refused <code>") with its causes, and the runtime's causes for it.
    pub async fn verdicts(&self, object: &DynamicObject) -> Result<(String, Vec<Cause>, Vec<Cause>)> {
        let pp = PostParams { dry_run: true, ..Default::default() };
        let (got, mut theirs) = match self.api.create(&pp, object).await {
            Ok(_) => ("created".to_string(), Vec::new()),
            Err(kube::Error::Api(s)) => {
                let causes = s.details.map(|d| d.causes).unwrap_or_default();
                let causes: Vec<_> = causes.into_iter().map(|c| (c.field, c.reason, c.message)).collect();
                (format!("refused {}", s.code), causes)
            }
            Err(e) => (format!("error {e}"), Vec::new()),
        };
        let mut ours: Vec<_> =
            match codegen_runtime::validation::validate_value(serde_json::to_value(object)?, self.schema) {
                Ok(()) => Vec::new(),
                Err(errors) => errors.0.into_iter().map(|e| (e.field, e.reason.to_string(), e.message)).collect(),
            };
        ours.sort();
        theirs.sort();
        Ok((got, theirs, ours))
    }

    /// Deletes the CRD.
    pub async fn remove(self) -> Result<()> {
        self.crds.delete(&self.name, &Default::default()).await?;
        Ok(())
    }
}
