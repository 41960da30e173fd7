package operator

import (
	"testing"
	"unsafe"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/serviceport"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

func TestTrimForCacheKeepsOnlyTheOperatorsApplyRecord(t *testing.T) {
	own := metav1.ManagedFieldsEntry{Manager: naming.ManagedBy, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "apps/v1",
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:spec":{"f:replicas":{}}}`)}}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Annotations: map[string]string{lastAppliedAnnotation: "{}", "keep": "me"},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, Subresource: "status"},
				own,
				{Manager: naming.ManagedBy, Operation: metav1.ManagedFieldsOperationUpdate},
				{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationApply},
			},
		},
		Spec: appsv1.StatefulSetSpec{
			Replicas:             new(int32),
			Selector:             &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			ServiceName:          "web",
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "content"}}},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"hash": "1"}},
				Spec: corev1.PodSpec{
					InitContainers: []corev1.Container{{Name: "restore", Image: "agent", Args: []string{"restore", "--id=1"},
						Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("64Mi")}}}},
					Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}},
					Volumes:    []corev1.Volume{{Name: "config"}},
				},
			},
		},
	}
	got, err := TrimForCache(sts)
	if err != nil {
		t.Fatal(err)
	}
	trimmed := got.(*appsv1.StatefulSet)
	compacted := []metav1.ManagedFieldsEntry{own}
	k8sutil.CompactApplyRecord(compacted)
	if compacted[0].FieldsType != k8sutil.FieldsDigestType {
		t.Fatalf("CompactApplyRecord left %+v", compacted[0])
	}
	if diff := cmp.Diff(compacted, trimmed.ManagedFields); diff != "" {
		t.Errorf("managedFields of a built-in kind (-want +got):\n%s", diff)
	}
	// A kind without a schema in the client keeps its full record.
	sm := &monitoringv1.ServiceMonitor{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{own}}}
	got, _ = TrimForCache(sm)
	if diff := cmp.Diff([]metav1.ManagedFieldsEntry{own}, got.(*monitoringv1.ServiceMonitor).ManagedFields); diff != "" {
		t.Errorf("managedFields of a ServiceMonitor (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"keep": "me"}, trimmed.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	// What the controller reads stays: the replicas, the claim templates,
	// the template's annotations and the init containers' names and
	// arguments; the rest goes.
	want := appsv1.StatefulSetSpec{
		Replicas:             new(int32),
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "content"}}},
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"hash": "1"}},
			Spec:       corev1.PodSpec{InitContainers: []corev1.Container{{Name: "restore", Args: []string{"restore", "--id=1"}}}},
		},
	}
	if diff := cmp.Diff(want, trimmed.Spec); diff != "" {
		t.Errorf("StatefulSet spec (-want +got):\n%s", diff)
	}

	secret := &corev1.Secret{Data: map[string][]byte{"nginx.conf": []byte("events {}")}}
	if got, _ := TrimForCache(secret); got.(*corev1.Secret).Data != nil {
		t.Error("a cached Secret keeps its data")
	}
	config := &corev1.Secret{Data: map[string][]byte{"nginx.conf": []byte("events {}"), layout.PushKeyFile: []byte("k"), reloader.RevisionFile: []byte("7")}}
	kept, _ := TrimForCache(config)
	if diff := cmp.Diff(map[string][]byte{layout.PushKeyFile: []byte("k"), reloader.RevisionFile: []byte("7")}, kept.(*corev1.Secret).Data); diff != "" {
		t.Errorf("a cached config Secret keeps other data than its push key and revision (-want +got):\n%s", diff)
	}
	meta := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "x"}}}}
	if got, _ := TrimForCache(meta); len(got.(*metav1.PartialObjectMetadata).ManagedFields) != 0 {
		t.Error("metadata-only objects keep other managers' records")
	}
	if got, err := TrimForCache("not an object"); err != nil || got != "not an object" {
		t.Errorf("TrimForCache(string) = %v, %v; want it unchanged", got, err)
	}
}

func TestCacheOptionsTrimObjects(t *testing.T) {
	if CacheOptions(Options{}).DefaultTransform == nil {
		t.Error("the cache stores objects untrimmed")
	}
}

