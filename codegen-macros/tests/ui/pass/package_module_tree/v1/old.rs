//! Not declared by any `mod`: a kind that would not check.
#[genclient(version = "v2")]
#[derive(Clone, ApiType)]
pub struct Widget {
    pub spec: Missing,
}
