use codegen_macros::rbac;

/// Reconciles.
#[rbac(groups = "", resources = "configmaps", verbs = "get;list;watch")]
#[rbac(groups = "", resource = "pods", verbs = "get")]
#[rbac(groups = "", resources = "pods")]
pub struct Controller;

fn main() {
    let _ = Controller;
}
