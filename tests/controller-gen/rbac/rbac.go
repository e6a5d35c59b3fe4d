// Package rbac is the Go twin of the RBAC markers in
// tests/tests/controller_gen_rbac.rs: the same rules as
// `+kubebuilder:rbac` markers, for controller-gen's `rbac` generator.
package rbac

// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list
// +kubebuilder:rbac:groups=core,resources=configmaps;secrets,verbs=watch;get
// +kubebuilder:rbac:groups=core,resources=secrets,verbs=list
// +kubebuilder:rbac:groups=apps;extensions,resources=deployments,verbs=get;list
// +kubebuilder:rbac:groups=batch,resources=jobs;cronjobs,verbs=get;list
// +kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=example.com,resources=widgets,verbs=get
// +kubebuilder:rbac:groups=example.com,resources=widgets,verbs=*
// +kubebuilder:rbac:groups="",resources=pods,resourceNames=one;two,verbs=get
// +kubebuilder:rbac:urls=/metrics,verbs=get
// +kubebuilder:rbac:urls=/healthz;/readyz,verbs=get
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;update,namespace=kube-system
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get,namespace=kube-system,roleName=secret-reader
// +kubebuilder:rbac:groups=policy,resources=poddisruptionbudgets,verbs=get,roleName=pdb-reader

// Reconcile stands for a controller's code; the markers above (not
// attached to it: package markers, as kubebuilder writes them) are what it
// calls.
func Reconcile() {}
