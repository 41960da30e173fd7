package v1beta1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Retention bounds how many backups are kept.
type Retention struct {
	// KeepLast is how many of the newest successful backups to keep; older ones are
	// pruned after a successful run. The newest successful backup is never deleted.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	KeepLast int32 `json:"keepLast,omitempty"`
}

// Include says what a backup contains.
type Include struct {
	// Config includes the rendered nginx.conf and the referenced ConfigMaps.
	// +optional
	// +kubebuilder:default=true
	Config *bool `json:"config,omitempty"`
	// Content includes the instance's persistent content volumes.
	// +optional
	// +kubebuilder:default=true
	Content *bool `json:"content,omitempty"`
}

// S3Destination is any S3-compatible object store, addressed path-style.
type S3Destination struct {
	// Endpoint is the S3 host and optional port, without scheme.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9.-]+(:[0-9]{1,5})?$`
	Endpoint string `json:"endpoint"`
	// Bucket holding the backups.
	// +kubebuilder:validation:MinLength=3
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9][a-z0-9.-]*[a-z0-9]$`
	Bucket string `json:"bucket"`
	// Prefix under which artifacts are stored.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!_.*'()/-]*$`
	Prefix string `json:"prefix,omitempty"`
	// Region of the bucket.
	// +optional
	// +kubebuilder:validation:MaxLength=64
	Region string `json:"region,omitempty"`
	// Insecure uses plain HTTP instead of HTTPS.
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// CredentialsSecret names a Secret in the backup's namespace with the keys
	// AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	CredentialsSecret string `json:"credentialsSecret"`
}

// PVCDestination is a PersistentVolumeClaim mounted by the backup Job.
type PVCDestination struct {
	// ClaimName of a PersistentVolumeClaim in the backup's namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	ClaimName string `json:"claimName"`
	// Path inside the volume under which artifacts are stored.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="!self.contains('..')",message="path must not contain '..'"
	Path string `json:"path,omitempty"`
}

// Destination is where artifacts go: exactly one of s3 or pvc.
// +kubebuilder:validation:XValidation:rule="has(self.s3) != has(self.pvc)",message="set exactly one of s3 or pvc"
type Destination struct {
	// S3 stores artifacts in an S3-compatible bucket.
	// +optional
	S3 *S3Destination `json:"s3,omitempty"`
	// PVC stores artifacts on a PersistentVolumeClaim.
	// +optional
	PVC *PVCDestination `json:"pvc,omitempty"`
}

// NginxBackupSpec says what to back up, when, and where.
type NginxBackupSpec struct {
	// Instance is the NginxOperator, in this namespace, to back up.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Instance string `json:"instance"`
	// Schedule in cron format; omit it for a single backup run now.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	Schedule string `json:"schedule,omitempty"`
	// Suspend stops scheduling new runs; runs under way finish.
	// +optional
	Suspend bool `json:"suspend,omitempty"`
	// Retention bounds how many backups are kept.
	// +optional
	Retention Retention `json:"retention,omitempty"`
	// Include says what a backup contains.
	// +optional
	Include Include `json:"include,omitempty"`
	// Destination is where artifacts are stored.
	Destination Destination `json:"destination"`
}

// BackupPhase is the state of a one-shot backup.
// +kubebuilder:validation:Enum=Pending;Running;Succeeded;Failed
type BackupPhase string

// Phases of a one-shot backup.
const (
	BackupPending   BackupPhase = "Pending"
	BackupRunning   BackupPhase = "Running"
	BackupSucceeded BackupPhase = "Succeeded"
	BackupFailed    BackupPhase = "Failed"
)

// BackupRecord describes one stored artifact.
type BackupRecord struct {
	// ID of the artifact, unique per instance.
	ID string `json:"id"`
	// StartTime of the run that produced it.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`
	// CompletionTime of that run.
	// +optional
	CompletionTime *metav1.Time `json:"completionTime,omitempty"`
	// SizeBytes of the artifact.
	// +optional
	SizeBytes int64 `json:"sizeBytes,omitempty"`
	// SHA256 of the artifact's manifest.
	// +optional
	SHA256 string `json:"sha256,omitempty"`
	// Location of the artifact (URL or path).
	// +optional
	Location string `json:"location,omitempty"`
}

// NginxBackupStatus reports runs and stored artifacts.
type NginxBackupStatus struct {
	// ObservedGeneration is the metadata.generation this status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`
	// Phase of a one-shot backup.
	// +optional
	Phase BackupPhase `json:"phase,omitempty"`
	// LastScheduleTime is when the last run was started.
	// +optional
	LastScheduleTime *metav1.Time `json:"lastScheduleTime,omitempty"`
	// LastSuccessfulTime is when the last successful run completed.
	// +optional
	LastSuccessfulTime *metav1.Time `json:"lastSuccessfulTime,omitempty"`
	// NextScheduleTime is when the next run is due.
	// +optional
	NextScheduleTime *metav1.Time `json:"nextScheduleTime,omitempty"`
	// Backups lists the most recent artifacts, newest first.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=50
	Backups []BackupRecord `json:"backups,omitempty"`
	// Conditions with reasons naming what went wrong.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// NginxBackup backs up an nginx instance's configuration and content, once or on
// a schedule, with retention, checksums and restore.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:validation:XValidation:rule="oldSelf.hasValue() || (size(self.metadata.name) <= 45 && self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'))",message="metadata.name must be at most 45 characters of lowercase letters, digits and '-': it names the backup's Job or CronJob <name>-backup, whose Jobs add 11 characters",optionalOldSelf=true
// +kubebuilder:resource:shortName=ngxbk,categories=nginx
// +kubebuilder:printcolumn:name="Ready",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="Instance",type=string,JSONPath=`.spec.instance`
// +kubebuilder:printcolumn:name="Schedule",type=string,JSONPath=`.spec.schedule`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Last Success",type=date,JSONPath=`.status.lastSuccessfulTime`
// +kubebuilder:printcolumn:name="Reason",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].reason`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type NginxBackup struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says what to back up, when and where.
	Spec NginxBackupSpec `json:"spec"`
	// Status reports runs and stored artifacts.
	// +optional
	Status NginxBackupStatus `json:"status,omitempty"`
}

// NginxBackupList is a list of NginxBackup.
//
// +kubebuilder:object:root=true
type NginxBackupList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []NginxBackup `json:"items"`
}

func init() {
	SchemeBuilder.Register(&NginxBackup{}, &NginxBackupList{})
}
