package framework

import (
	"context"
	"crypto/x509"
	"fmt"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

// ExampleTLSSecrets are the certificates example/ leaves to the user:
// namespace to Secret name.
var ExampleTLSSecrets = map[string]string{"team-a": "gateway-tls", "team-b": "shop-tls"}

// ReadyCondition is the condition that says an object of kind is ready:
// Available for an NginxOperator, Ready for an NginxMonitor or NginxBackup,
// and "" for any other kind.
func ReadyCondition(kind string) string {
	switch kind {
	case "NginxOperator":
		return "Available"
	case "NginxMonitor", "NginxBackup":
		return "Ready"
	}
	return ""
}

// NotReady describes each object of objs, of our kinds, whose ready condition
// is not True; an empty result means all are ready.
func NotReady(ctx context.Context, c client.Reader, objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		want := ReadyCondition(o.GetKind())
		if want == "" {
			continue
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(o.GroupVersionKind())
		key := client.ObjectKeyFromObject(o)
		if cond := Condition(ctx, c, key, live, want); cond == nil || cond.Status != "True" {
			out = append(out, fmt.Sprintf("%s %s: %s is not True: %+v", o.GetKind(), key, want, cond))
		}
	}
	return out
}

// ServingCert is tools.ServingCert for one host, failing t on error.
func ServingCert(t testing.TB, host string) (*x509.CertPool, []byte, []byte) {
	t.Helper()
	pool, certPEM, keyPEM, err := tools.ServingCert(host)
	if err != nil {
		t.Fatal(err)
	}
	return pool, certPEM, keyPEM
}

// WaitReady waits until every object of ours among objs reports its ready
// condition (see NotReady), or fails the test after timeout naming those
// that do not.
func WaitReady(ctx context.Context, t testing.TB, c client.Reader, timeout time.Duration, objs ...*unstructured.Unstructured) {
	t.Helper()
	var notReady []string
	if !WaitFor(ctx, timeout, func(ctx context.Context) bool {
		notReady = NotReady(ctx, c, objs)
		return len(notReady) == 0
	}) {
		t.Fatalf("not ready after %s:\n%s", timeout, strings.Join(notReady, "\n"))
	}
}
