// Not declared by any `mod`: the compiler never reads it, nor does kube-codegen.
pub struct Unfinished {
