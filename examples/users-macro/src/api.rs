//! The seed's User API (`auth.ilinux.io/v1beta1`) in macro mode: the
//! `#[genclient(group, version)]` attribute generates everything inline —
//! `User::crd()`, `User::client(..)`, `User::informer(..)`, `UserList`,
//! `UserClient`, `UserLister`, `UserInformer` — with no generation step.

use codegen_macros::{ApiType, genclient};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::TypeMeta;
use serde::{Deserialize, Serialize};

/// A user of the cluster.
#[genclient(group = "auth.ilinux.io", version = "v1beta1", no_status)]
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[resource(short_names("u"), printcolumn(name = "UserID", type = "integer", json_path = ".spec.userID"))]
pub struct User {
    /// `apiVersion` and `kind`.
    #[serde(flatten, default)]
    pub types: TypeMeta,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Who the user is.
    pub spec: UserSpec,
}

/// Who the user is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "camelCase")]
pub struct UserSpec {
    /// Numeric user id.
    #[serde(rename = "userID")]
    #[validate(minimum = 1, maximum = 65535)]
    pub user_id: i32,
    /// Groups the user belongs to.
    #[serde(default)]
    pub groups: Vec<String>,
    /// Contact address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[validate(format = "email", max_length = 254)]
    pub email: Option<String>,
    /// Login password.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[validate(format = "password", min_length = 8)]
    pub password: Option<String>,
    /// Login shell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[validate(enum_values("bash", "zsh", "fish"), default = "bash")]
    pub shell: Option<String>,
    /// Role of the user.
    #[serde(default)]
    pub role: Role,
}

/// What the user may do.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, ApiType)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Full access.
    Admin,
    /// Read and write.
    #[default]
    Editor,
    /// Read only.
    Viewer,
}
