package conversion

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1alpha1"
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

func ptr[T any](v T) *T { return &v }

var (
	alphaType = metav1.TypeMeta{APIVersion: "nginx.operator.dev/v1alpha1", Kind: "NginxOperator"}
	betaType  = metav1.TypeMeta{APIVersion: "nginx.operator.dev/v1beta1", Kind: "NginxOperator"}
	meta      = metav1.ObjectMeta{Name: "web", Namespace: "team-a", Labels: map[string]string{"team": "a"}, Generation: 3}
	available = metav1.Condition{Type: "Available", Status: metav1.ConditionTrue, Reason: "Ready", ObservedGeneration: 3,
		LastTransitionTime: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))}
)

// cmpOpts normalise only what JSON cannot tell apart: nil and empty
// slices and maps, and quantities with the same canonical string.
var cmpOpts = []cmp.Option{
	cmpopts.EquateEmpty(),
	cmp.Comparer(func(a, b resource.Quantity) bool { return a.String() == b.String() }),
}

// richBeta uses fields v1alpha1 has no place for, in spec and status.
func richBeta() *v1beta1.NginxOperator {
	return &v1beta1.NginxOperator{
		TypeMeta:   betaType,
		ObjectMeta: *meta.DeepCopy(),
		Spec: v1beta1.NginxOperatorSpec{
			Replicas: ptr[int32](2),
			Image:    "nginx:1.27",
			// ports[0] is v1alpha1's port: its other fields travel apart
			// from its containerPort.
			Ports: []v1beta1.Port{{Name: "web", ContainerPort: 8443, ServicePort: 443, NodePort: 30443, Protocol: corev1.ProtocolTCP},
				{Name: "admin", ContainerPort: 9090, ServicePort: 9000, NodePort: 30900}},
			ForceRedeploy: "monday",
			Paused:        true,
			Config: v1beta1.NginxConfig{
				NginxSettings: v1beta1.NginxSettings{
					TrustedProxies: []string{"10.0.0.0/8"}, RealIP: &v1beta1.RealIP{ProxyProtocol: true}, DisableHTTP2: true,
					TLS:       v1beta1.TLSPolicy{Protocols: []string{"TLSv1.3"}, SessionCacheMiB: 4},
					Gzip:      &v1beta1.Gzip{Types: []string{"application/json"}, Level: 3},
					AccessLog: v1beta1.AccessLog{Format: "JSON"},
				},
				Servers: []v1beta1.Server{
					{Port: "web", ServerNames: []string{"example.com"}, ErrorPages: []v1beta1.ErrorPage{{Codes: []int32{404}, Path: "/404.html"}},
						TLS: &v1beta1.TLS{SecretName: "web-tls", HSTS: &v1beta1.HSTS{MaxAgeSeconds: ptr[int32](0)},
							ClientCertificates: &v1beta1.ClientCertificates{CACertificate: v1beta1.CACertificateRef{Kind: "ConfigMap", Name: "clients"}}},
						IPAccess:  &v1beta1.IPAccess{Deny: []string{"192.0.2.0/24"}},
						BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "users", Realm: "Team"},
						RateLimit: &v1beta1.RateLimit{RequestsPerMinute: 30, Burst: 5},
						Locations: []v1beta1.Location{
							{Path: "/", Static: &v1beta1.StaticLocation{Fallback: "/index.html"}, Expires: "1h", DisableAccessLog: true,
								BasicAuth: &v1beta1.HTTPBasicAuth{Disabled: true}},
							{Path: "/api/", ClientMaxBodySize: "10m", Proxy: &v1beta1.ProxyLocation{
								Backends:   []v1beta1.Backend{{Service: "api", Port: 80, Weight: ptr[int32](9)}, {Service: "canary", Port: 80, Weight: ptr[int32](1)}},
								TLS:        &v1beta1.BackendTLS{Hostname: "api.internal", CACertificate: &v1beta1.CACertificateRef{Kind: "Secret", Name: "ca", Key: "ca.crt"}},
								URLRewrite: &v1beta1.URLRewrite{Path: &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr("")}},
								Buffering:  &v1beta1.ProxyBuffering{Disabled: true, HeaderBufferKiB: 4, Buffers: 8, BufferKiB: 4},
							},
								RequestHeaders:  &v1beta1.HeaderModifier{Set: []v1beta1.Header{{Name: "X-A", Value: "b"}}, Remove: []string{"Cookie"}},
								ResponseHeaders: &v1beta1.HeaderModifier{Add: []v1beta1.Header{{Name: "X-B", Value: "c"}}},
							},
							{Path: "/docs/", Redirect: &v1beta1.RedirectLocation{Scheme: "https", Hostname: "docs.example.com", Port: ptr[int32](8443),
								Path: &v1beta1.PathModifier{Type: "ReplaceFullPath", ReplaceFullPath: ptr("/")}}},
						}},
					{Port: "admin", RedirectToHTTPS: &v1beta1.HTTPSRedirect{Code: 308}},
				}},
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("128Mi")}},
			Service: v1beta1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer, ExternalTrafficPolicy: corev1.ServiceExternalTrafficPolicyLocal,
				LoadBalancerSourceRanges: []string{"203.0.113.0/24"}, LoadBalancerClass: "example.com/lb", SessionAffinity: corev1.ServiceAffinityClientIP,
				IPFamilies: []corev1.IPFamily{corev1.IPv6Protocol}},
		},
		Status: v1beta1.NginxOperatorStatus{ObservedGeneration: 3, Replicas: 2, ReadyReplicas: 1, ConfigHash: "abc", Conditions: []metav1.Condition{available}},
	}
}

