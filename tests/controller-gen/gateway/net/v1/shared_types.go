package v1

// A controller, by name.
type GatewayController struct {
	// The controller's name, a domain-prefixed path.
	// +kubebuilder:validation:Pattern=`^[a-z0-9.-]+/[A-Za-z0-9/_.-]+$`
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`
}

// One port a gateway listens on.
type Listener struct {
	// The listener's name.
	Name string `json:"name"`
	// The port.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=65535
	Port int32 `json:"port"`
	// The protocol.
	// +kubebuilder:validation:Enum=HTTP;HTTPS;TCP
	// +kubebuilder:default=HTTP
	// +optional
	Protocol string `json:"protocol,omitempty"`
}

// TLS types (a module `tls` of their own in Rust).

// TLS settings.
type TLSConfig struct {
	// The lowest TLS version accepted.
	// +kubebuilder:validation:Enum="1.2";"1.3"
	// +kubebuilder:default="1.2"
	// +optional
	MinVersion string `json:"minVersion,omitempty"`
}
