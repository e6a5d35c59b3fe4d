// Package v1beta1 is the Go twin of the Rust fixture
// codegen-core/tests/fixtures/wardle/apis/wardle/v1beta1: served by an
// aggregated API server, so no CRD.
//
// +kubebuilder:skip
// +groupName=wardle.example.com
package v1beta1
