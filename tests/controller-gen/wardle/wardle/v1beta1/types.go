package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A flunder: refers to another flunder or to a fischer.
//
// +genclient
// +genclient:noStatus
// +kubebuilder:object:root=true
type Flunder struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   FlunderSpec   `json:"spec,omitempty"`
	Status FlunderStatus `json:"status,omitempty"`
}

// What a flunder refers to.
type FlunderSpec struct {
	// A name of another flunder, mutually exclusive to the FischerReference.
	FlunderReference string `json:"flunderReference,omitempty"`
	// A name of a fischer, mutually exclusive to the FlunderReference.
	FischerReference string `json:"fischerReference,omitempty"`
	// The reference type.
	ReferenceType ReferenceType `json:"referenceType,omitempty"`
}

// The kind of object a flunder refers to.
type ReferenceType string

// The status of a flunder (empty).
type FlunderStatus struct{}
