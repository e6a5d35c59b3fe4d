// Package v1 is the Go twin of the Rust fixture
// codegen-core/tests/fixtures/readonly/apis/audit/v1: a kind without spec,
// only read by clients.
//
// +groupName=audit.example.com
package v1
