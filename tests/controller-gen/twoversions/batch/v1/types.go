package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A task (old shape).
//
// +genclient
// +genclient:noStatus
// +kubebuilder:object:root=true
// +kubebuilder:deprecatedversion:warning="batch.example.com/v1 Task is deprecated; use v2"
type Task struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec TaskSpec `json:"spec"`
}

// What to run.
type TaskSpec struct {
	// Shell command.
	Command string `json:"command"`
}

// A list of tasks.
//
// +kubebuilder:object:root=true
type TaskList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Task `json:"items"`
}
