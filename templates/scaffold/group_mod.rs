//! The `{{ group }}` API group.

// kube-codegen create api adds the modules of new versions above this line.
// +kube-codegen:scaffold:versions
