package nginx

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/serviceport"
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
	pod := StatefulSet(n, Materials{Image: "nginx:1.27", ConfigHash: "abc"}).Spec.Template.Spec

	for _, v := range framework.RestrictedViolations(pod) {
		t.Error(v)
	}
}

func TestNamesAreValidAndDistinctPerInstance(t *testing.T) {
	for _, name := range []string{"web", "1st-site", strings.Repeat("a", 253), "www.example.com"} {
		names := layout.NamesFor(name)
		for _, n := range []string{names.StatefulSet, names.Service, names.HeadlessService} {
			if errs := validation.IsDNS1035Label(n); len(errs) > 0 {
				t.Errorf("%q: child name %q invalid: %v", name, n, errs)
			}
		}
		if secret := names.ConfigSecret; len(validation.IsDNS1123Subdomain(secret)) > 0 {
			t.Errorf("%q: config Secret name %q invalid", name, secret)
		}
		if len(names.StatefulSet) > 47 {
			t.Errorf("%q: StatefulSet name %q longer than 47", name, names.StatefulSet)
		}
	}
	if layout.NamesFor("web").StatefulSet == layout.NamesFor("api").StatefulSet {
		t.Error("two instances share a StatefulSet name")
	}
}

func TestUnsetReplicasStayUnownedAndPDBFollowsTheSpec(t *testing.T) {
	n := testInstance("web")
	n.Spec.Replicas = nil
	if r := StatefulSet(n, Materials{}).Spec.Replicas; r != nil {
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
	sts := StatefulSet(testInstance("web"), Materials{Image: "nginx:1.27", ConfigHash: "h1"})
	c := sts.Spec.Template.Spec.Containers[0]
	if c.Name != layout.NginxContainerName || c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
		t.Errorf("container %s terminationMessagePolicy = %q, want %s %q", c.Name, c.TerminationMessagePolicy, layout.NginxContainerName, corev1.TerminationMessageFallbackToLogsOnError)
	}
}

// A stopping pod's nginx keeps serving for a while before its stop signal,
// so that kube-proxy stops routing to it first: a rollout then fails no
// request (test/realpods/rollout proves it on a real node).
func TestNginxKeepsServingWhileTheEndpointsDropAStoppingPod(t *testing.T) {
	c := StatefulSet(testInstance("web"), Materials{Image: "nginx:1.27", ConfigHash: "h1"}).Spec.Template.Spec.Containers[0]
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil {
		t.Fatalf("nginx lifecycle = %+v, want a preStop sleep", c.Lifecycle)
	}
	// The kubelet's default grace period (30s) must leave nginx time to
	// finish its requests after the sleep.
	if s := c.Lifecycle.PreStop.Sleep.Seconds; s < 1 || s > 10 {
		t.Errorf("preStop sleeps %ds, want between 1 and 10", s)
	}
}

