package nginx

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework"
)

func testInstance(name string) *v1beta1.NginxOperator {
	return &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", UID: "uid-1"},
		Spec:       v1beta1.NginxOperatorSpec{Replicas: ptr.To[int32](2), Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}}},
	}
}

// TestPodsPassTheRestrictedPodSecurityStandard checks every rule of the
// restricted profile that a pod template controls.
func TestPodsPassTheRestrictedPodSecurityStandard(t *testing.T) {
	n := testInstance("web")
	n.Spec.Content.VolumeClaimTemplate = &v1beta1.VolumeClaimTemplate{Size: resource.MustParse("1Gi")}
	n.Spec.Config.Servers = []v1beta1.Server{{Port: "http", TLS: &v1beta1.TLS{SecretName: "web-tls"}}}
	pod := StatefulSet(n, Inputs{Image: "nginx:1.27", ConfigHash: "abc"}).Spec.Template.Spec

	for _, v := range framework.RestrictedViolations(pod) {
		t.Error(v)
	}
}

func TestConfigHashAndForceRedeployAloneChangeThePodTemplate(t *testing.T) {
	base := StatefulSet(testInstance("web"), Inputs{Image: "nginx:1.27", ConfigHash: "h1"}).Spec.Template
	scaled := testInstance("web")
	scaled.Spec.Replicas = ptr.To[int32](5)
	if got := StatefulSet(scaled, Inputs{Image: "nginx:1.27", ConfigHash: "h1"}).Spec.Template; !equalTemplates(base, got) {
		t.Error("scaling changed the pod template: it would roll every pod")
	}
	if got := StatefulSet(testInstance("web"), Inputs{Image: "nginx:1.27", ConfigHash: "h2"}).Spec.Template; equalTemplates(base, got) {
		t.Error("a new config hash left the pod template unchanged: pods would keep the old config")
	}
	forced := testInstance("web")
	forced.Spec.ForceRedeploy = "now"
	if got := StatefulSet(forced, Inputs{Image: "nginx:1.27", ConfigHash: "h1"}).Spec.Template; equalTemplates(base, got) {
		t.Error("forceRedeploy left the pod template unchanged")
	}
}

func equalTemplates(a, b corev1.PodTemplateSpec) bool {
	return a.String() == b.String()
}

func TestNamesAreValidAndDistinctPerInstance(t *testing.T) {
	for _, name := range []string{"web", "1st-site", strings.Repeat("a", 253), "www.example.com"} {
		names := NamesFor(name)
		for _, n := range []string{names.StatefulSet, names.Service, names.HeadlessService} {
			if errs := validation.IsDNS1035Label(n); len(errs) > 0 {
				t.Errorf("%q: child name %q invalid: %v", name, n, errs)
			}
		}
		if secret := names.ConfigSecretName("0123456789abcdef"); len(validation.IsDNS1123Subdomain(secret)) > 0 {
			t.Errorf("%q: config Secret name %q invalid", name, secret)
		}
		if len(names.StatefulSet) > 47 {
			t.Errorf("%q: StatefulSet name %q longer than 47", name, names.StatefulSet)
		}
	}
	if NamesFor("web").StatefulSet == NamesFor("api").StatefulSet {
		t.Error("two instances share a StatefulSet name")
	}
}

func TestUnsetReplicasStayUnownedAndPDBFollowsTheSpec(t *testing.T) {
	n := testInstance("web")
	n.Spec.Replicas = nil
	if r := StatefulSet(n, Inputs{}).Spec.Replicas; r != nil {
		t.Errorf("replicas = %d, want unset so an autoscaler may own it", *r)
	}
	if PodDisruptionBudget(n) != nil {
		t.Error("a PodDisruptionBudget without spec.podDisruptionBudget")
	}
	n.Spec.PodDisruptionBudget = &v1beta1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intOrStr(1))}
	if pdb := PodDisruptionBudget(n); pdb == nil || pdb.Spec.MaxUnavailable.IntValue() != 1 || pdb.Spec.Selector.MatchLabels["app.kubernetes.io/instance"] != "web" {
		t.Errorf("PodDisruptionBudget = %+v", pdb)
	}
}

