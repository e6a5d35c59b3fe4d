package v1

import (
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A replicated workload that rolls out a pod template.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=ro
// +kubebuilder:subresource:status
// +kubebuilder:subresource:scale:specpath=.spec.replicas,statuspath=.status.replicas,selectorpath=.status.selector
// +kubebuilder:printcolumn:name=Ready,type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name=Image,type=string,JSONPath=`.spec.template.spec.containers[0].image`,priority=1
// +kubebuilder:selectablefield:JSONPath=`.spec.tier`
type Rollout struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec RolloutSpec `json:"spec"`
	// +optional
	Status *RolloutStatus `json:"status,omitempty"`
}

// The desired state.
type RolloutSpec struct {
	// Desired pods.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:default=1
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`
	// The pods this rollout manages.
	Selector metav1.LabelSelector `json:"selector"`
	// The pods to create.
	Template corev1.PodTemplateSpec `json:"template"`
	// How pods are replaced.
	// +optional
	Strategy *appsv1.DeploymentStrategy `json:"strategy,omitempty"`
	// The tier, selectable with field selectors.
	// +kubebuilder:validation:Enum=frontend;backend
	// +kubebuilder:default=backend
	// +optional
	Tier string `json:"tier,omitempty"`
	// Extra tolerations for every pod.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
	// A secret the pods read their configuration from.
	// +optional
	ConfigSecret *corev1.SecretKeySelector `json:"configSecret,omitempty"`
}

// The observed state.
type RolloutStatus struct {
	// Pods running.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// The label selector of the pods, for the scale subresource.
	// +optional
	Selector string `json:"selector,omitempty"`
	// The generation last acted on.
	// +optional
	ObservedGeneration *int64 `json:"observedGeneration,omitempty"`
	// The latest observations.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// A list of rollouts.
//
// +kubebuilder:object:root=true
type RolloutList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Rollout `json:"items"`
}
