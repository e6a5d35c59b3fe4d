use codegen_macros::ApiType;
use serde::{Deserialize, Serialize};

/// A size in units.
#[derive(Clone, Copy, Debug, Default, Serialize, Deserialize, ApiType)]
#[serde(transparent)]
#[validate(minimum = 1)]
pub struct Size(pub i32);
