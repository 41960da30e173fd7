//go:build !unit

package nginx_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

// edgeInstance listens for plain HTTP on 8080, redirecting to https, and
// for TLS on 8443.
func edgeInstance(ns, name string) *v1beta1.NginxOperator {
	n := instance(ns, name)
	n.Spec.Ports = []v1beta1.Port{{Name: "http", ContainerPort: 8080}, {Name: "https", ContainerPort: 8443}}
	n.Spec.Config.Servers = []v1beta1.Server{
		{Port: "http", RedirectToHTTPS: &v1beta1.HTTPSRedirect{}},
		{Port: "https", TLS: &v1beta1.TLS{SecretName: "edge-tls"}},
	}
	return n
}

// servicePortsOf reads the instance's client Service: "name=port" or
// "name=port/nodePort" per port, and its serviceport annotation.
func servicePortsOf(ctx context.Context, c client.Client, ns, name string) (ports, rule string, svc *corev1.Service) {
	svc = &corev1.Service{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: layout.NamesFor(name).Service}, svc); err != nil {
		return "", "", nil
	}
	var out []string
	for _, p := range svc.Spec.Ports {
		s := fmt.Sprintf("%s=%d", p.Name, p.Port)
		if p.NodePort != 0 {
			s += fmt.Sprintf("/%d", p.NodePort)
		}
		out = append(out, s)
	}
	return strings.Join(out, " "), svc.Annotations[layout.ServicePortsAnnotation], svc
}

// waitServicePorts waits until the instance is reconciled and its Service
// has ports (see servicePortsOf) and rule, and fails the test otherwise.
func waitServicePorts(ctx context.Context, t *testing.T, c client.Client, ns, name, ports, rule string) *corev1.Service {
	t.Helper()
	var gotPorts, gotRule string
	var svc *corev1.Service
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		gotPorts, gotRule, svc = servicePortsOf(ctx, c, ns, name)
		return reconciled(ctx, c, ns, name) && gotPorts == ports && gotRule == rule
	}) {
		t.Fatalf("%s: Service ports %q with %s=%q, want %q and %q", name, gotPorts, layout.ServicePortsAnnotation, gotRule, ports, rule)
	}
	return svc
}

// renderedRedirect is the https redirect in the instance's nginx.conf.
func renderedRedirect(ctx context.Context, c client.Client, ns, name string) string {
	var cfg corev1.Secret
	if c.Get(ctx, client.ObjectKey{Namespace: ns, Name: layout.NamesFor(name).ConfigSecret}, &cfg) != nil {
		return ""
	}
	for _, line := range strings.Split(string(cfg.Data[layout.ConfigFile]), "\n") {
		if strings.Contains(line, "return 308 https://") {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// A new instance's Service listens on 80 and 443; a Service an operator of
// release 0.3.0 or earlier created (no serviceport annotation) keeps the containerPorts
// through the upgrade, and gets the annotation container so that it stays
// so when the spec changes; an explicit servicePort wins in both, and the
// https redirect goes to the TLS port's Service port.
func TestServicesGetTheWellKnownPortsAndLegacyServicesKeepTheirs(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env)
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "edge-tls", Namespace: ns}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{"tls.crt": []byte("x"), "tls.key": []byte("y")}}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The legacy instance and its Service as an earlier release's operator left
	// them, before this operator starts.
	legacy := edgeInstance(ns, "legacy")
	if err := c.Create(ctx, legacy); err != nil {
		t.Fatal(err)
	}
	// Applied as that operator applied its children: server-side, as
	// naming.ManagedBy, so it owns the fields this operator changes.
	old := &corev1.Service{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: layout.NamesFor("legacy").Service, Namespace: ns, Labels: layout.Labels("legacy"),
			OwnerReferences: []metav1.OwnerReference{{APIVersion: v1beta1.GroupVersion.String(), Kind: "NginxOperator", Name: "legacy",
				UID: legacy.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
		Spec: corev1.ServiceSpec{Selector: layout.Selector("legacy"), Ports: []corev1.ServicePort{
			{Name: "http", Port: 8080, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP},
			{Name: "https", Port: 8443, TargetPort: intstr.FromString("https"), Protocol: corev1.ProtocolTCP},
		}},
	}
	if err := c.Patch(ctx, old, client.Apply, client.FieldOwner(naming.ManagedBy), client.ForceOwnership); err != nil {
		t.Fatal(err)
	}
	inprocess.StartWatching(t, env, nil, ns)

	fresh := edgeInstance(ns, "fresh")
	if err := c.Create(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	waitServicePorts(ctx, t, c, ns, "fresh", "http=80 https=443", "standard")
	waitServicePorts(ctx, t, c, ns, "legacy", "http=8080 https=8443", "container")
	for _, name := range []string{"fresh", "legacy"} {
		if got, want := renderedRedirect(ctx, c, ns, name), "return 308 https://$host$request_uri;"; got != want {
			t.Errorf("%s: redirect %q, want %q", name, got, want)
		}
	}

	// A spec change of the legacy instance keeps its rule: a new port gets
	// its containerPort, though it serves plain HTTP.
	framework.Update(ctx, t, c, legacy, func(n *v1beta1.NginxOperator) {
		n.Spec.Ports = append(n.Spec.Ports, v1beta1.Port{Name: "alt", ContainerPort: 8081})
		n.Spec.Config.Servers = append(n.Spec.Config.Servers, v1beta1.Server{Port: "alt"})
	})
	waitServicePorts(ctx, t, c, ns, "legacy", "http=8080 https=8443 alt=8081", "container")

	// An explicit servicePort wins, in either rule, and the redirect follows
	// the TLS port's.
	framework.Update(ctx, t, c, legacy, func(n *v1beta1.NginxOperator) { n.Spec.Ports[0].ServicePort, n.Spec.Ports[1].ServicePort = 80, 9443 })
	waitServicePorts(ctx, t, c, ns, "legacy", "http=80 https=9443 alt=8081", "container")
	framework.Update(ctx, t, c, fresh, func(n *v1beta1.NginxOperator) { n.Spec.Ports[1].ServicePort = 8443 })
	waitServicePorts(ctx, t, c, ns, "fresh", "http=80 https=8443", "standard")
	for _, name := range []string{"fresh", "legacy"} {
		want := map[string]string{"fresh": "return 308 https://$host:8443$request_uri;", "legacy": "return 308 https://$host:9443$request_uri;"}[name]
		if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { return renderedRedirect(ctx, c, ns, name) == want }) {
			t.Errorf("%s: redirect %q, want %q", name, renderedRedirect(ctx, c, ns, name), want)
		}
	}
}

// A nodePort in the spec lands in the Service; removing it keeps the port
// the Service has (the API server keeps an allocated node port an update
// leaves out), with no further write.
func TestNodePortsLandInTheServiceAndStayWhenUnset(t *testing.T) {
	t.Parallel()
	ctx, ns, _, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))
	web := instance(ns, "np")
	web.Spec.Service.Type = corev1.ServiceTypeNodePort
	web.Spec.Ports = []v1beta1.Port{{Name: "http", ContainerPort: 8080, NodePort: 31080}, {Name: "alt", ContainerPort: 8081}}
	if err := c.Create(ctx, web); err != nil {
		t.Fatal(err)
	}
	var altNodePort int32
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		ports, _, svc := servicePortsOf(ctx, c, ns, "np")
		if svc == nil || !reconciled(ctx, c, ns, "np") || !strings.HasPrefix(ports, "http=80/31080 alt=8081/") {
			return false
		}
		altNodePort = svc.Spec.Ports[1].NodePort
		return true
	}) {
		ports, _, _ := servicePortsOf(ctx, c, ns, "np")
		t.Fatalf("Service ports %q, want http=80/31080 and an allocated node port for alt", ports)
	}
	framework.Update(ctx, t, c, web, func(n *v1beta1.NginxOperator) { n.Spec.Ports[0].NodePort = 0 })
	want := fmt.Sprintf("http=80/31080 alt=8081/%d", altNodePort)
	svc := waitServicePorts(ctx, t, c, ns, "np", want, "standard")
	// A fresh look at the instance (metadata changes wake it) writes nothing.
	framework.Update(ctx, t, c, web, func(n *v1beta1.NginxOperator) { n.Annotations = map[string]string{"poke": "1"} })
	time.Sleep(3 * time.Second)
	after := waitServicePorts(ctx, t, c, ns, "np", want, "standard")
	if after.ResourceVersion != svc.ResourceVersion {
		t.Errorf("the Service was written again (resourceVersion %s, then %s)", svc.ResourceVersion, after.ResourceVersion)
	}
}

