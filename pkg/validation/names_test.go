package validation_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/backup/jobs"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/monitor"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// child is one object the operator creates, by resource and name: two
// children collide when both are equal.
type child struct{ resource, name string }

// childrenOf lists what the operator creates for an object of kind named
// name.
func childrenOf(kind, name string) []child {
	switch kind {
	case "NginxOperator":
		n := layout.NamesFor(name)
		return []child{
			{"statefulsets", n.StatefulSet}, {"services", n.Service}, {"services", n.HeadlessService},
			{"serviceaccounts", n.ServiceAccount}, {"poddisruptionbudgets", n.PodDisruptionBudget},
			{"secrets", n.ConfigSecret},
			{"secrets", n.FilesSecret(0)}, {"secrets", n.FilesSecret(1)}, {"secrets", n.FilesSecret(2)}, {"secrets", n.FilesSecret(3)},
		}
	case "NginxMonitor":
		return []child{{"secrets", monitor.SecretName(name)}, {"servicemonitors", name}}
	case "NginxBackup":
		b := &v1beta1.NginxBackup{ObjectMeta: metav1.ObjectMeta{Name: name}}
		return []child{{"jobs", jobs.JobName(b)}, {"cronjobs", jobs.CronJobName(b)}}
	}
	return nil
}

// admitted tells whether admission accepts a new object of kind named name,
// by the CRD's own name rule.
func admitted(t *testing.T, kind, name string) bool {
	t.Helper()
	s, err := validation.V1beta1(kind)
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{"apiVersion": "nginx.operator.dev/v1beta1", "kind": kind, "metadata": map[string]any{"name": name, "namespace": "ns"}}
	for _, e := range s.ValidateCreate(context.Background(), obj) {
		if strings.Contains(e.Error(), "metadata.name must") {
			return false
		}
	}
	return true
}

// randomName strings together the tokens child names end with, so that the
// names most likely to collide are the ones tried.
func randomName(r *rand.Rand) string {
	tokens := []string{"web", "pods", "config", "scrape", "nginx", "backup", "files", "0", "a", "0123456789abcdef", "x1"}
	var parts []string
	for range 1 + r.IntN(5) {
		parts = append(parts, tokens[r.IntN(len(tokens))])
	}
	return strings.Join(parts, "-")
}

// Property: no two objects of the three kinds in one namespace, each with a
// name admission accepts, make the operator create two children of the same
// resource with the same name.
func TestNoTwoAdmittedObjectsDeriveTheSameChildName(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	kinds := []string{"NginxOperator", "NginxMonitor", "NginxBackup"}
	owners := map[child]string{}
	checked := 0
	add := func(kind, name string) {
		if !admitted(t, kind, name) {
			return
		}
		checked++
		for _, c := range childrenOf(kind, name) {
			owner := kind + "/" + name
			if prev, ok := owners[c]; ok && prev != owner {
				t.Errorf("%s %q is derived from both %s and %s", c.resource, c.name, prev, owner)
			}
			owners[c] = owner
		}
	}
	// The collisions earlier versions allowed, then random names.
	for _, kind := range kinds {
		for _, name := range []string{"web", "web-pods", "web-scrape", "web-config", "web-scrape-config", "web-backup", "web-nginx", "web-nginx-config", "web-config-0123456789abcdef"} {
			add(kind, name)
		}
	}
	for range 3000 {
		add(kinds[r.IntN(len(kinds))], randomName(r))
	}
	if checked < 1000 {
		t.Errorf("only %d admitted names checked: the generator is too weak", checked)
	}
	for _, refused := range []struct{ kind, name string }{
		{"NginxOperator", "web-pods"}, {"NginxOperator", strings.Repeat("a", 48)}, {"NginxOperator", "1web"},
		{"NginxMonitor", strings.Repeat("a", 50)}, {"NginxBackup", strings.Repeat("a", 46)},
	} {
		if admitted(t, refused.kind, refused.name) {
			t.Errorf("%s %q admitted; its children would collide or be cut short", refused.kind, refused.name)
		}
	}
}
