package conformance

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/apis/v1alpha2"
	"sigs.k8s.io/gateway-api/apis/v1alpha3"
	"sigs.k8s.io/gateway-api/apis/v1beta1"
	xv1alpha1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
	"sigs.k8s.io/gateway-api/conformance/utils/config"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"

	nginxv1beta1 "github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// What the harness creates and the operator implements.
const (
	// GatewayClassName is the GatewayClass the suite's Gateways name.
	GatewayClassName = "nginx"
	// ControllerName is the operator's Gateway controller, the class's
	// spec.controllerName.
	ControllerName = "nginx.operator.dev/gateway-controller"
)

// Profiles are the conformance profiles run. GATEWAY-GRPC sends gRPC in
// cleartext to the same listener port as HTTP/1.1, which nginx serves on
// one port from 1.25.1 on (the node's nginx is hack/install-nginx.sh's).
// GATEWAY-TLS, GATEWAY-TCP and GATEWAY-UDP dial the Gateway's address from
// the test's process (node.RouteServicesFromHost).
var Profiles = []suite.ConformanceProfile{suite.GatewayHTTPConformanceProfile, suite.GatewayGRPCConformanceProfile,
	suite.GatewayTLSConformanceProfile, suite.GatewayTCPConformanceProfile, suite.GatewayUDPConformanceProfile}

// ProfileNames are Profiles' names.
func ProfileNames() []suite.ConformanceProfileName {
	var names []suite.ConformanceProfileName
	for _, p := range Profiles {
		names = append(names, p.Name)
	}
	return names
}

// CoreFeatures are the core features of Profiles: what the suite tests
// when the GatewayClass claims nothing.
func CoreFeatures() suite.FeaturesSet {
	fs := suite.FeaturesSet{}
	for _, p := range Profiles {
		fs = fs.Union(p.CoreFeatures)
	}
	return fs
}

// Scheme holds the kinds the suite's clients read and write (as its
// conformance.DefaultOptions registers them) and the operator's.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme,
		gatewayv1.Install, v1beta1.Install, v1alpha2.Install, v1alpha3.Install, xv1alpha1.Install,
		nginxv1beta1.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Timeouts are the suite's waits on this cluster: the suite's defaults
// (config.DefaultTimeoutConfig) are sized for cloud load balancers, which
// take minutes to get an address; here a Gateway is a StatefulSet and a
// ClusterIP Service on a node that has every image, ready in seconds. A
// wait only runs out when a test fails, so these bound how long a failing
// run takes, not a passing one, and leave room for a machine busy with
// other tests. The request and consistency waits stay the suite's.
func Timeouts() config.TimeoutConfig {
	tc := config.DefaultTimeoutConfig()
	tc.GWCMustBeAccepted = time.Minute
	tc.GatewayMustHaveAddress = time.Minute
	tc.GatewayMustHaveCondition = time.Minute
	tc.ListenerSetMustHaveCondition = time.Minute
	tc.NamespacesMustBeReady = 2 * time.Minute
	return tc
}

// ClassClaims reads the GatewayClass: the features it claims, and, unless
// the operator accepted it (Accepted True for its generation) and it claims
// features, what is wrong with it.
func ClassClaims(ctx context.Context, c client.Reader) (suite.FeaturesSet, string) {
	gwc := &gatewayv1.GatewayClass{}
	if err := c.Get(ctx, client.ObjectKey{Name: GatewayClassName}, gwc); err != nil {
		return nil, fmt.Sprintf("reading GatewayClass %s: %v", GatewayClassName, err)
	}
	claimed := suite.FeaturesSet{}
	for _, f := range gwc.Status.SupportedFeatures {
		claimed.Insert(features.FeatureName(f.Name))
	}
	accepted := meta.FindStatusCondition(gwc.Status.Conditions, string(gatewayv1.GatewayClassConditionStatusAccepted))
	switch {
	case accepted == nil || accepted.ObservedGeneration != gwc.Generation || accepted.Status != metav1.ConditionTrue:
		return claimed, fmt.Sprintf("GatewayClass %s (controllerName %s) is not accepted: %s", GatewayClassName, gwc.Spec.ControllerName, classStatus(gwc))
	case claimed.Len() == 0:
		return claimed, fmt.Sprintf("GatewayClass %s is accepted but claims no features (status.supportedFeatures is empty)", GatewayClassName)
	}
	return claimed, ""
}

func classStatus(gwc *gatewayv1.GatewayClass) string {
	return fmt.Sprintf("generation %d, conditions %s, %d supported features", gwc.Generation, conditions(gwc.Status.Conditions), len(gwc.Status.SupportedFeatures))
}

func conditions(cs []metav1.Condition) string {
	if len(cs) == 0 {
		return "none"
	}
	var parts []string
	for _, c := range cs {
		parts = append(parts, fmt.Sprintf("%s=%s (%s, generation %d: %q)", c.Type, c.Status, c.Reason, c.ObservedGeneration, c.Message))
	}
	return strings.Join(parts, ", ")
}