// The CRD refuses what would make a Service the API server refuses, or one
// that is not what the user meant, in words a user acts on.
func TestServicePortMistakesAreRefusedAtAdmission(t *testing.T) {
	t.Parallel()
	ctx, ns, _, c := inprocess.Setup(t, env)
	port := func(name string, containerPort int64, more ...any) map[string]any {
		p := map[string]any{"name": name, "containerPort": containerPort}
		for i := 0; i < len(more); i += 2 {
			p[more[i].(string)] = more[i+1]
		}
		return p
	}
	assertRefused(ctx, t, c, ns, []refusal{
		{"nodePort on a ClusterIP Service", map[string]any{"ports": []any{port("http", 8080, "nodePort", 30080)}},
			"ports[].nodePort needs service.type NodePort or LoadBalancer"},
		{"servicePort twice", map[string]any{"ports": []any{port("a", 8080, "servicePort", 80), port("b", 8081, "servicePort", 80)}},
			"servicePort values must be unique"},
		{"servicePort on another port's containerPort", map[string]any{"ports": []any{port("a", 8080), port("b", 8081, "servicePort", 8080)}},
			"a servicePort may not be the containerPort of a port without servicePort"},
		{"servicePort of the exporter", map[string]any{"ports": []any{port("a", 8080, "servicePort", 9113)}},
			"servicePort 9113 and 18082 are the Service's metrics ports"},
		{"nodePort twice", map[string]any{"service": map[string]any{"type": "NodePort"}, "ports": []any{port("a", 8080, "nodePort", 30080), port("b", 8081, "nodePort", 30080)}},
			"nodePort values must be unique"},
		{"servicePort 0", map[string]any{"ports": []any{port("a", 8080, "servicePort", -1)}}, "spec.ports[0].servicePort"},
		{"nodePort out of range", map[string]any{"service": map[string]any{"type": "NodePort"}, "ports": []any{port("a", 8080, "nodePort", 70000)}}, "spec.ports[0].nodePort"},
	})
	// What the rules allow: swapped well-known ports, a nodePort on a
	// LoadBalancer.
	ok := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "nginx.operator.dev/v1beta1", "kind": "NginxOperator",
		"metadata": map[string]any{"name": "good", "namespace": ns},
		"spec": map[string]any{"service": map[string]any{"type": "LoadBalancer"},
			"ports": []any{port("a", 8080, "servicePort", 443, "nodePort", 30443), port("b", 8081, "servicePort", 8080)}},
	}}
	if err := c.Create(ctx, ok); err != nil {
		t.Errorf("a valid spec refused: %v", err)
	}
}
