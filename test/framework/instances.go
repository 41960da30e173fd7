package framework

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// Update re-reads obj (by its namespace and name), applies change to it and
// writes it back, again until the write does not conflict with someone
// else's (the operator's status writes); obj then holds what was written.
func Update[T client.Object](ctx context.Context, t testing.TB, c client.Client, obj T, change func(T)) {
	t.Helper()
	key := client.ObjectKeyFromObject(obj)
	if err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := c.Get(ctx, key, obj); err != nil {
			return err
		}
		change(obj)
		return c.Update(ctx, obj)
	}); err != nil {
		t.Fatalf("updating %s: %v", key, err)
	}
}

// UpdateInstance is Update of the NginxOperator at key.
func UpdateInstance(ctx context.Context, t testing.TB, c client.Client, key client.ObjectKey, change func(*v1beta1.NginxOperator)) *v1beta1.NginxOperator {
	t.Helper()
	n := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
	Update(ctx, t, c, n, change)
	return n
}

// ServiceAddr is host:port of the client Service of the instance at key
// (its ClusterIP, and the Service port named port, whichever number the
// release that made it chose).
func ServiceAddr(ctx context.Context, t testing.TB, cs kubernetes.Interface, key client.ObjectKey, port string) string {
	t.Helper()
	svc, err := cs.CoreV1().Services(key.Namespace).Get(ctx, layout.NamesFor(key.Name).Service, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range svc.Spec.Ports {
		if p.Name == port {
			return net.JoinHostPort(svc.Spec.ClusterIP, fmt.Sprint(p.Port))
		}
	}
	t.Fatalf("Service %s/%s has no port %s: %+v", svc.Namespace, svc.Name, port, svc.Spec.Ports)
	return ""
}

// WaitAvailable waits until every NginxOperator of names in ns says
// Available, failing t after timeout, and returns when the test saw each
// become so.
func WaitAvailable(ctx context.Context, t testing.TB, c client.Reader, timeout time.Duration, ns string, names ...string) map[string]time.Time {
	t.Helper()
	seen := map[string]time.Time{}
	tools.Eventually(t, timeout, fmt.Sprintf("NginxOperators %v Available", names), func() error {
		for _, name := range names {
			cond := InstanceCondition(ctx, c, ns, name, v1beta1.ConditionAvailable)
			if _, ok := seen[name]; !ok && cond != nil && cond.Status == metav1.ConditionTrue {
				seen[name] = time.Now()
			}
		}
		if len(seen) < len(names) {
			return fmt.Errorf("only %v are", seen)
		}
		return nil
	})
	return seen
}
