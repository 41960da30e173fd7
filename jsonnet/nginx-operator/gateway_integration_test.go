//go:build !unit

package jsonnet_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// env is an apiserver and etcd, started by the first test that asks: the
// judge of whether what the library composes is valid Gateway API.
var env = framework.NewEnv(framework.Options{})

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }

// libDryRun creates each object with dryRun=All, so the apiserver runs the
// CRDs' schemas and CEL rules on it and stores nothing.
func libDryRun(ctx context.Context, c client.Client, objs []map[string]any) error {
	for _, o := range objs {
		u := &unstructured.Unstructured{Object: o}
		if err := c.Create(ctx, u, client.DryRunAll); err != nil {
			return fmt.Errorf("%s: %w", libID(o), err)
		}
	}
	return nil
}

func TestLibraryGatewayIsValidAgainstGatewayAPICRDs(t *testing.T) {
	cfg := env.Cluster(t).Config
	ctx := context.Background()
	if err := framework.InstallGatewayAPICRDs(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	ns, cs := env.Namespace(t)
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	compose := func(params map[string]any) string {
		p, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("[nginxOperator.gatewayClass('%s')] + nginxOperator.gateway(%s).all", ns, p)
	}
	rule := func(path, pathType, service string, port int) map[string]any {
		return map[string]any{"path": path, "pathType": pathType, "service": service, "port": port}
	}

	t.Run("defaults and every option", func(t *testing.T) {
		objs, err := libEval(t, compose(map[string]any{
			"name": "edge", "namespace": ns, "className": ns,
			"listeners": []any{
				map[string]any{"name": "http", "port": 80, "protocol": "HTTP"},
				map[string]any{"name": "https", "port": 443, "protocol": "HTTPS", "hostname": "*.team-a.example",
					"tls": map[string]any{"certificateRefs": []any{map[string]any{"name": "web-tls"}}}},
			},
			"routes": map[string]any{
				"www": map[string]any{"rules": []any{rule("/", "PathPrefix", "www", 80)}},
				"shop": map[string]any{"listener": "https", "hostnames": []string{"shop.team-a.example"}, "rules": []any{
					map[string]any{"paths": []string{"/api", "/v2"}, "service": "api", "port": 8080},
					rule("/", "Exact", "shop", 80),
					rule("/items/[0-9]+", "RegularExpression", "shop", 80),
				}},
			},
		}))
		if err != nil {
			t.Fatalf("jsonnet: %v", err)
		}
		if len(objs) != 4 {
			t.Fatalf("objects = %d, want a GatewayClass, a Gateway and two HTTPRoutes", len(objs))
		}
		if err := libDryRun(ctx, c, objs); err != nil {
			t.Fatalf("the apiserver refuses what the library composed: %v", err)
		}
	})

	t.Run("the example jsonnet/examples/team-gateway.jsonnet", func(t *testing.T) {
		// Its namespace, team-a, is this cluster's own: no other test uses it.
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		if err := libDryRun(ctx, c, libExample(t, "team-gateway.jsonnet")); err != nil {
			t.Fatalf("the apiserver refuses the example: %v", err)
		}
	})

	// The dry run judges for real: a path Gateway API refuses is refused.
	t.Run("a relative path is refused", func(t *testing.T) {
		objs, err := libEval(t, compose(map[string]any{
			"name": "edge", "namespace": ns, "className": ns,
			"routes": map[string]any{"www": map[string]any{"rules": []any{rule("relative", "PathPrefix", "www", 80)}}},
		}))
		if err != nil {
			t.Fatalf("jsonnet: %v", err)
		}
		err = libDryRun(ctx, c, objs)
		if err == nil || !strings.Contains(err.Error(), "HTTPRoute/"+ns+"/www") {
			t.Fatalf("dry run error = %v, want the HTTPRoute refused", err)
		}
		t.Logf("refused as it should be: %v", err)
	})
}
