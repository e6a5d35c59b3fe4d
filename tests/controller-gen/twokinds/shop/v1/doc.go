// Package v1 is the Go twin of the Rust fixture
// codegen-core/tests/fixtures/twokinds/apis/shop/v1: two kinds in one
// package, one per file.
//
// +groupName=shop.example.com
package v1
