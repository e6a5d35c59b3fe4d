// Package v1alpha1 is the Go twin of the Rust fixture
// codegen-core/tests/fixtures/wardle/apis/wardle/v1alpha1: kinds served by an
// aggregated API server (k8s.io/sample-apiserver), so no CRD.
//
// +kubebuilder:skip
// +groupName=wardle.example.com
package v1alpha1
