package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Something for sale.
//
// +genclient
// +genclient:noStatus
// +kubebuilder:object:root=true
type Product struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ProductSpec `json:"spec"`
	// Labels shown in the shop's catalogue; not the object's labels (its
	// apply configuration's `with_labels` sets this field).
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// Product details.
type ProductSpec struct {
	// Price in cents.
	// +kubebuilder:validation:Minimum=0
	Price int64 `json:"price"`
	// Weight in kilograms (Rust: f64; needs crd:allowDangerousTypes=true).
	// +kubebuilder:validation:Format=double
	// +optional
	Weight float64 `json:"weight,omitempty"`
}

// A list of products.
//
// +kubebuilder:object:root=true
type ProductList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Product `json:"items"`
}