func TestToV1beta1(t *testing.T) {
	rich := richBeta()
	richAlpha, err := ToV1alpha1(rich)
	if err != nil {
		t.Fatal(err)
	}
	withAnnotations := func(spec, status string) metav1.ObjectMeta {
		m := *meta.DeepCopy()
		m.Annotations = map[string]string{"keep": "me"}
		if spec != "" {
			m.Annotations[AnnotationSpec] = spec
		}
		if status != "" {
			m.Annotations[AnnotationStatus] = status
		}
		return m
	}
	metaKeep := *meta.DeepCopy()
	metaKeep.Annotations = map[string]string{"keep": "me"}

	for _, tc := range []struct {
		name string
		in   *v1alpha1.NginxOperator
		want *v1beta1.NginxOperator
	}{{
		name: "the book's object: one port becomes {http, port, TCP}",
		in:   &v1alpha1.NginxOperator{TypeMeta: alphaType, ObjectMeta: meta, Spec: v1alpha1.NginxOperatorSpec{Replicas: ptr[int32](1), Port: ptr[int32](8080)}},
		want: &v1beta1.NginxOperator{TypeMeta: betaType, ObjectMeta: meta, Spec: v1beta1.NginxOperatorSpec{Replicas: ptr[int32](1),
			Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}},
	}, {
		name: "no port and no replicas: no ports (the v1beta1 schema default applies on the server), replicas unowned",
		in:   &v1alpha1.NginxOperator{TypeMeta: alphaType, ObjectMeta: meta, Spec: v1alpha1.NginxOperatorSpec{ForceRedeploy: "x"}},
		want: &v1beta1.NginxOperator{TypeMeta: betaType, ObjectMeta: meta, Spec: v1beta1.NginxOperatorSpec{ForceRedeploy: "x"}},
	}, {
		name: "conditions are carried",
		in:   &v1alpha1.NginxOperator{TypeMeta: alphaType, ObjectMeta: meta, Status: v1alpha1.NginxOperatorStatus{Conditions: []metav1.Condition{available}}},
		want: &v1beta1.NginxOperator{TypeMeta: betaType, ObjectMeta: meta, Status: v1beta1.NginxOperatorStatus{Conditions: []metav1.Condition{available}}},
	}, {
		name: "the preserved spec is restored and the annotations removed",
		in:   richAlpha,
		want: rich,
	}, {
		name: "the v1alpha1 client's port, replicas, forceRedeploy and conditions win over the preserved ones",
		in: func() *v1alpha1.NginxOperator {
			a := richAlpha.DeepCopy()
			a.Spec.Port, a.Spec.Replicas, a.Spec.ForceRedeploy = ptr[int32](9443), nil, "tuesday"
			a.Status.Conditions = nil
			return a
		}(),
		want: func() *v1beta1.NginxOperator {
			b := richBeta()
			b.Spec.Ports[0].ContainerPort, b.Spec.Replicas, b.Spec.ForceRedeploy = 9443, nil, "tuesday"
			b.Status.Conditions = nil
			return b
		}(),
	}, {
		name: "removing port drops the first port, which it stood for, and keeps the others",
		in: func() *v1alpha1.NginxOperator {
			a := richAlpha.DeepCopy()
			a.Spec.Port = nil
			return a
		}(),
		want: func() *v1beta1.NginxOperator {
			b := richBeta()
			b.Spec.Ports = b.Spec.Ports[1:]
			return b
		}(),
	}, {
		name: "adding a port to an object preserved without ports adds {http, port, TCP}",
		in: &v1alpha1.NginxOperator{TypeMeta: alphaType, ObjectMeta: withAnnotations(`{"paused":true}`, ""),
			Spec: v1alpha1.NginxOperatorSpec{Port: ptr[int32](8081)}},
		want: &v1beta1.NginxOperator{TypeMeta: betaType, ObjectMeta: metaKeep,
			Spec: v1beta1.NginxOperatorSpec{Paused: true, Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8081, Protocol: corev1.ProtocolTCP}}}},
	}, {
		name: "fields of v1alpha1 written into the annotation by hand lose to the v1alpha1 fields",
		in: &v1alpha1.NginxOperator{TypeMeta: alphaType, ObjectMeta: withAnnotations(`{"replicas":7,"forceRedeploy":"a","ports":[{"name":"web","containerPort":1}]}`, `{"conditions":[{"type":"X"}],"readyReplicas":4}`),
			Spec:   v1alpha1.NginxOperatorSpec{Port: ptr[int32](8080)},
			Status: v1alpha1.NginxOperatorStatus{Conditions: []metav1.Condition{available}}},
		want: &v1beta1.NginxOperator{TypeMeta: betaType, ObjectMeta: metaKeep,
			Spec:   v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "web", ContainerPort: 8080}}},
			Status: v1beta1.NginxOperatorStatus{Conditions: []metav1.Condition{available}}},
	}, {
		name: "a status annotation a client wrote is ignored, malformed or not: the status is the operator's",
		in: &v1alpha1.NginxOperator{TypeMeta: alphaType, ObjectMeta: withAnnotations("", `{"configHash":"forged","selector":"app=other","replicas":9}`),
			Spec: v1alpha1.NginxOperatorSpec{Port: ptr[int32](8080)}},
		want: &v1beta1.NginxOperator{TypeMeta: betaType, ObjectMeta: metaKeep,
			Spec: v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}},
	}, {
		name: "a status annotation that is not JSON is ignored too",
		in: &v1alpha1.NginxOperator{TypeMeta: alphaType, ObjectMeta: withAnnotations("", `{`),
			Spec: v1alpha1.NginxOperatorSpec{Port: ptr[int32](8080)}},
		want: &v1beta1.NginxOperator{TypeMeta: betaType, ObjectMeta: metaKeep,
			Spec: v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in.DeepCopy()
			got, err := ToV1beta1(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(withStatusConditionsOnly(tc.want), got, cmpOpts...); diff != "" {
				t.Errorf("ToV1beta1 (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(in, tc.in); diff != "" {
				t.Errorf("ToV1beta1 modified its input:\n%s", diff)
			}
		})
	}
}

