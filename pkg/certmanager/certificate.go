// Package certmanager is the part of cert-manager's API the operator writes
// and reads: the cert-manager.io/v1 Certificate, with the fields the
// operator sets and the status it reports. The operator does not depend on
// cert-manager's module; the apiserver serving cert-manager's CRD keeps every
// other field (server-side apply sends only these).
package certmanager

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is cert-manager's API of Certificates.
var GroupVersion = schema.GroupVersion{Group: "cert-manager.io", Version: "v1"}

// Resource is the Certificates' resource, for discovery.
var Resource = GroupVersion.WithResource("certificates")

// AddToScheme registers Certificate and CertificateList.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &Certificate{}, &CertificateList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Certificate asks cert-manager for a certificate in a Secret.
type Certificate struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              CertificateSpec   `json:"spec,omitempty"`
	Status            CertificateStatus `json:"status,omitempty"`
}

// CertificateSpec holds the fields the operator sets.
type CertificateSpec struct {
	SecretName  string    `json:"secretName"`
	DNSNames    []string  `json:"dnsNames,omitempty"`
	IssuerRef   IssuerRef `json:"issuerRef"`
	Duration    string    `json:"duration,omitempty"`
	RenewBefore string    `json:"renewBefore,omitempty"`
}

// IssuerRef names the issuer.
type IssuerRef struct {
	Name  string `json:"name"`
	Kind  string `json:"kind,omitempty"`
	Group string `json:"group,omitempty"`
}

// CertificateStatus holds what the operator reports of cert-manager's work.
type CertificateStatus struct {
	Conditions []Condition  `json:"conditions,omitempty"`
	NotAfter   *metav1.Time `json:"notAfter,omitempty"`
}

// Condition is one of cert-manager's conditions (Ready, Issuing).
type Condition struct {
	Type               string                 `json:"type"`
	Status             metav1.ConditionStatus `json:"status"`
	Reason             string                 `json:"reason,omitempty"`
	Message            string                 `json:"message,omitempty"`
	ObservedGeneration int64                  `json:"observedGeneration,omitempty"`
}

// Ready is cert-manager's Ready condition: the Secret holds a valid
// certificate for the current spec. Nil when cert-manager has yet to say.
func (c *Certificate) Ready() *Condition {
	for i := range c.Status.Conditions {
		if c.Status.Conditions[i].Type == "Ready" {
			return &c.Status.Conditions[i]
		}
	}
	return nil
}

// CertificateList is a list of Certificates.
type CertificateList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Certificate `json:"items"`
}

// DeepCopyObject copies c.
func (c *Certificate) DeepCopyObject() runtime.Object {
	out := *c
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.DNSNames = append([]string(nil), c.Spec.DNSNames...)
	out.Status.Conditions = append([]Condition(nil), c.Status.Conditions...)
	if c.Status.NotAfter != nil {
		t := *c.Status.NotAfter
		out.Status.NotAfter = &t
	}
	return &out
}

// DeepCopyObject copies l.
func (l *CertificateList) DeepCopyObject() runtime.Object {
	out := *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	out.Items = make([]Certificate, len(l.Items))
	for i := range l.Items {
		out.Items[i] = *l.Items[i].DeepCopyObject().(*Certificate)
	}
	return &out
}
