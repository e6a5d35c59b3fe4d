// Package v1 holds types shared by several API groups; no kinds of its own
// (the Go twin of codegen-core/tests/fixtures/gateway/apis/common/v1).
package v1