func intOrStr(i int) intstr.IntOrString { return intstr.FromInt32(int32(i)) }

// nginx's last log lines become the termination message of a crashed nginx,
// which the status quotes (ConfigRejected).
func TestNginxKeepsItsLastLogLinesAsTerminationMessage(t *testing.T) {
	sts := StatefulSet(testInstance("web"), Inputs{Image: "nginx:1.27", ConfigHash: "h1"})
	c := sts.Spec.Template.Spec.Containers[0]
	if c.Name != NginxContainerName || c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		t.Errorf("container %s terminationMessagePolicy = %q, want %s %q", c.Name, c.TerminationMessagePolicy, NginxContainerName, corev1.TerminationMessageFallbackToLogsOnError)
	}
}

// A stopping pod's nginx keeps serving for a while before its stop signal,
// so that kube-proxy stops routing to it first: a rollout then fails no
// request (test/realpods/rollout proves it on a real node).
func TestNginxKeepsServingWhileTheEndpointsDropAStoppingPod(t *testing.T) {
	c := StatefulSet(testInstance("web"), Inputs{Image: "nginx:1.27", ConfigHash: "h1"}).Spec.Template.Spec.Containers[0]
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
		t.Fatalf("nginx lifecycle = %+v, want a preStop sleep", c.Lifecycle)
	}
	// The kubelet's default grace period (30s) must leave nginx time to
	// finish its requests after the sleep.
	if s := c.Lifecycle.PreStop.Sleep.Seconds; s < 1 || s > 10 {
		t.Errorf("preStop sleeps %ds, want between 1 and 10", s)
	}
}

// A StatefulSet from an operator before PodTemplateAnnotation keeps its
// pod template's shape until its pods roll for a reason of their own, so
// upgrading the operator rolls no pod; the next rollout brings the current
// shape (nginx's log as termination message, the preStop delay).
func TestUpgradingKeepsTheLegacyPodTemplateUntilTheNextRollout(t *testing.T) {
	n := testInstance("web")
	current := StatefulSet(n, Inputs{Image: "nginx:1.27", ConfigHash: "h1"})
	legacy := StatefulSet(n, Inputs{Image: "nginx:1.27", ConfigHash: "h1", LegacyPodTemplate: true})
	if c := legacy.Spec.Template.Spec.Containers[0]; c.Lifecycle != nil || c.TerminationMessagePolicy != "" || legacy.Spec.Template.Annotations[PodTemplateAnnotation] != "" {
		t.Errorf("legacy template: lifecycle %+v, terminationMessagePolicy %q, annotations %v: want none", c.Lifecycle, c.TerminationMessagePolicy, legacy.Spec.Template.Annotations)
	}
	if current.Spec.Template.Annotations[PodTemplateAnnotation] != PodTemplateVersion {
		t.Errorf("current template annotations %v, want %s=%s", current.Spec.Template.Annotations, PodTemplateAnnotation, PodTemplateVersion)
	}
	rolled := func(edit func(*v1beta1.NginxOperator), hash, tls string) *appsv1.StatefulSet {
		m := testInstance("web")
		if edit != nil {
			edit(m)
		}
		return StatefulSet(m, Inputs{Image: "nginx:1.27", ConfigHash: hash, TLSHash: tls})
	}
	for _, tc := range []struct {
		name          string
		live, desired *appsv1.StatefulSet
		want          bool
	}{
		{"no StatefulSet yet", nil, current, false},
		{"a legacy StatefulSet, same configuration", legacy, current, true},
		{"a legacy StatefulSet, new configuration", legacy, rolled(nil, "h2", ""), false},
		{"a legacy StatefulSet, forceRedeploy", legacy, rolled(func(m *v1beta1.NginxOperator) { m.Spec.ForceRedeploy = "now" }, "h1", ""), false},
		{"a legacy StatefulSet, rotated certificate", legacy, rolled(nil, "h1", "t2"), false},
		{"a current StatefulSet", current, current, false},
	} {
		if got := keepsLegacyTemplate(tc.live, tc.desired); got != tc.want {
			t.Errorf("%s: keepsLegacyTemplate = %v, want %v", tc.name, got, tc.want)
		}
	}
}
