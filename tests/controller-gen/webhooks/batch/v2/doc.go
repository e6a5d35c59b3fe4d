// Package v2 is the Go twin of the Rust fixture
// tests/fixtures/conversion/apis/batch/v2: the storage version, with the
// defaulting and validating webhooks.
//
// +groupName=batch.example.com
package v2

// The webhooks (package-level markers, as kubebuilder writes them).
// +kubebuilder:webhook:path=/mutate-task,mutating=true,failurePolicy=fail,sideEffects=None,groups=batch.example.com,resources=tasks,verbs=create;update,versions=v2,name=mtask.batch.example.com,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-task,mutating=false,failurePolicy=fail,sideEffects=None,groups=batch.example.com,resources=tasks,verbs=create;update;delete,versions=v2,name=vtask.batch.example.com,admissionReviewVersions=v1
