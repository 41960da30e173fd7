// TLS: a server's certificate and its cert-manager issuer, HSTS, client
// certificates, the TLS policy of every server, TLS to Services, and
// CACertificateRef, the CA certificates client certificates and Services
// are verified with.

package v1beta1

// TLS names the certificate of a server.
type TLS struct {
	// SecretName is a kubernetes.io/tls Secret in this namespace (keys tls.crt and tls.key).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	SecretName string `json:"secretName"`

	// HSTS sends Strict-Transport-Security on every response of the server:
	// browsers then use only https for the host.
	// +optional
	HSTS *HSTS `json:"hsts,omitempty"`

	// ClientCertificates makes nginx ask every client for a certificate and
	// refuse a request without one that the CA signed (mutual TLS;
	// ingress-nginx's auth-tls-secret).
	// +optional
	ClientCertificates *ClientCertificates `json:"clientCertificates,omitempty"`

	// IssuerRef asks cert-manager for the certificate: the operator applies a
	// cert-manager.io/v1 Certificate named after secretName, for the
	// serverNames of every server that names this Secret and this issuer,
	// and cert-manager writes the Secret and renews it; nginx serves each
	// renewal in place. Needs cert-manager: where its API is not served,
	// condition CertificatesReady says so. ingress-nginx's
	// cert-manager.io/issuer and cert-manager.io/cluster-issuer annotations.
	// +optional
	IssuerRef *IssuerRef `json:"issuerRef,omitempty"`
}

