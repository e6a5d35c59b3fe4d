//! The API groups of this crate, one module per group.

// kube-codegen create api adds the modules of new groups above this line.
// +kube-codegen:scaffold:groups
