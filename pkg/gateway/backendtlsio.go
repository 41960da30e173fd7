package gateway

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/status"
)

// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=backendtlspolicies,verbs=list;watch
// +kubebuilder:rbac:groups=gateway.networking.k8s.io,resources=backendtlspolicies/status,verbs=patch

// Indexes of BackendTLSPolicies in the cache: by the Services they name,
// by the ConfigMaps they name, and by the Gateways this controller wrote a
// status entry for.
const (
	policyTargetIndex   = "gateway.nginx.operator.dev/policy-target"
	policyCAIndex       = "gateway.nginx.operator.dev/policy-ca"
	policyAncestorIndex = "gateway.nginx.operator.dev/policy-ancestor"
)

// servesBackendTLSPolicies reports whether the cluster has BackendTLSPolicy
// in version v1 (Gateway API 1.4 and later): the controller watches it only
// then, and otherwise sends to every Service in plain text, as before.
func servesBackendTLSPolicies(mgr ctrl.Manager) bool {
	_, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: gatewayv1.GroupName, Kind: "BackendTLSPolicy"}, gatewayv1.GroupVersion.Version)
	return err == nil
}

func indexPolicies(mgr ctrl.Manager) error {
	ctx, idx := context.Background(), mgr.GetFieldIndexer()
	index := func(name string, of func(p *gatewayv1.BackendTLSPolicy) []types.NamespacedName) error {
		return idx.IndexField(ctx, &gatewayv1.BackendTLSPolicy{}, name, func(o client.Object) []string {
			return keys(of(o.(*gatewayv1.BackendTLSPolicy)))
		})
	}
	return errors.Join(index(policyTargetIndex, policyServices), index(policyCAIndex, policyConfigMaps), index(policyAncestorIndex, policyAncestors))
}

func policyServices(p *gatewayv1.BackendTLSPolicy) []types.NamespacedName {
	var out []types.NamespacedName
	for _, t := range p.Spec.TargetRefs {
		out = append(out, types.NamespacedName{Namespace: p.Namespace, Name: string(t.Name)})
	}
	return out
}

func policyConfigMaps(p *gatewayv1.BackendTLSPolicy) []types.NamespacedName {
	var out []types.NamespacedName
	for _, ref := range p.Spec.Validation.CACertificateRefs {
		if ref.Group == "" && ref.Kind == "ConfigMap" {
			out = append(out, types.NamespacedName{Namespace: p.Namespace, Name: string(ref.Name)})
		}
	}
	return out
}

func policyAncestors(p *gatewayv1.BackendTLSPolicy) []types.NamespacedName {
	var out []types.NamespacedName
	for _, a := range p.Status.Ancestors {
		if a.ControllerName == graph.ControllerName && ptr.Deref(a.AncestorRef.Kind, "") == "Gateway" && a.AncestorRef.Namespace != nil {
			out = append(out, types.NamespacedName{Namespace: string(*a.AncestorRef.Namespace), Name: string(a.AncestorRef.Name)})
		}
	}
	return out
}

// readPolicies adds to in the BackendTLSPolicies of services (the routes'
// backends), the CA ConfigMaps they name and the port names they need.
func (r *gatewayReconciler) readPolicies(ctx context.Context, in *graph.Inputs, services []types.NamespacedName) error {
	if !r.backendTLS {
		return nil
	}
	seen := map[types.NamespacedName]bool{}
	in.CAConfigMaps, in.ServicePortNames = map[types.NamespacedName]bool{}, map[types.NamespacedName]map[int32]string{}
	for _, svc := range services {
		var list gatewayv1.BackendTLSPolicyList
		if err := r.Client.List(ctx, &list, client.MatchingFields{policyTargetIndex: svc.String()}); err != nil {
			return err
		}
		for _, p := range list.Items {
			if seen[policyKey(p)] {
				continue
			}
			seen[policyKey(p)] = true
			in.BackendTLSPolicies = append(in.BackendTLSPolicies, p)
			if err := r.readPolicyReferences(ctx, in, &p); err != nil {
				return err
			}
		}
	}
	return nil
}

// readPolicyReferences reads what policy p names: its CA ConfigMaps, and
// the ports of the Services it names a port of.
func (r *gatewayReconciler) readPolicyReferences(ctx context.Context, in *graph.Inputs, p *gatewayv1.BackendTLSPolicy) error {
	for _, key := range policyConfigMaps(p) {
		if _, done := in.CAConfigMaps[key]; done {
			continue
		}
		ok, err := r.holdsCACertificates(ctx, key)
		if err != nil {
			return err
		}
		in.CAConfigMaps[key] = ok
	}
	for _, t := range p.Spec.TargetRefs {
		svc := types.NamespacedName{Namespace: p.Namespace, Name: string(t.Name)}
		if t.SectionName == nil || in.ServicePortNames[svc] != nil {
			continue
		}
		var s corev1.Service
		if err := r.APIReader.Get(ctx, svc, &s); client.IgnoreNotFound(err) != nil {
			return err
		}
		names := map[int32]string{}
		for _, port := range s.Spec.Ports {
			names[port.Port] = port.Name
		}
		in.ServicePortNames[svc] = names
	}
	return nil
}

