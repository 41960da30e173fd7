package graph

// The names of a Gateway's objects.

import (
	"k8s.io/apimachinery/pkg/types"

	"github.com/nginx-operator/nginx-operator/pkg/naming"
)

// LabelGatewayName names, on an instance, the Gateway it serves (Gateway
// API's well-known label).
const LabelGatewayName = "gateway.networking.k8s.io/gateway-name"

// InstanceName is the name of the NginxOperator of Gateway gateway, in the
// Gateway's namespace: <gateway>-gateway within the 47 characters and the
// leading letter the CRD asks of an instance's name (a longer one is cut
// and given a hash).
func InstanceName(gateway string) string {
	if gateway != "" && gateway[0] >= 'a' && gateway[0] <= 'z' {
		return naming.NameWithLimit(maxInstanceName, gateway, "gateway")
	}
	return naming.NameWithLimit(maxInstanceName, "gateway", gateway)
}

// maxInstanceName is the CRD's limit on an NginxOperator's name.
const maxInstanceName = 47

// certificateCopyHashLength is how many hex digits of the source's hash a
// copy's name ends with.
const certificateCopyHashLength = 8

// CertificateCopyName is the name of the copy, in the namespace of Gateway
// gateway, of the certificate Secret source: the Gateway's instance name,
// "-cert-" and a hash of source's namespace and name. It is a DNS label (at
// most 47+6+8 = 61 characters, as InstanceName is at most 47 and starts
// with a letter), the same for the same Gateway and Secret on every
// reconcile, and distinct for distinct Gateways of a namespace (their
// instance names are) and for distinct Secrets.
func CertificateCopyName(gateway string, source types.NamespacedName) string {
	hash := naming.Hash([]string{source.Namespace, source.Name})[:certificateCopyHashLength]
	return naming.NameWithLimit(naming.MaxNameLength, InstanceName(gateway), "cert", hash)
}