// What reloads and what rolls: a new configuration or certificate changes
// the config Secret (which the reloader loads in place) and not the pod
// template; what the pod itself is made of changes the template, which
// rolls the pods. Documentation/nginxoperator.md has the same table.
func TestANewConfigurationOrCertificateReloadsAndAPodChangeRolls(t *testing.T) {
	base := testInstance("web")
	in := Materials{Image: "nginx:1.27", ReloaderImage: "operator:1", Config: []byte("one"), ConfigHash: "h1", FilesHash: "f1"}
	template := func(n *v1beta1.NginxOperator, in Materials) corev1.PodTemplateSpec {
		return StatefulSet(n, in).Spec.Template
	}
	secret := func(in Materials) *corev1.Secret { return ConfigSecret(base, in) }
	for _, tc := range []struct {
		name       string
		edit       func(*v1beta1.NginxOperator, *Materials)
		wantRoll   bool
		wantSecret bool
	}{
		{"a new configuration", func(_ *v1beta1.NginxOperator, in *Materials) { in.Config, in.ConfigHash = []byte("two"), "h2" }, false, true},
		{"a rotated certificate", func(_ *v1beta1.NginxOperator, in *Materials) { in.FilesHash = "f2" }, false, true},
		{"a new certificate, CA or htpasswd file", func(n *v1beta1.NginxOperator, in *Materials) {
			n.Spec.Config.Servers = append(n.Spec.Config.Servers, v1beta1.Server{Port: "http", TLS: &v1beta1.TLS{SecretName: "new-tls"},
				BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "users", Key: "auth"}})
			in.References = render.ReferencesOf(&n.Spec)
			in.Config, in.ConfigHash, in.FilesHash = []byte("two"), "h2", "f2"
		}, false, true},
		{"scaling", func(n *v1beta1.NginxOperator, _ *Materials) { n.Spec.Replicas = ptr.To[int32](5) }, false, false},
		{"the image", func(_ *v1beta1.NginxOperator, in *Materials) { in.Image = "nginx:1.28" }, true, false},
		{"the reloader's image (an operator upgrade)", func(_ *v1beta1.NginxOperator, in *Materials) { in.ReloaderImage = "operator:2" }, true, false},
		{"resources", func(n *v1beta1.NginxOperator, _ *Materials) {
			n.Spec.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
		}, true, false},
		{"forceRedeploy", func(n *v1beta1.NginxOperator, _ *Materials) { n.Spec.ForceRedeploy = "now" }, true, false},
		{"the grace period", func(n *v1beta1.NginxOperator, _ *Materials) { n.Spec.Pod.TerminationGracePeriodSeconds = 300 }, true, false},
	} {
		n, changed := base.DeepCopy(), in
		tc.edit(n, &changed)
		roll := !equality.Semantic.DeepEqual(template(base, in), template(n, changed))
		rewrite := !equality.Semantic.DeepEqual(secret(in), secret(changed))
		if roll != tc.wantRoll || rewrite != tc.wantSecret {
			t.Errorf("%s: rolls %v, rewrites the config Secret %v; want %v, %v", tc.name, roll, rewrite, tc.wantRoll, tc.wantSecret)
		}
	}
}

// Where nginx connects to a proxied Service's own address (useClusterIP,
// the backup of an upstream of pods), it is the ClusterIP, not its DNS
// name: a Service re-created with another address changes nginx.conf, so
// the pods reload, and no DNS cache can hand the reload the old address.
func TestNginxConnectsToTheServicesAddress(t *testing.T) {
	for _, tc := range []struct {
		name string
		svc  corev1.ServiceSpec
		want string
	}{
		{"ClusterIP", corev1.ServiceSpec{ClusterIP: "10.96.0.1", ClusterIPs: []string{"10.96.0.1"}}, "10.96.0.1"},
		{"dual stack: the primary family", corev1.ServiceSpec{ClusterIP: "10.96.0.1", ClusterIPs: []string{"10.96.0.1", "fd00::1"}}, "10.96.0.1"},
		{"IPv6", corev1.ServiceSpec{ClusterIP: "fd00::1", ClusterIPs: []string{"fd00::1"}}, "[fd00::1]"},
		{"ExternalName: its target", corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}, "db.example.com"},
		{"headless: its name, which resolves to the pods", corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone}, "api.team-a.svc"},
	} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: "team-a"}, Spec: tc.svc}
		if got := serviceAddress(svc); got != tc.want {
			t.Errorf("%s: host %q, want %q", tc.name, got, tc.want)
		}
	}
}

