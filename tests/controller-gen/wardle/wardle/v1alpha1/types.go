package v1alpha1

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
	// A name of another flunder or fischer, depending on the reference type.
	Reference string `json:"reference,omitempty"`
	// The reference type, defaults to "Flunder" if reference is set.
	ReferenceType *ReferenceType `json:"referenceType,omitempty"`
}

// The kind of object a flunder refers to.
type ReferenceType string

// The status of a flunder (empty).
type FlunderStatus struct{}

// A fischer: cluster-wide, lists the flunder names the server refuses.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster
type Fischer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// DisallowedFlunders holds a list of Flunder.Names that are disallowed.
	// +listType=atomic
	DisallowedFlunders []string `json:"disallowedFlunders,omitempty"`
}
