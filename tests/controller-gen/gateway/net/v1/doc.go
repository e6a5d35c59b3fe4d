// Package v1 is the Go twin of the Rust fixture
// codegen-core/tests/fixtures/gateway/apis/net/v1: a cluster-scoped kind
// whose types live in a second file of the package and in the shared
// common/v1 package.
//
// +groupName=net.example.com
package v1
