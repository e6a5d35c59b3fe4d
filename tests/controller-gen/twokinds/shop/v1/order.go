package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An order of products.
//
// +genclient
// +genclient:skipVerbs=deleteCollection
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type Order struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec OrderSpec `json:"spec"`
	// +optional
	Status *OrderStatus `json:"status,omitempty"`
}

// What is ordered.
type OrderSpec struct {
	// Product names and quantities.
	// +kubebuilder:validation:MinProperties=1
	Items map[ProductName]ItemCount `json:"items"`
	// Discounts in percent, by customer tier.
	// +optional
	Discounts map[Tier]Percent `json:"discounts,omitempty"`
	// How to pay.
	Payment Payment `json:"payment"`
	// Notes on some products (a generic type alias; controller-gen
	// refuses those, so the twin writes the map out).
	// +optional
	Notes map[ProductName]Note `json:"notes,omitempty"`
}

// A note.
// +kubebuilder:validation:MaxLength=200
type Note = string

// The name of a product.
type ProductName string

// A customer tier.
// +kubebuilder:validation:Enum=gold;silver
type Tier string

// A discount in percent (Rust: u8).
// +kubebuilder:validation:Minimum=0
// +kubebuilder:validation:Maximum=255
type Percent int32

// A quantity of a product (Rust: u32).
// +kubebuilder:validation:Minimum=0
type ItemCount int64

// A payment method: exactly one of the members is set.
//
// +kubebuilder:validation:ExactlyOneOf=card;invoice
type Payment struct {
	// By card.
	// +optional
	Card *CardPayment `json:"card,omitempty"`
	// By invoice.
	// +optional
	Invoice *Invoice `json:"invoice,omitempty"`
}

// By card.
type CardPayment struct {
	// Card number.
	// +kubebuilder:validation:Pattern=`^[0-9]{16}$`
	Number string `json:"number"`
}

// An invoice.
type Invoice struct {
	// Days to pay (Rust: u16).
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=65535
	Days int32 `json:"days"`
}

// Where the order is. `tracking` is set in phase Shipped.
type OrderStatus struct {
	// The phase.
	Phase OrderPhase `json:"phase"`
	// Tracking number (phase Shipped).
	// +optional
	Tracking string `json:"tracking,omitempty"`
}

// The phase of an order.
// +kubebuilder:validation:Enum=Pending;Shipped
type OrderPhase string

const (
	// Accepted.
	OrderPending OrderPhase = "Pending"
	// On its way.
	OrderShipped OrderPhase = "Shipped"
)

// A list of orders.
//
// +kubebuilder:object:root=true
type OrderList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Order `json:"items"`
}
