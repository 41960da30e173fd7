package e2e

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"

	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// checkLeastPrivilege runs after the whole suite passed: every permission the
// bundle's ClusterRole grants must have been used by the operator (as the
// apiserver's audit log of its ServiceAccount shows), so the role holds no
// verb beyond those the controllers use. A run that may not exercise
// everything is not checked: a filtered one (-run, -skip), or one where tests
// skip for a missing tool (make test sets NGINX_OPERATOR_REQUIRE_TOOLS).
func checkLeastPrivilege(c *framework.Cluster) error {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return nil
		}
	}
	if !tools.Required() {
		fmt.Fprintln(os.Stderr, "least-privilege check skipped: tests may have skipped for a missing tool (set NGINX_OPERATOR_REQUIRE_TOOLS=1)")
		return nil
	}
	root, err := tools.RepoRoot()
	if err != nil {
		return err
	}
	granted, err := grantedPermissions(filepath.Join(root, "config", "rbac", "role.yaml"))
	if err != nil {
		return err
	}
	used, err := framework.UsedPermissions(c.AuditLog(), framework.ServiceAccountUser(operatorNamespace, operatorServiceAccount))
	if err != nil {
		return err
	}
	var unused []string
	for _, p := range granted {
		if _, rare := rarelyUsed[p]; !used[p] && !rare {
			unused = append(unused, p.String())
		}
	}
	if len(unused) > 0 {
		slices.Sort(unused)
		return fmt.Errorf("config/rbac/role.yaml grants permissions the operator never used in the e2e suite "+
			"(remove their +kubebuilder:rbac markers, or add the test that needs them):\n  %s", strings.Join(unused, "\n  "))
	}
	return nil
}

// rarelyUsed are permissions the operator needs in situations the suite
// cannot provoke on purpose, each with the reason.
var rarelyUsed = map[framework.Permission]string{
	{Group: "", Resource: "events", Verb: "patch"}:              "the core/v1 event recorder of leader election patches an Event that repeats within its aggregation window",
	{Group: "events.k8s.io", Resource: "events", Verb: "patch"}: "the events.k8s.io recorder patches an Event into a series when it repeats, which depends on timing",
	// The storage migration runs only where etcd may hold an older version,
	// which this suite's cluster never does; test/upgrade creates one and
	// checks in its own audit log that the migration used both.
	{Group: "nginx.operator.dev", Resource: "nginxoperators", Verb: "update"}:                    "storage migration: checked by test/upgrade",
	{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions/status", Verb: "patch"}: "storage migration: checked by test/upgrade",
}

// grantedPermissions expands the ClusterRole's rules into single permissions.
func grantedPermissions(path string) ([]framework.Permission, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var out []framework.Permission
	for _, r := range role.Rules {
		for _, g := range r.APIGroups {
			for _, res := range r.Resources {
				for _, v := range r.Verbs {
					out = append(out, framework.Permission{Group: g, Resource: res, Verb: v})
				}
			}
		}
	}
	return out, nil
}
