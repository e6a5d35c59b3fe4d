package v1

// A key of a Secret in a given namespace.
type SecretKeyRef struct {
	// The Secret's namespace.
	// +kubebuilder:validation:MinLength=1
	Namespace string `json:"namespace"`
	// The Secret's name.
	// +kubebuilder:validation:MinLength=1
	Name string `json:"name"`
	// The key in the Secret.
	// +optional
	Key *string `json:"key,omitempty"`
}
