// Package v1 is the Go twin of the Rust fixture
// codegen-core/tests/fixtures/deployment/apis/workloads/v1: a Deployment-like
// kind, a pod template, a label selector and the standard Ready column.
//
// +groupName=workloads.example.com
package v1
