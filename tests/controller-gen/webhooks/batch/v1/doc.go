// Package v1 is the Go twin of the Rust fixture
// tests/fixtures/conversion/apis/batch/v1: a kind in two versions with
// conversion and admission webhooks (tests/tests/controller_gen_webhooks.rs).
//
// +groupName=batch.example.com
package v1
