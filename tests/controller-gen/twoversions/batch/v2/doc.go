// Package v2 is the Go twin of the Rust fixture
// codegen-core/tests/fixtures/twoversions/apis/batch/v2: one kind in two
// versions of a group.
//
// +groupName=batch.example.com
package v2
