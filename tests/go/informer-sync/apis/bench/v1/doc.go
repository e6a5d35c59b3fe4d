// Package v1 is the Widget custom resource of the informer_sync benchmark
// (tests/benches/informer_sync.rs), group bench.kube-codegen.dev.
//
// +k8s:deepcopy-gen=package
// +groupName=bench.kube-codegen.dev
package v1