// withStatusConditionsOnly is what up-conversion makes of b's status: only
// the conditions, a v1alpha1 field, come back (see ToV1beta1).
func withStatusConditionsOnly(b *v1beta1.NginxOperator) *v1beta1.NginxOperator {
	out := b.DeepCopy()
	out.Status = v1beta1.NginxOperatorStatus{Conditions: b.Status.Conditions}
	return out
}

func TestToV1beta1RefusesAnnotationsItCannotRestore(t *testing.T) {
	for _, tc := range []struct {
		name, spec, status, want string
	}{
		{"not JSON", `{"paused":`, "", AnnotationSpec},
		{"not an object", `[1]`, "", AnnotationSpec},
		{"null", `null`, "", "not a JSON object"},
		{"a field v1beta1 does not have (a newer operator's?)", `{"brandNew":1}`, "", `unknown field "brandNew"`},
		{"a field of the wrong case is not silently matched", `{"Paused":true}`, "", `unknown field "Paused"`},
		{"a duplicated field", `{"paused":true,"paused":false}`, "", "duplicate field"},
		{"a field of the wrong type", `{"paused":"yes"}`, "", AnnotationSpec},
		{"ports not a list", `{"ports":{"name":"http"}}`, "", "ports is map[string]interface {}, not a list"},
		{"ports[0] not an object", `{"ports":["http"]}`, "", "ports[0] is string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &v1alpha1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Annotations: map[string]string{}}, Spec: v1alpha1.NginxOperatorSpec{Port: ptr[int32](8080)}}
			if tc.spec != "" {
				a.Annotations[AnnotationSpec] = tc.spec
			}
			if tc.status != "" {
				a.Annotations[AnnotationStatus] = tc.status
			}
			got, err := ToV1beta1(a)
			if err == nil {
				t.Fatalf("no error; converted to %+v", got)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "ns/web") {
				t.Errorf("error %q does not name the object and %q", err, tc.want)
			}
		})
	}
}

