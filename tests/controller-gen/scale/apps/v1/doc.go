// Package v1 is the Go twin of the Rust fixture
// codegen-core/tests/fixtures/scale/apis/apps/v1: a kind with the scale
// subresource.
//
// +groupName=apps.example.com
package v1
