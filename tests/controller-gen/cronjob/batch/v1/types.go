package v1

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A job that runs on a schedule.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:resource:shortName=ct
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name=Schedule,type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Last Schedule",type=date,JSONPath=`.status.lastScheduleTime`
type CronTab struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec CronTabSpec `json:"spec"`
	// +optional
	Status *CronTabStatus `json:"status,omitempty"`
}

// When and what to run.
type CronTabSpec struct {
	// The schedule, in Cron format.
	// +kubebuilder:validation:MinLength=1
	Schedule string `json:"schedule"`
	// The time zone of the schedule.
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`
	// Seconds after a missed start during which the job may still start.
	// +kubebuilder:validation:Minimum=0
	// +optional
	StartingDeadlineSeconds *int64 `json:"startingDeadlineSeconds,omitempty"`
	// How to treat a run that starts while the previous one still runs.
	// +kubebuilder:default=Allow
	// +optional
	ConcurrencyPolicy ConcurrencyPolicy `json:"concurrencyPolicy,omitempty"`
	// Stop scheduling new runs.
	// +optional
	Suspend *bool `json:"suspend,omitempty"`
	// No run is scheduled before this time.
	// +kubebuilder:validation:Format=date-time
	// +kubebuilder:default="1970-01-01T00:00:00Z"
	// +optional
	NotBefore *string `json:"notBefore,omitempty"`
	// Whether runs log verbosely.
	// +kubebuilder:validation:Enum="on";"off"
	// +kubebuilder:default="off"
	// +optional
	Verbose string `json:"verbose,omitempty"`
	// The job each run creates.
	JobTemplate batchv1.JobTemplateSpec `json:"jobTemplate"`
	// How many finished jobs to keep.
	// +kubebuilder:default={successful: 3, failed: 1}
	// +optional
	History *HistoryLimits `json:"history,omitempty"`
	// Labels added to every job.
	// +kubebuilder:default={cron}
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=63
	// +optional
	Tags []string `json:"tags,omitempty"`
}

// What happens when runs overlap.
// +kubebuilder:validation:Enum=Allow;Forbid;Replace
type ConcurrencyPolicy string

const (
	// Runs may overlap.
	AllowConcurrent ConcurrencyPolicy = "Allow"
	// Skip a run while the previous one is active.
	ForbidConcurrent ConcurrencyPolicy = "Forbid"
	// Replace the active run.
	ReplaceConcurrent ConcurrencyPolicy = "Replace"
)

// Finished jobs to keep.
// +kubebuilder:validation:XValidation:rule="self.successful >= self.failed",message="keep at least as many successful jobs as failed ones"
type HistoryLimits struct {
	// Successful jobs to keep.
	// +kubebuilder:validation:Minimum=0
	Successful int32 `json:"successful"`
	// Failed jobs to keep.
	// +kubebuilder:validation:Minimum=0
	Failed int32 `json:"failed"`
}

// What the controller observed.
type CronTabStatus struct {
	// The jobs that are running now.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=10
	// +optional
	Active []corev1.ObjectReference `json:"active,omitempty"`
	// When a job was last scheduled.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// The latest observations.
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// A list of cron tabs.
//
// +kubebuilder:object:root=true
type CronTabList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CronTab `json:"items"`
}
