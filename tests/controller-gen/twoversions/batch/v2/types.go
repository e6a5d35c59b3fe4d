package v2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A task.
//
// +genclient
// +genclient:noStatus
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=tk,categories=batch-jobs
// +kubebuilder:metadata:labels=app.kubernetes.io/part-of=tasks
type Task struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TaskSpec `json:"spec"`
}

// What to run.
type TaskSpec struct {
	// Program and arguments.
	// +kubebuilder:validation:MinItems=1
	Args []string `json:"args"`
	// Seconds before the task is killed.
	// +kubebuilder:validation:Minimum=1
	// +optional
	TimeoutSeconds *int64 `json:"timeoutSeconds,omitempty"`
}

// A list of tasks.
//
// +kubebuilder:object:root=true
type TaskList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Task `json:"items"`
}
