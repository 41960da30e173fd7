// spec.content, what nginx serves and where it is kept: ConfigMaps, or a
// persistent volume per replica and the backup a new one is restored
// from.

package v1beta1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// RestoreSpec names one artifact of an NginxBackup.
type RestoreSpec struct {
	// Backup is the name of an NginxBackup in this namespace; its destination
	// and spec.instance locate the artifact, so an instance can be seeded from
	// another instance's backups.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`
	Backup string `json:"backup"`
	// ID of the backup run, as listed in the NginxBackup's status.backups[].id
	// (for example 20261122T030000.000000000Z-1a2b3c4d).
	// +kubebuilder:validation:Pattern=`^[0-9]{8}T[0-9]{6}\.[0-9]{9}Z-[0-9a-f]{8}$`
	ID string `json:"id"`
}

// Content is what nginx serves.
type Content struct {
	// ConfigMaps are projected into the document root; their keys are file names.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	ConfigMaps []ConfigMapContent `json:"configMaps,omitempty"`
	// VolumeClaimTemplate gives every replica its own persistent document root.
	// +optional
	VolumeClaimTemplate *VolumeClaimTemplate `json:"volumeClaimTemplate,omitempty"`
}

// ConfigMapContent names a ConfigMap whose keys become files of the document root.
type ConfigMapContent struct {
	// Name of a ConfigMap in this namespace.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
}

// VolumeClaimTemplate is the persistent volume each replica gets for its content.
type VolumeClaimTemplate struct {
	// Size of each volume, more than zero.
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? int(self) > 0 : quantity(self).isGreaterThan(quantity('0'))",message="size must be more than zero"
	Size resource.Quantity `json:"size"`
	// StorageClassName of the volumes: the name of a StorageClass (a DNS
	// subdomain). Unset: the cluster's default class; empty: no class.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$`
	StorageClassName *string `json:"storageClassName,omitempty"`
	// AccessModes of the volumes; ReadWriteOncePod only alone.
	// +optional
	// +listType=set
	// +kubebuilder:default={ReadWriteOnce}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:items:Enum=ReadWriteOnce;ReadWriteOncePod;ReadWriteMany;ReadOnlyMany
	// +kubebuilder:validation:XValidation:rule="!('ReadWriteOncePod' in self) || size(self) == 1",message="ReadWriteOncePod cannot be combined with other access modes"
	AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes,omitempty"`
}