func TestToV1alpha1(t *testing.T) {
	for _, tc := range []struct {
		name             string
		in               *v1beta1.NginxOperator
		wantSpec         v1alpha1.NginxOperatorSpec
		wantConditions   []metav1.Condition
		wantSpecAnn      bool
		wantStatusAnn    bool
		wantOtherAnnKeys []string
	}{{
		name:     "what a v1alpha1 object converts to needs no annotation",
		in:       &v1beta1.NginxOperator{ObjectMeta: meta, Spec: v1beta1.NginxOperatorSpec{Replicas: ptr[int32](1), Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}},
		wantSpec: v1alpha1.NginxOperatorSpec{Replicas: ptr[int32](1), Port: ptr[int32](8080)},
	}, {
		name:     "no ports: no port, no annotation",
		in:       &v1beta1.NginxOperator{ObjectMeta: meta, Spec: v1beta1.NginxOperatorSpec{ForceRedeploy: "x"}},
		wantSpec: v1alpha1.NginxOperatorSpec{ForceRedeploy: "x"},
	}, {
		name:        "a first port not named http is preserved",
		in:          &v1beta1.NginxOperator{ObjectMeta: meta, Spec: v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "web", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}},
		wantSpec:    v1alpha1.NginxOperatorSpec{Port: ptr[int32](8080)},
		wantSpecAnn: true,
	}, {
		name:        "a first port without protocol is preserved as such",
		in:          &v1beta1.NginxOperator{ObjectMeta: meta, Spec: v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}}}},
		wantSpec:    v1alpha1.NginxOperatorSpec{Port: ptr[int32](8080)},
		wantSpecAnn: true,
	}, {
		name:           "everything else of spec and status goes into the annotations; the port is the first one",
		in:             richBeta(),
		wantSpec:       v1alpha1.NginxOperatorSpec{Replicas: ptr[int32](2), Port: ptr[int32](8443), ForceRedeploy: "monday"},
		wantConditions: []metav1.Condition{available},
		wantSpecAnn:    true, wantStatusAnn: true,
	}, {
		name: "stale preservation annotations on a v1beta1 object (say, copied from a v1alpha1 manifest) are not passed on",
		in: func() *v1beta1.NginxOperator {
			b := &v1beta1.NginxOperator{ObjectMeta: *meta.DeepCopy(), Spec: v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080, Protocol: corev1.ProtocolTCP}}}}
			b.Annotations = map[string]string{AnnotationSpec: `{"paused":true}`, AnnotationStatus: `{"replicas":9}`, "other": "kept"}
			return b
		}(),
		wantSpec:         v1alpha1.NginxOperatorSpec{Port: ptr[int32](8080)},
		wantOtherAnnKeys: []string{"other"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.in.DeepCopy()
			got, err := ToV1alpha1(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(in, tc.in); diff != "" {
				t.Errorf("ToV1alpha1 modified its input:\n%s", diff)
			}
			if got.TypeMeta != alphaType {
				t.Errorf("TypeMeta = %+v, want %+v", got.TypeMeta, alphaType)
			}
			if diff := cmp.Diff(tc.wantSpec, got.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantConditions, got.Status.Conditions, cmpOpts...); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			specAnn, hasSpec := got.Annotations[AnnotationSpec]
			_, hasStatus := got.Annotations[AnnotationStatus]
			if hasSpec != tc.wantSpecAnn || hasStatus != tc.wantStatusAnn {
				t.Errorf("annotations %v: want spec annotation %v, status annotation %v", got.Annotations, tc.wantSpecAnn, tc.wantStatusAnn)
			}
			var other []string
			for k := range got.Annotations {
				if k != AnnotationSpec && k != AnnotationStatus {
					other = append(other, k)
				}
			}
			if diff := cmp.Diff(tc.wantOtherAnnKeys, other, cmpOpts...); diff != "" {
				t.Errorf("other annotations (-want +got):\n%s", diff)
			}
			if hasSpec {
				assertNoV1alpha1Fields(t, specAnn)
			}
			back, err := ToV1beta1(got)
			if err != nil {
				t.Fatal(err)
			}
			want := tc.in.DeepCopy()
			want.TypeMeta = betaType
			if want.Annotations != nil { // reserved keys on v1beta1 input are the one thing not round-tripped
				delete(want.Annotations, AnnotationSpec)
				delete(want.Annotations, AnnotationStatus)
			}
			if diff := cmp.Diff(withStatusConditionsOnly(want), back, cmpOpts...); diff != "" {
				t.Errorf("back to v1beta1 (-want +got):\n%s", diff)
			}
		})
	}
}

// assertNoV1alpha1Fields checks that the spec annotation never repeats what
// the v1alpha1 fields hold, so a stale copy can never contradict them.
func assertNoV1alpha1Fields(t *testing.T, ann string) {
	t.Helper()
	var spec map[string]any
	if err := json.Unmarshal([]byte(ann), &spec); err != nil {
		t.Fatalf("spec annotation is not JSON: %v", err)
	}
	for _, f := range []string{"replicas", "forceRedeploy"} {
		if _, ok := spec[f]; ok {
			t.Errorf("spec annotation repeats %s: %s", f, ann)
		}
	}
	if ports, ok := spec["ports"].([]any); ok && len(ports) > 0 {
		if _, ok := ports[0].(map[string]any)["containerPort"]; ok {
			t.Errorf("spec annotation repeats ports[0].containerPort: %s", ann)
		}
	}
}

func TestNilInputIsAnError(t *testing.T) {
	if _, err := ToV1beta1(nil); err == nil {
		t.Error("ToV1beta1(nil): no error")
	}
	if _, err := ToV1alpha1(nil); err == nil {
		t.Error("ToV1alpha1(nil): no error")
	}
}
