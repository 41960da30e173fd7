package e2e

import (
	"context"
	"testing"
)

const oneOfEachKind = `
apiVersion: nginx.operator.dev/v1beta1
kind: NginxOperator
metadata: {name: web, labels: {team: a}}
spec:
  replicas: 2
  ports: [{name: http, containerPort: 8080}]
---
apiVersion: nginx.operator.dev/v1beta1
kind: NginxMonitor
metadata: {name: team}
spec:
  selector: {matchLabels: {team: a}}
---
apiVersion: nginx.operator.dev/v1beta1
kind: NginxBackup
metadata: {name: nightly}
spec:
  instance: web
  schedule: "0 3 * * *"
  destination: {pvc: {claimName: backups}}
`

func TestCRDsAreServedListedByCategoryAndExplained(t *testing.T) {
	t.Parallel()
	install(t)
	ctx := context.Background()
	ns, _ := newNamespace(t)

	if out, err := kubectlWithInput(ctx, oneOfEachKind, "apply", "-n", ns, "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s", err, out)
	}
	out, err := kubectl(ctx, "get", "nginx", "-n", ns, "-o", "name")
	if err != nil {
		t.Fatalf("kubectl get nginx: %v\n%s", err, out)
	}
	mustContain(t, "kubectl get nginx (the category)", out,
		"nginxoperator.nginx.operator.dev/web", "nginxmonitor.nginx.operator.dev/team", "nginxbackup.nginx.operator.dev/nightly")

	out, err = kubectl(ctx, "explain", "nginxoperator.spec")
	if err != nil {
		t.Fatalf("kubectl explain: %v\n%s", err, out)
	}
	mustContain(t, "kubectl explain nginxoperator.spec", out,
		"Replicas is the number of nginx pods", "forceRedeploy", "ForceRedeploy rolls every pod")

	out, err = kubectl(ctx, "get", "ngx", "-n", ns)
	if err != nil {
		t.Fatalf("kubectl get ngx (short name): %v\n%s", err, out)
	}
	mustContain(t, "printer columns", out, "READY", "REPLICAS", "DESIRED", "AGE")
}

func TestMonitorAndBackupCRDsRefuseInvalidObjectsNamingTheField(t *testing.T) {
	t.Parallel()
	install(t)
	ctx := context.Background()
	ns, _ := newNamespace(t)
	for _, tc := range []struct {
		name, manifest, want string
	}{
		{"two backup destinations", `{apiVersion: nginx.operator.dev/v1beta1, kind: NginxBackup, metadata: {name: both}, spec: {instance: web, destination: {pvc: {claimName: a}, s3: {endpoint: s3.local, bucket: backups, credentialsSecret: s3}}}}`,
			"set exactly one of s3 or pvc"},
		{"backup without instance", `{apiVersion: nginx.operator.dev/v1beta1, kind: NginxBackup, metadata: {name: noinstance}, spec: {destination: {pvc: {claimName: a}}}}`,
			"spec.instance"},
		{"monitor with both any and names", `{apiVersion: nginx.operator.dev/v1beta1, kind: NginxMonitor, metadata: {name: both}, spec: {namespaceSelector: {any: true, matchNames: [a]}}}`,
			"set either any or matchNames, not both"},
		{"bad scrape interval", `{apiVersion: nginx.operator.dev/v1beta1, kind: NginxMonitor, metadata: {name: interval}, spec: {endpoint: {interval: "thirty seconds"}}}`,
			"spec.endpoint.interval"},
	} {
		out, err := kubectlWithInput(ctx, tc.manifest, "create", "-n", ns, "-f", "-")
		if err == nil {
			t.Errorf("%s: accepted, want refused with %q", tc.name, tc.want)
			continue
		}
		mustContain(t, tc.name, out, tc.want)
	}
}
