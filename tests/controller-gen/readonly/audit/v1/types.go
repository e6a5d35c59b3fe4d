package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An audit report, written by the system and only read by clients.
//
// +genclient
// +genclient:readonly
// +genclient:noStatus
// +kubebuilder:object:root=true
// +kubebuilder:printcolumn:name=Findings,type=integer,JSONPath=`.findings`
type Report struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Number of findings (Rust: u32).
	// +kubebuilder:validation:Minimum=0
	// +optional
	Findings int64 `json:"findings,omitempty"`
	// Finding details.
	// +optional
	Details []string `json:"details,omitempty"`
}

// A list of reports.
//
// +kubebuilder:object:root=true
type ReportList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Report `json:"items"`
}
