package v1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// A cluster-wide policy.
//
// +genclient
// +genclient:nonNamespaced
// +genclient:noStatus
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories=all;policies,shortName=cpol
// +kubebuilder:printcolumn:name="Action",type=string,JSONPath=".spec.action",description="What happens on a violation",priority=1
// +kubebuilder:printcolumn:name="Share",type=integer,format=int32,JSONPath=".spec.share"
// +kubebuilder:selectablefield:JSONPath=".spec.action"
// +kubebuilder:selectablefield:JSONPath=".spec.owner"
type ClusterPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ClusterPolicySpec `json:"spec"`
}

// The policy.
// +kubebuilder:validation:XValidation:rule="!has(self.share) || !has(self.budget) || self.share > 0",messageExpression="'a budget needs a share above ' + '0'",reason=FieldValueForbidden,fieldPath=".share"
// +kubebuilder:title="Policy"
// +kubebuilder:externalDocs:url="https://example.com/policies",description="How policies work"
type ClusterPolicySpec struct {
	// Namespaces the policy applies to.
	// +kubebuilder:example={default,web}
	// +kubebuilder:externalDocs:url="https://example.com/namespaces"
	// +listType=set
	// +kubebuilder:validation:MaxItems=100
	Namespaces []string `json:"namespaces"`
	// What happens on a violation.
	Action Action `json:"action"`
	// Free-form parameters.
	// +optional
	Parameters *apiextensionsv1.JSON `json:"parameters,omitempty"`
	// Share of the cluster in percent, in steps of 5; it may only grow.
	// +kubebuilder:title="Share"
	// +kubebuilder:example=25
	// +kubebuilder:validation:MultipleOf=5
	// +kubebuilder:validation:XValidation:rule="!oldSelf.hasValue() || self >= oldSelf.value()",message="share may only grow",optionalOldSelf=true
	// +optional
	Share *int32 `json:"share,omitempty"`
	// Who owns the policy; may be null.
	// +nullable
	// +kubebuilder:example="alice"
	// +optional
	Owner *string `json:"owner,omitempty"`
	// Evaluation order; required although it may be left out in Rust.
	// +required
	Order *int32 `json:"order,omitempty"`
	// A note, optional although Rust always writes it.
	// +optional
	Note string `json:"note"`
	// A budget: a number or a percentage.
	// +kubebuilder:validation:XIntOrString
	// +optional
	Budget *intstr.IntOrString `json:"budget,omitempty"`
	// An object the policy creates.
	// +kubebuilder:validation:EmbeddedResource
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Template *runtime.RawExtension `json:"template,omitempty"`
	// A workload the policy runs, a whole object.
	// +kubebuilder:validation:EmbeddedResource
	// +optional
	Workload *Workload `json:"workload,omitempty"`
	// Labels that select namespaces, replaced as a whole.
	// +mapType=atomic
	// +kubebuilder:example={team: "web"}
	// +optional
	Selector map[string]LabelValue `json:"selector,omitempty"`
	// How long a violation may last.
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:Format=duration
	// +optional
	Timeout *string `json:"timeout,omitempty"`
}

// A workload: an object of a kind of its own, with its type meta (no
// ObjectMeta: controller-gen would take it for a kind of the package).
type Workload struct {
	metav1.TypeMeta `json:",inline"`
	// Replicas.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// Priority class.
	// +optional
	Priority *Priority `json:"priority,omitempty"`
}

// A priority class name, a plain string in JSON.
type Priority string

// A label value (Rust: `values(max_length = 63)` on the map).
// +kubebuilder:validation:MaxLength=63
type LabelValue string

// What happens on a violation.
// +kubebuilder:validation:Enum=Deny;Warn
type Action string

const (
	// Reject the request.
	ActionDeny Action = "Deny"
	// Only warn.
	ActionWarn Action = "Warn"
)

// A list of cluster policies.
//
// +kubebuilder:object:root=true
type ClusterPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterPolicy `json:"items"`
}

// A cluster-wide quota.
//
// +genclient
// +genclient:nonNamespaced
// +genclient:noStatus
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,singular=quota
type ClusterQuota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ClusterQuotaSpec `json:"spec"`
	// How the quota is enforced.
	Enforcement Enforcement `json:"enforcement"`
}

// The quota.
//
// Any other key of the object is a limit, by resource name (Rust:
// `#[serde(flatten)] limits: Limits`, a map); in Go the map would be read and
// written by custom JSON (un)marshalling, and the schema keeps the unknown
// keys.
//
// +kubebuilder:pruning:PreserveUnknownFields
type ClusterQuotaSpec struct {
	// Scheduling speed.
	// +kubebuilder:default=fast
	// +optional
	Speed Speed `json:"speed,omitempty"`
	// Most pods per namespace (Rust: u16).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	// +kubebuilder:default=10
	// +optional
	MaxPods int32 `json:"maxPods,omitempty"`
	// Any other limit, by resource name.
	Limits map[string]string `json:"-"`
}

// How fast.
// +kubebuilder:validation:Enum=fast;slow
type Speed string

const (
	// Fast.
	SpeedFast Speed = "fast"
	// Slow.
	SpeedSlow Speed = "slow"
)

// How a quota is enforced: exactly one of the members is set.
//
// +kubebuilder:validation:ExactlyOneOf=Hard;Soft
type Enforcement struct {
	// Reject requests over the quota.
	// +optional
	Hard *HardEnforcement `json:"Hard,omitempty"`
	// Only warn.
	// +optional
	Soft *SoftEnforcement `json:"Soft,omitempty"`
}

// Reject requests over the quota.
type HardEnforcement struct {
	// Seconds of grace.
	GraceSeconds int64 `json:"graceSeconds"`
}

// Only warn.
type SoftEnforcement struct {
	// Seconds before warning (Rust: u32).
	// +kubebuilder:validation:Minimum=0
	WarnAfterSeconds int64 `json:"warnAfterSeconds"`
}

// A list of cluster quotas.
//
// +kubebuilder:object:root=true
type ClusterQuotaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterQuota `json:"items"`
}
