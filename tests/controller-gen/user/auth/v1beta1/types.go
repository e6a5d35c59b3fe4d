package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A user of the cluster.
//
// +genclient
// +genclient:noStatus
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=u
type User struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec UserSpec `json:"spec"`
}

// Who the user is.
type UserSpec struct {
	// Numeric user id.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	// +k8s:immutable
	UserID int32 `json:"userID"`
	// Groups the user belongs to.
	Groups []string `json:"groups"`
	// Contact address.
	// +kubebuilder:validation:Format=email
	// +kubebuilder:validation:MaxLength=254
	// +optional
	Email *string `json:"email,omitempty"`
	// Login password.
	// +kubebuilder:validation:Format=password
	// +kubebuilder:validation:MinLength=8
	// +optional
	Password *string `json:"password,omitempty"`
	// Login shell.
	// +kubebuilder:validation:Enum=bash;zsh;fish
	// +kubebuilder:default=bash
	// +optional
	Shell *string `json:"shell,omitempty"`
	// Role of the user.
	// +optional
	Role Role `json:"role,omitempty"`
	// Extra attributes.
	// +kubebuilder:validation:MaxProperties=16
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
	// Login window.
	// +optional
	Window *LoginWindow `json:"window,omitempty"`
	// Set while the user is locked out.
	// +optional
	Locked *Locked `json:"locked,omitempty"`
	// Nickname: the field allows 32 characters, its type 16, and both hold.
	// +kubebuilder:validation:MaxLength=32
	// +optional
	Nick *Nick `json:"nick,omitempty"`
	// Short nickname, at most 8 characters.
	// +kubebuilder:validation:MaxLength=8
	// +optional
	ShortNick *Nick `json:"shortNick,omitempty"`
	// Team, a Kubernetes short name.
	// +kubebuilder:validation:Format=k8s-short-name
	// +k8s:immutable
	// +optional
	Team *string `json:"team,omitempty"`
	// Where to send notices.
	// +optional
	Notify *Notify `json:"notify,omitempty"`
	// How else to reach the user; its fields are the spec's own.
	// +kubebuilder:validation:XValidation:rule="!has(self.phone) || size(self.phone) >= 4",message="phone is too short"
	Contact `json:",inline"`
}

// Where to send notices: an address or a webhook, and Slack besides an
// address.
// +kubebuilder:validation:ExactlyOneOf=email;webhook
// +kubebuilder:validation:AtMostOneOf=webhook;slack
// +kubebuilder:validation:AtLeastOneOf=email;slack
type Notify struct {
	// Mail address.
	// +optional
	Email *string `json:"email,omitempty"`
	// Webhook URL.
	// +optional
	Webhook *string `json:"webhook,omitempty"`
	// Slack channel.
	// +optional
	Slack *string `json:"slack,omitempty"`
	// A receiver in the cluster.
	// +optional
	Route *Route `json:"route,omitempty"`
}

// A receiver in the cluster: a namespace's default receiver or a named
// service (`namespace` is a word CEL reserves, `service-name` has a dash).
// +kubebuilder:validation:ExactlyOneOf=namespace;service-name
type Route struct {
	// Namespace.
	// +optional
	Namespace *string `json:"namespace,omitempty"`
	// Service.
	// +optional
	ServiceName *string `json:"service-name,omitempty"`
}

// A short lower-case name.
// +kubebuilder:validation:MaxLength=16
// +kubebuilder:validation:Pattern=`^[a-z]+$`
type Nick string

// Ways to reach a user besides email.
// +kubebuilder:validation:XValidation:rule="!has(self.pager) || !has(self.phone)",message="a pager or a phone, not both"
// +kubebuilder:validation:MaxProperties=20
type Contact struct {
	// Phone number.
	// +optional
	Phone *string `json:"phone,omitempty"`
	// Pager number.
	// +optional
	Pager *string `json:"pager,omitempty"`
}

// A lock on a user; it has no settings yet.
type Locked struct{}

// What the user may do.
// +kubebuilder:validation:Enum=admin;editor;viewer
type Role string

const (
	// Full access.
	RoleAdmin Role = "admin"
	// Read and write.
	RoleEditor Role = "editor"
	// Read only.
	RoleViewer Role = "viewer"
)

// Hours of the day when the user may log in.
// +kubebuilder:validation:XValidation:rule="self.from < self.to",message="from must be before to"
type LoginWindow struct {
	// First hour (Rust: u8).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=23
	// +kubebuilder:validation:ExclusiveMinimum=false
	From int32 `json:"from"`
	// Last hour, exclusive (Rust: u8).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=24
	// +kubebuilder:validation:ExclusiveMaximum=true
	To int32 `json:"to"`
}

// A list of users.
//
// +kubebuilder:object:root=true
type UserList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []User `json:"items"`
}
