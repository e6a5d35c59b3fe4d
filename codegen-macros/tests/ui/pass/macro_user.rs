//! Macro mode: the seed's User kind, generated inline.
use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// A user of the cluster.
#[genclient(group = "auth.ilinux.io", version = "v1beta1", no_status)]
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[resource(short_names("u"))]
pub struct User {
    #[serde(flatten, default)]
    pub types: TypeMeta,
    #[serde(default)]
    pub metadata: ObjectMeta,
    pub spec: UserSpec,
}

/// Who the user is.
#[derive(Clone, Debug, Default, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct UserSpec {
    /// Numeric user id.
    #[serde(rename = "userID")]
    #[validate(minimum = 1, maximum = 65535)]
    pub user_id: i32,
    /// Groups.
    #[serde(default)]
    pub groups: Vec<String>,
}

fn main() {
    let crd = User::crd();
    assert_eq!(crd.metadata.name.as_deref(), Some("users.auth.ilinux.io"));
    assert_eq!(User::CRD_NAME, "users.auth.ilinux.io");
    assert!(User::CRD_YAML.contains("userID"));
    let u = User::new("alice", UserSpec { user_id: 7, groups: vec![] });
    assert_eq!(u.types.kind, "User");
    let _list: UserList = kube::core::ObjectList { types: Default::default(), metadata: Default::default(), items: vec![u] };
    fn _client(c: kube::Client) -> UserClient {
        User::client(c, "default")
    }
    fn _informer(f: &codegen_runtime::factory::SharedInformerFactory) -> UserInformer {
        User::informer(f)
    }
    fn _lister(i: &UserInformer) -> UserLister {
        i.lister()
    }
}
