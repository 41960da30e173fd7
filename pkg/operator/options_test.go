package operator

import (
	"flag"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/nginx-operator/nginx-operator/pkg/naming"
)

func parse(t *testing.T, args ...string) Options {
	t.Helper()
	var o Options
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	o.BindFlags(fs, "v1.2.3")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

func TestDefaultsAreValidAndNameTheImages(t *testing.T) {
	t.Setenv("POD_NAMESPACE", "nginx-operator")
	o := parse(t)
	if o.Namespace != "nginx-operator" {
		t.Errorf("namespace = %q, want $POD_NAMESPACE", o.Namespace)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	if o.Images.Agent != DefaultAgentImage+":v1.2.3" {
		t.Errorf("agent image = %q, want the operator's own image at its version", o.Images.Agent)
	}
	if !o.MetricsSecure || o.LeaderElect {
		t.Errorf("metrics secure = %v, leader elect = %v; want secure metrics and no leader election by default", o.MetricsSecure, o.LeaderElect)
	}
}

func TestTheOwnImageVariableNamesTheAgentAndReloaderImages(t *testing.T) {
	t.Setenv(OwnImageEnv, "mirror.example.com/nginx-operator@sha256:0123")
	for _, tc := range []struct {
		args                []string
		wantAgent, wantLoad string
	}{
		{nil, "mirror.example.com/nginx-operator@sha256:0123", "mirror.example.com/nginx-operator@sha256:0123"},
		// A flag still wins over the variable.
		{[]string{"--reloader-image=r:1"}, "mirror.example.com/nginx-operator@sha256:0123", "r:1"},
	} {
		o := parse(t, tc.args...)
		if o.Images.Agent != tc.wantAgent || o.Images.Reloader != tc.wantLoad {
			t.Errorf("%v: agent %q reloader %q, want %q and %q", tc.args, o.Images.Agent, o.Images.Reloader, tc.wantAgent, tc.wantLoad)
		}
	}
}

func TestValidateRejectsBadCombinations(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--namespaces=a", "--deny-namespaces=b"}, "cannot be combined"},
		{[]string{"--leader-elect", "--leader-elect-lease-duration=1s", "--leader-elect-renew-deadline=2s"}, "lease duration"},
		{[]string{"--webhook-port=70000"}, "not a port number"},
		{[]string{"--nginx-image=nginx 1.27"}, "--nginx-image"},
		{[]string{"--namespace="}, "--namespace is required"},
	} {
		o := parse(t, tc.args...)
		err := o.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to mention %q", tc.args, err, tc.want)
		}
	}
}

func TestCacheOptionsScopeNamespacesAndManagedObjects(t *testing.T) {
	c := CacheOptions(parse(t, "--namespaces=team-a, team-b"))
	for _, ns := range []string{"team-a", "team-b"} {
		if _, ok := c.DefaultNamespaces[ns]; !ok {
			t.Errorf("DefaultNamespaces = %v, want %s (spaces trimmed)", c.DefaultNamespaces, ns)
		}
	}
	if len(c.DefaultNamespaces) != 2 {
		t.Errorf("DefaultNamespaces = %v, want exactly 2", c.DefaultNamespaces)
	}

	cached := map[string]bool{}
	for obj, byObject := range c.ByObject {
		cached[fmt.Sprintf("%T", obj)] = true
		if _, ok := obj.(*corev1.Namespace); ok {
			// The NginxMonitor controller watches every namespace's metadata
			// (namespaceSelector.labelSelector); no field selector applies.
			if byObject.Field == nil || !byObject.Field.Empty() {
				t.Errorf("Namespace cached with field selector %v, want none (not the --deny-namespaces one)", byObject.Field)
			}
			continue
		}
		if byObject.Label == nil || byObject.Label.String() != naming.ManagedSelector().String() {
			t.Errorf("%T cached with selector %v, want %s", obj, byObject.Label, naming.ManagedSelector())
		}
	}
	for _, obj := range []any{&corev1.Secret{}, &corev1.ConfigMap{}, &appsv1.StatefulSet{}, &corev1.Pod{}} {
		if !cached[fmt.Sprintf("%T", obj)] {
			t.Errorf("%T is not restricted to managed objects", obj)
		}
	}

	deny := CacheOptions(parse(t, "--deny-namespaces=kube-system,secret-team"))
	if deny.DefaultFieldSelector == nil {
		t.Fatal("no field selector for --deny-namespaces")
	}
	got := deny.DefaultFieldSelector.String()
	for _, want := range []string{"metadata.namespace!=kube-system", "metadata.namespace!=secret-team"} {
		if !strings.Contains(got, want) {
			t.Errorf("field selector %q lacks %q", got, want)
		}
	}
}
