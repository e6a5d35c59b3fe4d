package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	commonv1 "kube-codegen.invalid/controller-gen-twins/gateway/common/v1"
)

// A class of gateways, run by one controller.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,shortName=gc
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name=Controller,type=string,JSONPath=`.spec.controller.name`
type GatewayClass struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GatewayClassSpec `json:"spec"`
	// +optional
	Status *GatewayClassStatus `json:"status,omitempty"`
}

// What gateways of this class do.
// +kubebuilder:validation:XValidation:rule="self.listeners.all(l, l.port != 0)",message="every listener needs a port"
type GatewayClassSpec struct {
	// The controller that runs gateways of this class.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="controller is immutable"
	Controller GatewayController `json:"controller"`
	// The ports gateways listen on.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	Listeners []Listener `json:"listeners"`
	// TLS settings.
	// +optional
	TLS *TLSConfig `json:"tls,omitempty"`
	// Credentials of the controller.
	// +optional
	Credentials *commonv1.SecretKeyRef `json:"credentials,omitempty"`
	// How long the controller waits for a gateway to become ready.
	// +optional
	ReadyTimeout *metav1.Duration `json:"readyTimeout,omitempty"`
	// PEM bundle of the CAs the gateways trust.
	// +optional
	CABundle []byte `json:"caBundle,omitempty"`
}

// What the controller reports.
type GatewayClassStatus struct {
	// Whether the controller accepted the class.
	// +optional
	Accepted bool `json:"accepted,omitempty"`
}

// A list of gateway classes.
//
// +kubebuilder:object:root=true
type GatewayClassList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []GatewayClass `json:"items"`
}