// holdsCACertificates reports whether ConfigMap key exists with PEM
// certificates under ca.crt, and nothing else there. Its metadata is read
// from the references cache first, which watches the namespace from then
// on: a change of the ConfigMap reconciles the Gateways again.
func (r *gatewayReconciler) holdsCACertificates(ctx context.Context, key types.NamespacedName) (bool, error) {
	if ok, err := r.exists(ctx, "ConfigMap", key); !ok || err != nil {
		return false, err
	}
	var cm corev1.ConfigMap
	if err := r.APIReader.Get(ctx, key, &cm); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	return pemCertificates([]byte(cm.Data[graph.CACertificateKey])), nil
}

// pemCertificates reports whether data is one or more PEM certificates
// and nothing but them and whitespace.
func pemCertificates(data []byte) bool {
	found := false
	for {
		block, rest := pem.Decode(data)
		if block == nil {
			return found && len(bytes.TrimSpace(rest)) == 0
		}
		if block.Type != "CERTIFICATE" {
			return false
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return false
		}
		found, data = true, rest
	}
}

// writePolicies makes Gateway gw's status entry on each policy of
// verdicts what its verdict says, and removes gw's entry from the policies
// that have one but are no longer used by it.
func (r *gatewayReconciler) writePolicies(ctx context.Context, gw types.NamespacedName, verdicts map[types.NamespacedName]graph.PolicyVerdict) error {
	if !r.backendTLS {
		return nil
	}
	var listed gatewayv1.BackendTLSPolicyList
	if err := r.Client.List(ctx, &listed, client.MatchingFields{policyAncestorIndex: gw.String()}); err != nil {
		return err
	}
	policies := map[types.NamespacedName]bool{}
	for _, p := range listed.Items {
		policies[policyKey(p)] = true
	}
	for key := range verdicts {
		policies[key] = true
	}
	var errs []error
	for key := range policies {
		var p gatewayv1.BackendTLSPolicy
		if err := r.Client.Get(ctx, key, &p); err != nil {
			errs = append(errs, client.IgnoreNotFound(err))
			continue
		}
		errs = append(errs, r.writePolicy(ctx, &p, gw, verdicts))
	}
	return errors.Join(errs...)
}

// writePolicy sets or removes gw's entry on policy p. Entries of other
// controllers and Gateways stay.
func (r *gatewayReconciler) writePolicy(ctx context.Context, p *gatewayv1.BackendTLSPolicy, gw types.NamespacedName, verdicts map[types.NamespacedName]graph.PolicyVerdict) error {
	original := p.DeepCopy()
	v, used := verdicts[policyKey(*p)]
	p.Status.Ancestors = status.PolicyAncestors(p.Status.Ancestors, gw, v, used)
	if equality.Semantic.DeepEqual(p.Status, original.Status) {
		return nil
	}
	err := r.Client.Status().Patch(ctx, p, client.MergeFromWithOptions(original, client.MergeFromWithOptimisticLock{}))
	return client.IgnoreNotFound(err)
}

// policyKey names a policy.
func policyKey(p gatewayv1.BackendTLSPolicy) types.NamespacedName {
	return types.NamespacedName{Namespace: p.Namespace, Name: p.Name}
}

// gatewaysOfPolicy maps a policy to the Gateways of the routes sending to
// its Services, and those it has a status entry of.
func (r *gatewayReconciler) gatewaysOfPolicy(ctx context.Context, obj client.Object) []reconcile.Request {
	p, ok := obj.(*gatewayv1.BackendTLSPolicy)
	if !ok {
		return nil
	}
	out := requestsFor(policyAncestors(p))
	for _, svc := range policyServices(p) {
		out = append(out, r.gatewaysOfService(ctx, svc)...)
	}
	return out
}

// gatewaysOfCAConfigMap maps a ConfigMap to the Gateways of the policies
// naming it.
func (r *gatewayReconciler) gatewaysOfCAConfigMap(ctx context.Context, obj *metav1.PartialObjectMetadata) []reconcile.Request {
	var list gatewayv1.BackendTLSPolicyList
	if err := r.Client.List(ctx, &list, client.MatchingFields{policyCAIndex: client.ObjectKeyFromObject(obj).String()}); err != nil {
		log.FromContext(ctx).Error(err, "listing BackendTLSPolicies by ConfigMap")
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		out = append(out, r.gatewaysOfPolicy(ctx, &list.Items[i])...)
	}
	return out
}
