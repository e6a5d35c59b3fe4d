// Package v1 is the Student API (seed 001), the Go twin of the Rust fixture
// codegen-core/tests/fixtures/student/apis/example/v1.
//
// +groupName=example.k8s.io
package v1
