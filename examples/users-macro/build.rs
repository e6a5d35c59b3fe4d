//! build.rs mode: generate the clientset, listers, informers and CRD of
//! `src/built/apis` into `OUT_DIR` (the same code as `kube-codegen all
//! src/built/apis auth:v1beta1` but the fake clientset, which `Builder::new`
//! leaves out unless `.generators("all")` asks for it). Cargo reruns this
//! only when those files change.

fn main() -> Result<(), codegen_core::BuildError> {
    codegen_core::Builder::new("src/built/apis").group_versions("auth:v1beta1").write_to_out_dir()?;
    Ok(())
}
