//go:build !unit

package gateway_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// TestABackendTLSPolicyIsServedAndToldWhereItStands: a policy naming a
// Service's port makes the route's location verify the Service's
// certificate for its hostname with its CA ConfigMap, and says so on the
// policy for the Gateway (Accepted, ResolvedRefs). Emptying the ConfigMap
// makes it NoValidCACertificate and the location answer 500 rather than
// send in plain text; deleting the Gateway removes its status entry.
func TestABackendTLSPolicyIsServedAndToldWhereItStands(t *testing.T) {
	ctx, ns, c := setup(t)
	gatewayToAPI(t, c, ns)
	ca, err := tools.NewCA("backend CA", time.Hour)
	tools.Must(t, err)
	caPEM, _, err := ca.Issue(tools.Server("unused.example.com"), time.Hour)
	tools.Must(t, err)
	secure := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "secure", Namespace: ns},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "https", Port: 8080}}, Selector: map[string]string{"app": "secure"}}}
	caMap := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "backend-ca", Namespace: ns}, Data: map[string]string{"ca.crt": string(caPEM)}}
	policy := &gatewayv1.BackendTLSPolicy{ObjectMeta: metav1.ObjectMeta{Name: "secure", Namespace: ns}, Spec: gatewayv1.BackendTLSPolicySpec{
		TargetRefs: []gatewayv1.LocalPolicyTargetReferenceWithSectionName{{
			LocalPolicyTargetReference: gatewayv1.LocalPolicyTargetReference{Kind: "Service", Name: "secure"}, SectionName: ptr.To(gatewayv1.SectionName("https"))}},
		Validation: gatewayv1.BackendTLSPolicyValidation{Hostname: "secure.example.com",
			CACertificateRefs: []gatewayv1.LocalObjectReference{{Kind: "ConfigMap", Name: "backend-ca"}}},
	}}
	// The test cluster runs no EndpointSlice controller: a location to a
	// Service without endpoints answers 503 and speaks to nothing.
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Name: "secure-1", Namespace: ns, Labels: map[string]string{discoveryv1.LabelServiceName: "secure"}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("https"), Port: ptr.To[int32](8443)}},
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"10.244.1.1"}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
	}
	route := apiRoute(ns, "secure")
	route.Spec.Rules[0].BackendRefs[0].Name = "secure"
	create(t, c, secure, slice, caMap, policy, route)
	instance := types.NamespacedName{Namespace: ns, Name: graph.InstanceName("web")}
	gw := types.NamespacedName{Namespace: ns, Name: "web"}

	policyIs(ctx, t, c, policy, gw, "True/Accepted", "True/ResolvedRefs")
	location(ctx, t, c, instance, "verifies the Service's certificate", func(l []conf.Directive) bool {
		return has(l, "proxy_ssl_name", "secure.example.com") && has(l, "proxy_ssl_verify", "on") && has(l, "proxy_pass", "https://")
	})

	framework.Update(ctx, t, c, caMap, func(m *corev1.ConfigMap) { m.Data["ca.crt"] = "" })
	policyIs(ctx, t, c, policy, gw, "False/NoValidCACertificate", "False/InvalidCACertificateRef")
	location(ctx, t, c, instance, "answers 500", func(l []conf.Directive) bool { return answers(l, "500") })

	tools.Must(t, c.Delete(ctx, &gatewayv1.Gateway{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "web"}}))
	tools.Eventually(t, time.Minute, "the Gateway's entry gone from the policy", func() error {
		var got gatewayv1.BackendTLSPolicy
		if err := c.Get(ctx, client.ObjectKeyFromObject(policy), &got); err != nil {
			return err
		}
		if len(got.Status.Ancestors) != 0 {
			return fmt.Errorf("ancestors %+v", got.Status.Ancestors)
		}
		return nil
	})
}

// policyIs waits for Gateway gw's entry on policy p to have Accepted and
// ResolvedRefs as status/reason, for p's generation.
func policyIs(ctx context.Context, t *testing.T, c client.Client, p *gatewayv1.BackendTLSPolicy, gw types.NamespacedName, accepted, resolved string) {
	t.Helper()
	tools.Eventually(t, time.Minute, "policy "+accepted+", "+resolved, func() error {
		var got gatewayv1.BackendTLSPolicy
		if err := c.Get(ctx, client.ObjectKeyFromObject(p), &got); err != nil {
			return err
		}
		for _, a := range got.Status.Ancestors {
			if a.ControllerName != graph.ControllerName || string(a.AncestorRef.Name) != gw.Name {
				continue
			}
			acc := meta.FindStatusCondition(a.Conditions, "Accepted")
			if condition(a.Conditions, "Accepted") == accepted && condition(a.Conditions, "ResolvedRefs") == resolved && acc.ObservedGeneration == got.Generation {
				return nil
			}
			return fmt.Errorf("conditions %+v", a.Conditions)
		}
		return fmt.Errorf("no entry of Gateway %s in %+v", gw, got.Status.Ancestors)
	})
}

// location waits for a location of the instance's nginx.conf that ok
// holds.
func location(ctx context.Context, t *testing.T, c client.Client, instance types.NamespacedName, what string, ok func([]conf.Directive) bool) {
	t.Helper()
	tools.Eventually(t, time.Minute, "a location that "+what, func() error {
		tree, err := served(ctx, c, instance)
		if err != nil {
			return err
		}
		var locations []string
		for _, s := range blocks(tree, "http", "server") {
			for _, l := range s.Block {
				if l.Name == "location" {
					if ok(l.Block) {
						return nil
					}
					locations = append(locations, fmt.Sprint(l.Args))
				}
			}
		}
		return fmt.Errorf("none of the locations %v", locations)
	})
}

// has reports a directive name whose first argument starts with prefix.
func has(l []conf.Directive, name, prefix string) bool {
	return slices.ContainsFunc(l, func(d conf.Directive) bool {
		return d.Name == name && len(d.Args) > 0 && len(d.Args[0]) >= len(prefix) && d.Args[0][:len(prefix)] == prefix
	})
}
