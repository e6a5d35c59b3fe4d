// Package v1beta1 is the Go twin of the Rust fixture
// codegen-core/tests/fixtures/user/apis/auth/v1beta1: the User API with
// validation (seed 003).
//
// +groupName=auth.ilinux.io
package v1beta1
