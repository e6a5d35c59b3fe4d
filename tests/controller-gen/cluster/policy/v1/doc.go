// Package v1 is the Go twin of the Rust fixture
// codegen-core/tests/fixtures/cluster/apis/policy/v1: cluster-scoped kinds.
//
// +groupName=policy.example.com
package v1
