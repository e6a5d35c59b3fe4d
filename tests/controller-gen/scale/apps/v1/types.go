package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// A replicated web application.
//
// +genclient
// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s.io/api/autoscaling/v1.Scale,result=k8s.io/api/autoscaling/v1.Scale
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=wa
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name=Desired,type=integer,JSONPath=`.spec.replicas`
// +kubebuilder:printcolumn:name=Ready,type=integer,JSONPath=`.status.readyReplicas`
// +kubebuilder:printcolumn:name=Image,type=string,JSONPath=`.spec.image`,priority=1
// +kubebuilder:printcolumn:name=Age,type=date,JSONPath=`.metadata.creationTimestamp`
type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WebAppSpec `json:"spec"`
	// +optional
	Status *WebAppStatus `json:"status,omitempty"`
}

// Desired state.
type WebAppSpec struct {
	// Number of pods.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Container image.
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`
	// Port, by number or name.
	// +optional
	Port *intstr.IntOrString `json:"port,omitempty"`
	// Memory limit.
	// +optional
	Memory *resource.Quantity `json:"memory,omitempty"`
	// Environment.
	// +listType=map
	// +listMapKey=name
	// +optional
	Env []EnvVar `json:"env,omitempty"`
	// Service tier.
	// +optional
	Tier *Tier `json:"tier,omitempty"`
}

// A service tier, a plain string in JSON.
// +kubebuilder:validation:MaxLength=16
type Tier string

// An environment variable.
type EnvVar struct {
	// Name.
	Name string `json:"name"`
	// Value.
	// +optional
	Value string `json:"value,omitempty"`
}

// Observed state.
type WebAppStatus struct {
	// Pods running.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Pods ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
	// Label selector of the pods, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`
	// Last time the app was scaled.
	// +optional
	LastScaleTime *metav1.Time `json:"lastScaleTime,omitempty"`
	// Conditions.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// A list of web apps.
//
// +kubebuilder:object:root=true
type WebAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WebApp `json:"items"`
}