// Diagnose says, for a failed run, what the cluster shows of the operator's
// side: the GatewayClass's status; each Gateway's conditions and addresses;
// the NginxOperators, whose conditions say whether nginx runs; the pods of
// the suite's namespaces that are not ready.
func Diagnose(ctx context.Context, c client.Reader) string {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 20*time.Second)
	defer cancel()
	var b strings.Builder
	gwc := &gatewayv1.GatewayClass{}
	if err := c.Get(ctx, client.ObjectKey{Name: GatewayClassName}, gwc); err != nil {
		fmt.Fprintf(&b, "GatewayClass %s: %v\n", GatewayClassName, err)
	} else {
		fmt.Fprintf(&b, "GatewayClass %s: %s\n", GatewayClassName, classStatus(gwc))
	}
	var gws gatewayv1.GatewayList
	if err := c.List(ctx, &gws); err != nil {
		fmt.Fprintf(&b, "Gateways: %v\n", err)
	}
	namespaces := map[string]bool{}
	for _, gw := range gws.Items {
		namespaces[gw.Namespace] = true
		var addrs []string
		for _, a := range gw.Status.Addresses {
			t := "<no type>"
			if a.Type != nil {
				t = string(*a.Type)
			}
			addrs = append(addrs, t+" "+a.Value)
		}
		fmt.Fprintf(&b, "Gateway %s/%s (class %s, generation %d): conditions %s; addresses %v\n",
			gw.Namespace, gw.Name, gw.Spec.GatewayClassName, gw.Generation, conditions(gw.Status.Conditions), addrs)
	}
	var instances nginxv1beta1.NginxOperatorList
	if err := c.List(ctx, &instances); err != nil {
		fmt.Fprintf(&b, "NginxOperators: %v\n", err)
	} else if len(instances.Items) == 0 {
		fmt.Fprintf(&b, "NginxOperators: none\n")
	}
	for _, n := range instances.Items {
		fmt.Fprintf(&b, "NginxOperator %s/%s: conditions %s\n", n.Namespace, n.Name, conditions(n.Status.Conditions))
	}
	for _, ns := range []string{suite.InfrastructureNamespace, suite.AppBackendNamespace, suite.WebBackendNamespace} {
		namespaces[ns] = true
	}
	var names []string
	for ns := range namespaces {
		names = append(names, ns)
	}
	sort.Strings(names)
	for _, ns := range names {
		var pods corev1.PodList
		if err := c.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			fmt.Fprintf(&b, "pods of %s: %v\n", ns, err)
			continue
		}
		for _, p := range pods.Items {
			if !podReady(&p) {
				fmt.Fprintf(&b, "pod %s/%s not ready: %s %s\n", ns, p.Name, p.Status.Phase, waiting(&p))
			}
		}
	}
	return b.String()
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func waiting(p *corev1.Pod) string {
	var parts []string
	for _, s := range p.Status.ContainerStatuses {
		if w := s.State.Waiting; w != nil {
			parts = append(parts, fmt.Sprintf("%s: %s %s", s.Name, w.Reason, w.Message))
		}
	}
	return strings.Join(parts, "; ")
}

// DegradedWait is the longest any status or consistency wait lasts in
// Degraded.
const DegradedWait = 10 * time.Second

// Degraded cuts tc's waits on statuses and on consistent answers to
// DegradedWait, for a run that has failed already (Setup failed, or the
// run is over its time budget, which only failing tests, each waiting out
// its timeouts, make it): the remaining tests still run and fail or pass
// with the suite's own messages, and the run ends in minutes rather than
// running into go test's -timeout, which would lose the report. A test
// that passes takes its waits' time, far below these.
func Degraded(tc config.TimeoutConfig) config.TimeoutConfig {
	for _, d := range []*time.Duration{
		&tc.GatewayMustHaveAddress, &tc.GatewayMustHaveCondition, &tc.GatewayStatusMustHaveListeners,
		&tc.GatewayListenersMustHaveConditions, &tc.ListenerSetMustHaveCondition, &tc.ListenerSetListenersMustHaveConditions,
		&tc.GWCMustBeAccepted, &tc.HTTPRouteMustNotHaveParents, &tc.HTTPRouteMustHaveCondition,
		&tc.TLSRouteMustHaveCondition, &tc.TCPRouteMustHaveCondition, &tc.UDPRouteMustHaveCondition,
		&tc.RouteMustHaveParents, &tc.MaxTimeToConsistency, &tc.NamespacesMustBeReady,
		&tc.LatestObservedGenerationSet, &tc.DefaultTestTimeout,
	} {
		*d = min(*d, DegradedWait)
	}
	return tc
}