// nginx runs under the reloader, copied in by an init container from the
// operator's image, with the files it must reload on watch and the
// socket nginx sends its request lines to.
func TestNginxRunsUnderTheReloaderWatchingWhatItLoads(t *testing.T) {
	n := testInstance("web")
	n.Spec.Config.Servers = []v1beta1.Server{{Port: "http", TLS: &v1beta1.TLS{SecretName: "web-tls"}}}
	pod := StatefulSet(n, Materials{Image: "nginx:1.27", ReloaderImage: "operator:1", References: render.ReferencesOf(&n.Spec)}).Spec.Template.Spec
	if len(pod.InitContainers) != 1 || pod.InitContainers[0].Image != "operator:1" ||
		!slices.Equal(pod.InitContainers[0].Command, []string{"/nginx-reloader", "-install=/reloader/nginx-reloader"}) {
		t.Errorf("init containers %+v, want the reloader's installer from operator:1", pod.InitContainers)
	}
	cmd := strings.Join(pod.Containers[0].Command, " ")
	want := "/reloader/nginx-reloader -listen-address=:18082 -config=/etc/nginx/operator/nginx.conf -work-config=/tmp/nginx.conf -push-key=/etc/nginx/operator/push-key -watch=/etc/nginx/operator -files=/etc/nginx/files -request-log=127.0.0.1:18083 -- nginx -c /tmp/nginx.conf -g daemon off;"
	if cmd != want {
		t.Errorf("nginx command\n%s\nwant\n%s", cmd, want)
	}
}

// An h2c port's Service port tells what is in front of it (a load
// balancer, a mesh) to speak plain-text HTTP/2; other ports say nothing.
func TestAnH2CPortsServicePortSaysH2C(t *testing.T) {
	n := testInstance("web")
	n.Spec.Ports = append(n.Spec.Ports, v1beta1.Port{Name: "grpc", ContainerPort: 8081, H2C: true})
	ports := Service(n, serviceport.Resolve(&n.Spec, serviceport.Standard)).Spec.Ports
	if ports[0].AppProtocol != nil || ports[1].AppProtocol == nil || *ports[1].AppProtocol != "kubernetes.io/h2c" {
		t.Errorf("Service ports %+v, want appProtocol kubernetes.io/h2c on grpc only", ports)
	}
}

// The client Service puts each port on the Service port serviceport.Resolve
// decides, targets the pod's port by name, carries the rule in its
// annotation (next to the user's, which it leaves as they were), and sets a
// nodePort only where the Service type has node ports. The headless
// Service keeps the containerPorts, which its clients dial on the pods.
func TestServiceListensOnTheResolvedPortsAndRecordsTheRule(t *testing.T) {
	n := testInstance("web")
	n.Spec.Ports = []v1beta1.Port{{Name: "http", ContainerPort: 8080, NodePort: 30080}, {Name: "https", ContainerPort: 8443}, {Name: "admin", ContainerPort: 9090, ServicePort: 9000}}
	n.Spec.Config.Servers = []v1beta1.Server{{Port: "http", RedirectToHTTPS: &v1beta1.HTTPSRedirect{}}, {Port: "https", TLS: &v1beta1.TLS{SecretName: "web-tls"}}}
	n.Spec.Service.Annotations = map[string]string{"cloud.example/lb": "internal"}
	port := func(name string, port, nodePort int32) corev1.ServicePort {
		return corev1.ServicePort{Name: name, Port: port, NodePort: nodePort, TargetPort: intstr.FromString(name), Protocol: corev1.ProtocolTCP}
	}
	for _, tc := range []struct {
		name     string
		typ      corev1.ServiceType
		rule     serviceport.Rule
		want     []corev1.ServicePort
		headless []int32
	}{
		{"ClusterIP, standard", corev1.ServiceTypeClusterIP, serviceport.Standard,
			[]corev1.ServicePort{port("http", 80, 0), port("https", 443, 0), port("admin", 9000, 0)}, []int32{8080, 8443, 9090}},
		{"NodePort, standard", corev1.ServiceTypeNodePort, serviceport.Standard,
			[]corev1.ServicePort{port("http", 80, 30080), port("https", 443, 0), port("admin", 9000, 0)}, []int32{8080, 8443, 9090}},
		{"LoadBalancer, legacy", corev1.ServiceTypeLoadBalancer, serviceport.Container,
			[]corev1.ServicePort{port("http", 8080, 30080), port("https", 8443, 0), port("admin", 9000, 0)}, []int32{8080, 8443, 9090}},
	} {
		n.Spec.Service.Type = tc.typ
		svc := Service(n, serviceport.Resolve(&n.Spec, tc.rule))
		if diff := cmp.Diff(tc.want, svc.Spec.Ports); diff != "" {
			t.Errorf("%s: Service ports (-want +got):\n%s", tc.name, diff)
		}
		if want := map[string]string{"cloud.example/lb": "internal", layout.ServicePortsAnnotation: string(tc.rule)}; !maps.Equal(svc.Annotations, want) {
			t.Errorf("%s: annotations %v, want %v", tc.name, svc.Annotations, want)
		}
		var headless []int32
		for _, p := range HeadlessService(n).Spec.Ports {
			headless = append(headless, p.Port)
		}
		if !slices.Equal(headless, tc.headless) {
			t.Errorf("%s: headless Service ports %v, want the containerPorts %v", tc.name, headless, tc.headless)
		}
	}
	if len(n.Spec.Service.Annotations) != 1 {
		t.Errorf("the builder wrote into spec.service.annotations: %v", n.Spec.Service.Annotations)
	}
}

