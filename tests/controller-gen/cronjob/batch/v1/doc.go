// Package v1 is the Go twin of the Rust fixture
// codegen-core/tests/fixtures/cronjob/apis/batch/v1: a CronJob-like kind,
// Kubernetes' own JobTemplateSpec and ObjectReference inside a custom
// resource.
//
// +groupName=batch.example.com
package v1