// The cache keeps of a pod what the NginxOperator controller reads: its
// metadata, its IP (where the reloader answers) and its containers' states,
// not its spec or the rest of its status.
func TestTrimForCacheKeepsOnlyAPodsMetadataAndContainerStates(t *testing.T) {
	term := &corev1.ContainerStateTerminated{ExitCode: 1, Message: "nginx: [emerg] bad"}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-0", Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"hash": "1"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "StatefulSet", Name: "web"}},
		},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx", Command: []string{"nginx"}}}},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.0.0.1", PodIPs: []corev1.PodIP{{IP: "10.0.0.1"}}, Conditions: []corev1.PodCondition{{Type: corev1.PodReady}},
			InitContainerStatuses: []corev1.ContainerStatus{{Name: "restore"}},
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "nginx", Image: "nginx", ImageID: "sha256:1", ContainerID: "containerd://1", RestartCount: 2,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: term},
			}},
		},
	}
	got, err := TrimForCache(pod)
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web-0", Labels: map[string]string{"app": "web"}, Annotations: map[string]string{"hash": "1"},
			OwnerReferences: []metav1.OwnerReference{{Kind: "StatefulSet", Name: "web"}},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning, PodIP: "10.0.0.1",
			ContainerStatuses: []corev1.ContainerStatus{{
				Name: "nginx", RestartCount: 2,
				State:                corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}},
				LastTerminationState: corev1.ContainerState{Terminated: term},
			}},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimmed pod (-want +got):\n%s", diff)
	}
}

// The cache keeps of a Service its metadata, IP families (the controller's
// IPv6 decision) and addresses (a Gateway's), not the rest of its spec or
// its status. The
// metadata includes the annotations: layout.ServicePortsAnnotation tells the
// controller which ports the Service keeps (see serviceport.RuleOf).
func TestTrimForCacheKeepsOnlyAServicesIPFamiliesAndAddresses(t *testing.T) {
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a", Labels: map[string]string{"app": "web"},
			Annotations: map[string]string{layout.ServicePortsAnnotation: string(serviceport.Container)}},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ClusterIP: "10.96.0.10", ClusterIPs: []string{"10.96.0.10"}, IPFamilies: []corev1.IPFamily{corev1.IPv6Protocol},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80}}, Selector: map[string]string{"app": "web"}},
		Status: corev1.ServiceStatus{LoadBalancer: corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{{IP: "192.0.2.1"}}}},
	}
	got, err := TrimForCache(svc.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	want := &corev1.Service{ObjectMeta: svc.ObjectMeta, Spec: corev1.ServiceSpec{IPFamilies: svc.Spec.IPFamilies, ClusterIPs: svc.Spec.ClusterIPs}, Status: svc.Status}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trimmed Service (-want +got):\n%s", diff)
	}
	if rule := serviceport.RuleOf(got.(*corev1.Service)); rule != serviceport.Container {
		t.Errorf("the trimmed Service follows rule %q, want the %q it carries", rule, serviceport.Container)
	}
}

// Two cached children of one instance keep one copy of the strings they
// share: the namespace, the label keys and values, the annotation keys and
// the owner's kind; values that differ stay as they are.
func TestTrimForCacheSharesTheStringsObjectsHaveInCommon(t *testing.T) {
	child := func(name, hash string) *corev1.Secret {
		// Built from fresh bytes, as a decoder does.
		fresh := func(s string) string { return string([]byte(s)) }
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: fresh("team-a"),
			Labels:          map[string]string{fresh(naming.LabelInstance): fresh("web"), fresh(naming.LabelManagedBy): fresh(naming.ManagedBy)},
			Annotations:     map[string]string{fresh("nginx.operator.dev/applied-hash"): hash},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: fresh("nginx.operator.dev/v1beta1"), Kind: fresh("NginxOperator"), Name: "web"}},
		}}
	}
	a, b := child("a", "1"), child("b", "2")
	for _, obj := range []*corev1.Secret{a, b} {
		if _, err := TrimForCache(obj); err != nil {
			t.Fatal(err)
		}
	}
	same := func(what, x, y string) {
		t.Helper()
		if x != y || unsafe.StringData(x) != unsafe.StringData(y) {
			t.Errorf("%s: %q and %q are two copies", what, x, y)
		}
	}
	same("namespace", a.Namespace, b.Namespace)
	same("owner kind", a.OwnerReferences[0].Kind, b.OwnerReferences[0].Kind)
	same("owner version", a.OwnerReferences[0].APIVersion, b.OwnerReferences[0].APIVersion)
	key := func(m map[string]string, k string) string {
		for key := range m {
			if key == k {
				return key
			}
		}
		t.Fatalf("no key %q in %v", k, m)
		return ""
	}
	same("label key", key(a.Labels, naming.LabelInstance), key(b.Labels, naming.LabelInstance))
	same("label value", a.Labels[naming.LabelInstance], b.Labels[naming.LabelInstance])
	same("annotation key", key(a.Annotations, "nginx.operator.dev/applied-hash"), key(b.Annotations, "nginx.operator.dev/applied-hash"))
	if a.Annotations["nginx.operator.dev/applied-hash"] != "1" || b.Annotations["nginx.operator.dev/applied-hash"] != "2" || a.Labels[naming.LabelManagedBy] != naming.ManagedBy {
		t.Errorf("values changed: %v %v %v", a.Annotations, b.Annotations, a.Labels)
	}
}