// spec.childMetadata reaches every child the operator makes and the pods,
// under the operator's own labels and annotations, and under the pods' and
// the Service's own.
func TestChildMetadataReachesEveryChildUnderTheOperatorsOwn(t *testing.T) {
	n := testInstance("web")
	n.Spec.ChildMetadata = v1beta1.ChildMetadata{
		Labels:      map[string]string{"team": "a", "tier": "edge", "app.kubernetes.io/instance": "other"},
		Annotations: map[string]string{"example.com/owner": "team-a", "example.com/lb": "child"},
	}
	n.Spec.Pod.Labels = map[string]string{"tier": "pod"}
	n.Spec.Service.Annotations = map[string]string{"example.com/lb": "service"}
	n.Spec.PodDisruptionBudget = &v1beta1.PodDisruptionBudgetSpec{MaxUnavailable: ptr.To(intstr.FromInt32(1))}
	n.Spec.NetworkPolicy = &v1beta1.NetworkPolicySpec{}
	in := Materials{Config: []byte("events {}"), ConfigHash: "abc", Image: "nginx"}
	sts := StatefulSet(n, in)
	children := map[string]metav1.ObjectMeta{
		"StatefulSet":         sts.ObjectMeta,
		"pod":                 sts.Spec.Template.ObjectMeta,
		"Service":             Service(n, serviceport.Resolve(&n.Spec, serviceport.Standard)).ObjectMeta,
		"headless Service":    HeadlessService(n).ObjectMeta,
		"ServiceAccount":      ServiceAccount(n).ObjectMeta,
		"config Secret":       ConfigSecret(n, in).ObjectMeta,
		"PodDisruptionBudget": PodDisruptionBudget(n).ObjectMeta,
		"NetworkPolicy":       NetworkPolicy(n, OperatorPods{Namespace: "nginx-operator-system"}).ObjectMeta,
	}
	for kind, meta := range children {
		wantTier, wantLB := "edge", "child"
		switch kind {
		case "pod":
			wantTier = "pod"
		case "Service":
			wantLB = "service"
		}
		if meta.Labels["team"] != "a" || meta.Labels["tier"] != wantTier || meta.Labels["app.kubernetes.io/instance"] != "web" {
			t.Errorf("%s: labels %v, want team=a, tier=%s and the operator's instance label", kind, meta.Labels, wantTier)
		}
		if meta.Annotations["example.com/owner"] != "team-a" || meta.Annotations["example.com/lb"] != wantLB {
			t.Errorf("%s: annotations %v, want example.com/owner=team-a and example.com/lb=%s", kind, meta.Annotations, wantLB)
		}
	}
	if got := ConfigSecret(n, in).Annotations[layout.ConfigHashAnnotation]; got != "abc" {
		t.Errorf("the config Secret lost its hash annotation: %q", got)
	}
}
