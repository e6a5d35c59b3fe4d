package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A student and the school they attend.
//
// +genclient
// +genclient:noStatus
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=stu
// +kubebuilder:printcolumn:name=School,type=string,JSONPath=`.spec.school`
// +kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, experimental-only"
type Student struct {
	// `apiVersion` and `kind`.
	metav1.TypeMeta `json:",inline"`
	// Standard object metadata.
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// The desired state.
	Spec StudentSpec `json:"spec"`
}

// What a student is.
type StudentSpec struct {
	// The student's name.
	Name string `json:"name"`
	// The school the student attends.
	School string `json:"school"`
}

// A list of students.
//
// +kubebuilder:object:root=true
type StudentList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Student `json:"items"`
}