// IssuerRef names the cert-manager issuer of a server's certificate, and
// how long the certificate lives.
// +kubebuilder:validation:XValidation:rule="!has(self.duration) || duration(self.duration) >= duration('1h')",message="duration must be at least 1h, the shortest certificate cert-manager issues"
// +kubebuilder:validation:XValidation:rule="!has(self.renewBefore) || duration(self.renewBefore) >= duration('5m')",message="renewBefore must be at least 5m, as cert-manager requires"
// +kubebuilder:validation:XValidation:rule="!has(self.renewBefore) || duration(self.renewBefore) < duration(has(self.duration) ? self.duration : '2160h')",message="renewBefore must be shorter than duration (cert-manager's default duration is 2160h, 90 days)"
type IssuerRef struct {
	// Name of the Issuer (in this namespace) or ClusterIssuer.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// Kind of the issuer: Issuer, ClusterIssuer, or an external issuer's
	// kind (with its group).
	// +optional
	// +kubebuilder:default=Issuer
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[A-Z][A-Za-z0-9]*$`
	Kind string `json:"kind,omitempty"`

	// Group of the issuer's API: cert-manager.io for cert-manager's own
	// issuers, another for an external issuer.
	// +optional
	// +kubebuilder:default=cert-manager.io
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Group string `json:"group,omitempty"`

	// Duration the certificate is valid for, in hours, minutes and seconds
	// ("2160h"); cert-manager's default, 90 days, when empty.
	// ingress-nginx's cert-manager.io/duration annotation.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]{1,7}(h|m|s))+$`
	Duration string `json:"duration,omitempty"`

	// RenewBefore is how long before it expires cert-manager renews the
	// certificate ("720h"); cert-manager's default, a third of its
	// duration, when empty. ingress-nginx's cert-manager.io/renew-before
	// annotation.
	// +optional
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^([0-9]{1,7}(h|m|s))+$`
	RenewBefore string `json:"renewBefore,omitempty"`
}

// HSTS is the Strict-Transport-Security header of a TLS server.
// +kubebuilder:validation:XValidation:rule="!has(self.preload) || !self.preload || (has(self.includeSubDomains) && self.includeSubDomains && self.maxAgeSeconds >= 31536000)",message="preload needs includeSubDomains and a maxAgeSeconds of at least 31536000 (one year), as the browsers' preload lists require"
type HSTS struct {
	// MaxAgeSeconds is how long a browser remembers to use only https; 0
	// makes it forget.
	// +optional
	// +kubebuilder:default=31536000
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=63072000
	MaxAgeSeconds *int32 `json:"maxAgeSeconds,omitempty"`
	// IncludeSubDomains extends the rule to every subdomain of the host.
	// +optional
	IncludeSubDomains bool `json:"includeSubDomains,omitempty"`
	// Preload asks to be listed in the browsers' built-in HSTS lists.
	// +optional
	Preload bool `json:"preload,omitempty"`
}

// ClientCertificates verifies clients' certificates.
type ClientCertificates struct {
	// CACertificate holds the PEM certificates of the CAs a client's
	// certificate must chain to. It is mounted into the pods.
	CACertificate CACertificateRef `json:"caCertificate"`
	// VerifyDepth is the longest chain accepted: 1 for certificates the CA
	// signed itself, more for intermediate CAs.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=8
	VerifyDepth int32 `json:"verifyDepth,omitempty"`
}

// TLSPolicy is how every TLS server negotiates with clients.
type TLSPolicy struct {
	// Protocols the servers accept. TLS 1.0 and 1.1 are not offered: they
	// are deprecated (RFC 8996).
	// +optional
	// +listType=set
	// +kubebuilder:default={TLSv1.2,TLSv1.3}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:items:Enum=TLSv1.2;TLSv1.3
	Protocols []string `json:"protocols,omitempty"`
	// Ciphers the servers accept for TLS 1.2, in OpenSSL's names; TLS 1.3
	// always uses its own safe suites. The choice is limited to ciphers with
	// forward secrecy and authenticated encryption; the default is all of them.
	// +optional
	// +listType=set
	// +kubebuilder:default={ECDHE-ECDSA-AES128-GCM-SHA256,ECDHE-RSA-AES128-GCM-SHA256,ECDHE-ECDSA-AES256-GCM-SHA384,ECDHE-RSA-AES256-GCM-SHA384,ECDHE-ECDSA-CHACHA20-POLY1305,ECDHE-RSA-CHACHA20-POLY1305,DHE-RSA-AES128-GCM-SHA256,DHE-RSA-AES256-GCM-SHA384}
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:Enum=ECDHE-ECDSA-AES128-GCM-SHA256;ECDHE-RSA-AES128-GCM-SHA256;ECDHE-ECDSA-AES256-GCM-SHA384;ECDHE-RSA-AES256-GCM-SHA384;ECDHE-ECDSA-CHACHA20-POLY1305;ECDHE-RSA-CHACHA20-POLY1305;DHE-RSA-AES128-GCM-SHA256;DHE-RSA-AES256-GCM-SHA384
	Ciphers []string `json:"ciphers,omitempty"`
	// SessionCacheMiB is the size of the session cache the workers of a pod
	// share, so a returning client skips the full handshake; one MiB holds
	// about 4,000 sessions.
	// +optional
	// +kubebuilder:default=10
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=512
	SessionCacheMiB int32 `json:"sessionCacheMiB,omitempty"`
	// SessionTimeoutMinutes is how long a cached session may be resumed.
	// +optional
	// +kubebuilder:default=60
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1440
	SessionTimeoutMinutes int32 `json:"sessionTimeoutMinutes,omitempty"`
}

// BackendTLS is how nginx speaks TLS to a Service.
type BackendTLS struct {
	// Hostname is sent as SNI and, with caCertificate, must be a name of
	// the Service's certificate. Unset: <service>.<namespace>.svc.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Hostname string `json:"hostname,omitempty"`
	// CACertificate verifies the Service's certificate. Unset: the
	// connection is encrypted but the certificate is not checked, as in
	// ingress-nginx's default.
	// +optional
	CACertificate *CACertificateRef `json:"caCertificate,omitempty"`
}

// CACertificateRef names PEM CA certificates in a ConfigMap or Secret of
// this namespace. It is mounted into the pods: the operator never reads it.
type CACertificateRef struct {
	// Kind is ConfigMap or Secret.
	// +kubebuilder:validation:Enum=ConfigMap;Secret
	Kind string `json:"kind"`
	// Name of the ConfigMap or Secret.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`
	// Key holding the certificates.
	// +optional
	// +kubebuilder:default="ca.crt"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	// +kubebuilder:validation:XValidation:rule="self != '.' && self != '..'",message="key cannot be . or .."
	Key string `json:"key,omitempty"`
}
