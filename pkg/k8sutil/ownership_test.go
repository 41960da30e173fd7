package k8sutil

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/applyconfigurations"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// The records below are written the way kube-apiserver 1.36 records a
// server-side apply of the matching object in metadata.managedFields.

const labelsRecord = `"f:labels":{"f:app.kubernetes.io/component":{},"f:app.kubernetes.io/instance":{},"f:app.kubernetes.io/managed-by":{},"f:app.kubernetes.io/name":{}}`

const metaRecord = `"f:metadata":{"f:annotations":{"f:nginx.operator.dev/applied-hash":{}},` + labelsRecord + `}`

func unitServiceAccount() *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		ObjectMeta:                   metav1.ObjectMeta{Name: "web", Namespace: "ns", Labels: naming.Labels("nginx", "web", "server")},
		AutomountServiceAccountToken: ptr.To(false),
	}
}

const serviceAccountRecord = `{"f:automountServiceAccountToken":{},` + metaRecord + `}`

func unitStatefulSet() *appsv1.StatefulSet {
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Labels: naming.Labels("nginx", "web", "server")},
		Spec: appsv1.StatefulSetSpec{
			Replicas: ptr.To[int32](0),
			Selector: &metav1.LabelSelector{MatchLabels: naming.SelectorLabels("nginx", "web", "server")},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: naming.Labels("nginx", "web", "server")},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: ptr.To(false),
					Containers: []corev1.Container{{
						Name:  "nginx",
						Image: "nginx:1.27",
						// No protocol: the merge key's default (TCP) is in the record.
						Ports: []corev1.ContainerPort{{ContainerPort: 8080}},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false),
							RunAsNonRoot:             ptr.To(true),
						},
					}},
				},
			},
		},
	}
}

const statefulSetRecord = `{` + metaRecord + `,"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{` + labelsRecord + `},` +
	`"f:spec":{"f:automountServiceAccountToken":{},"f:containers":{"k:{\"name\":\"nginx\"}":{".":{},"f:image":{},"f:name":{},` +
	`"f:ports":{"k:{\"containerPort\":8080,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{}}},"f:resources":{},` +
	`"f:securityContext":{"f:allowPrivilegeEscalation":{},"f:runAsNonRoot":{}}}}}},"f:serviceName":{},"f:updateStrategy":{}}}`

func unitService() *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", Labels: naming.Labels("nginx", "web", "server")},
		Spec: corev1.ServiceSpec{
			Selector:                 naming.SelectorLabels("nginx", "web", "server"),
			Ports:                    []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http")}},
			PublishNotReadyAddresses: false,
		},
	}
}

const serviceRecord = `{` + metaRecord + `,"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:name":{},"f:port":{},"f:targetPort":{}}},"f:selector":{}}}`

func applyRecord(apiVersion, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{
		Manager: naming.ManagedBy, Operation: metav1.ManagedFieldsOperationApply, APIVersion: apiVersion,
		FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(fields)},
	}
}

// without removes paths from a recorded field set, as the API server does
// when someone else changes or removes those fields.
func without(t *testing.T, fields string, paths ...fieldpath.Path) string {
	t.Helper()
	set := &fieldpath.Set{}
	if err := set.FromJSON(strings.NewReader(fields)); err != nil {
		t.Fatalf("record %s: %v", fields, err)
	}
	out, err := set.RecursiveDifference(fieldpath.NewSet(paths...)).ToJSON()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func testScheme(t *testing.T) *runtime.Scheme {
	t.Helper()
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAppliedFieldSetReadsOnlyTheOperatorsApplyRecordOfTheMainResource(t *testing.T) {
	ours := applyRecord("v1", serviceAccountRecord)
	for _, tc := range []struct {
		name    string
		entries []metav1.ManagedFieldsEntry
		found   bool
	}{
		{"no managedFields (stripped by the reader)", nil, false},
		{"the operator's apply record", []metav1.ManagedFieldsEntry{ours}, true},
		{"another manager's apply record", []metav1.ManagedFieldsEntry{func() metav1.ManagedFieldsEntry { e := ours; e.Manager = "kubectl"; return e }()}, false},
		{"the operator's update record", []metav1.ManagedFieldsEntry{func() metav1.ManagedFieldsEntry {
			e := ours
			e.Operation = metav1.ManagedFieldsOperationUpdate
			return e
		}()}, false},
		{"a status subresource record", []metav1.ManagedFieldsEntry{func() metav1.ManagedFieldsEntry { e := ours; e.Subresource = "status"; return e }()}, false},
		{"a record for another API version", []metav1.ManagedFieldsEntry{func() metav1.ManagedFieldsEntry { e := ours; e.APIVersion = "v2"; return e }()}, false},
		{"among other records", []metav1.ManagedFieldsEntry{
			{Manager: "kube-controller-manager", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:secrets":{}}`)}},
			ours,
		}, true},
	} {
		record, found := findApplyRecord(tc.entries, naming.ManagedBy, "v1")
		if found != tc.found {
			t.Errorf("%s: found = %v; want %v", tc.name, found, tc.found)
		}
		if !found {
			continue
		}
		if set, err := appliedFieldSet(record); err != nil || !set.Has(fieldpath.MakePathOrDie("automountServiceAccountToken")) {
			t.Errorf("%s: decoded set %s (%v) lacks automountServiceAccountToken", tc.name, set, err)
		}
	}
	if _, err := appliedFieldSet(applyRecord("v1", `{"f:x":`)); err == nil {
		t.Error("a corrupt record decoded without error")
	}
}

func TestOwnershipDriftOfBuiltInKinds(t *testing.T) {
	containerPath := func(rest ...any) fieldpath.Path {
		parts := append([]any{"spec", "template", "spec", "containers", fieldpath.KeyByFields("name", "nginx")}, rest...)
		return fieldpath.MakePathOrDie(parts...)
	}
	for _, tc := range []struct {
		name    string
		desired client.Object
		records []metav1.ManagedFieldsEntry
		want    []string
		// recordHoldsMore: the record has fields the body lacks, which only
		// the full record accepts.
		recordHoldsMore bool
	}{
		{
			name:    "ServiceAccount as applied",
			desired: unitServiceAccount(),
			records: []metav1.ManagedFieldsEntry{applyRecord("v1", serviceAccountRecord)},
		},
		{
			name:    "ServiceAccount automountServiceAccountToken false taken by kubectl edit",
			desired: unitServiceAccount(),
			records: []metav1.ManagedFieldsEntry{
				applyRecord("v1", without(t, serviceAccountRecord, fieldpath.MakePathOrDie("automountServiceAccountToken"))),
				{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1", FieldsType: "FieldsV1", FieldsV1: &metav1.FieldsV1{Raw: []byte(`{"f:automountServiceAccountToken":{}}`)}},
			},
			want: []string{".automountServiceAccountToken"},
		},
		{
			name:    "a label removed by someone else",
			desired: unitServiceAccount(),
			records: []metav1.ManagedFieldsEntry{applyRecord("v1", without(t, serviceAccountRecord, fieldpath.MakePathOrDie("metadata", "labels", naming.LabelComponent)))},
			want:    []string{".metadata.labels.app.kubernetes.io/component"},
		},
		{
			name:    "fields owned but no longer desired are the applied hash's business",
			desired: unitServiceAccount(),
			records: []metav1.ManagedFieldsEntry{applyRecord("v1", strings.Replace(serviceAccountRecord, `{"f:automountServiceAccountToken":{},`, `{"f:automountServiceAccountToken":{},"f:imagePullSecrets":{},`, 1))},
			// A digest can only tell equal from different: one needless apply.
			recordHoldsMore: true,
		},
		{
			name:    "no managedFields at all",
			desired: unitServiceAccount(),
			want:    []string{"no server-side apply record of nginx-operator for v1 in metadata.managedFields"},
		},
		{
			name:    "StatefulSet as applied, zero replicas and a defaulted merge key included",
			desired: unitStatefulSet(),
			records: []metav1.ManagedFieldsEntry{applyRecord("apps/v1", statefulSetRecord)},
		},
		{
			name:    "StatefulSet container allowPrivilegeEscalation false changed",
			desired: unitStatefulSet(),
			records: []metav1.ManagedFieldsEntry{applyRecord("apps/v1", without(t, statefulSetRecord, containerPath("securityContext", "allowPrivilegeEscalation")))},
			want:    []string{`.spec.template.spec.containers[name="nginx"].securityContext.allowPrivilegeEscalation`},
		},
		{
			name:    "StatefulSet replicas 0 scaled through the scale subresource",
			desired: unitStatefulSet(),
			records: []metav1.ManagedFieldsEntry{applyRecord("apps/v1", without(t, statefulSetRecord, fieldpath.MakePathOrDie("spec", "replicas")))},
			want:    []string{".spec.replicas"},
		},
		{
			name:    "StatefulSet container removed",
			desired: unitStatefulSet(),
			records: []metav1.ManagedFieldsEntry{applyRecord("apps/v1", without(t, statefulSetRecord, containerPath()))},
			want: []string{
				`.spec.template.spec.containers[name="nginx"].image`,
				`.spec.template.spec.containers[name="nginx"].name`,
				`.spec.template.spec.containers[name="nginx"].ports[containerPort=8080,protocol="TCP"].containerPort`,
				`.spec.template.spec.containers[name="nginx"].resources`,
				`.spec.template.spec.containers[name="nginx"].securityContext.allowPrivilegeEscalation`,
				`.spec.template.spec.containers[name="nginx"].securityContext.runAsNonRoot`,
			},
		},
		{
			name:    "StatefulSet record for another API version",
			desired: unitStatefulSet(),
			records: []metav1.ManagedFieldsEntry{applyRecord("apps/v1beta2", statefulSetRecord)},
			want:    []string{"no server-side apply record of nginx-operator for apps/v1 in metadata.managedFields"},
		},
		{
			name:    "Service as applied, publishNotReadyAddresses false never sent",
			desired: unitService(),
			records: []metav1.ManagedFieldsEntry{applyRecord("v1", serviceRecord)},
		},
		{
			name:    "Service selector (atomic) taken",
			desired: unitService(),
			records: []metav1.ManagedFieldsEntry{applyRecord("v1", without(t, serviceRecord, fieldpath.MakePathOrDie("spec", "selector")))},
			want:    []string{".spec.selector"},
		},
		{
			name:    "Service port targetPort taken",
			desired: unitService(),
			records: []metav1.ManagedFieldsEntry{applyRecord("v1", without(t, serviceRecord,
				fieldpath.MakePathOrDie("spec", "ports", fieldpath.KeyByFields("port", 80, "protocol", "TCP"), "targetPort")))},
			want: []string{`.spec.ports[port=80,protocol="TCP"].targetPort`},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			scheme := testScheme(t)
			body, _, err := applyConfiguration(tc.desired, scheme)
			if err != nil {
				t.Fatal(err)
			}
			live := tc.desired.DeepCopyObject().(client.Object)
			live.SetManagedFields(tc.records)
			got := ownershipDrift(applyconfigurations.NewTypeConverter(scheme), body, live, naming.ManagedBy)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("drift (-want +got):\n%s", diff)
			}

			// The cache keeps a digest of the record instead: it can no
			// longer name the fields, but must find the same drift.
			compacted := slices.Clone(tc.records)
			CompactApplyRecord(compacted)
			live.SetManagedFields(compacted)
			got = ownershipDrift(applyconfigurations.NewTypeConverter(scheme), body, live, naming.ManagedBy)
			if wantDrift := len(tc.want) > 0 || tc.recordHoldsMore; (len(got) > 0) != wantDrift {
				t.Errorf("drift from the compacted record = %q, want drift: %v", got, wantDrift)
			}
		})
	}
}

// serviceMonitorBody is an apply body of a kind the client has no schema for.
func serviceMonitorBody() map[string]any {
	return map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "ServiceMonitor",
		"metadata": map[string]any{
			"name": "team-a", "namespace": "ns",
			"labels":      map[string]any{"app.kubernetes.io/name": "nginx", "app.kubernetes.io/component": "monitor"},
			"annotations": map[string]any{AppliedHashAnnotation: "h"},
			"ownerReferences": []any{map[string]any{
				"apiVersion": "nginx.operator.dev/v1beta1", "kind": "NginxMonitor", "name": "team-a", "uid": "1234", "controller": true,
			}},
		},
		"spec": map[string]any{
			"selector":          map[string]any{"matchLabels": map[string]any{"team": "a"}},
			"endpoints":         []any{map[string]any{"port": "metrics", "honorLabels": true}},
			"namespaceSelector": map[string]any{},
		},
	}
}

// serviceMonitorRecord is how the API server records that body for a CRD
// that preserves unknown fields: maps granular (each key recorded), lists
// atomic, owner references keyed by uid and atomic.
const serviceMonitorRecord = `{"f:metadata":{"f:annotations":{"f:nginx.operator.dev/applied-hash":{}},"f:labels":{"f:app.kubernetes.io/component":{},"f:app.kubernetes.io/name":{}},` +
	`"f:ownerReferences":{"k:{\"uid\":\"1234\"}":{}}},` +
	`"f:spec":{".":{},"f:endpoints":{},"f:namespaceSelector":{},"f:selector":{".":{},"f:matchLabels":{".":{},"f:team":{}}}}}`

func TestUnownedBySchemalessTakesListAddressingFromTheRecord(t *testing.T) {
	liveWith := func(edit func(m map[string]any)) map[string]any {
		m := serviceMonitorBody()
		if edit != nil {
			edit(m)
		}
		return m
	}
	spec := func(m map[string]any) map[string]any { return m["spec"].(map[string]any) }
	for _, tc := range []struct {
		name   string
		body   map[string]any
		record string
		live   map[string]any
		want   []string
	}{
		{name: "as applied", record: serviceMonitorRecord, live: liveWith(nil)},
		{
			name:   "as applied, with fields others set and defaults in an atomic list",
			record: serviceMonitorRecord,
			live: liveWith(func(m map[string]any) {
				spec(m)["endpoints"].([]any)[0].(map[string]any)["scheme"] = "http"
				spec(m)["sampleLimit"] = int64(100)
			}),
		},
		{
			name:   "an endpoint field changed: the atomic list was taken",
			record: without(t, serviceMonitorRecord, fieldpath.MakePathOrDie("spec", "endpoints")),
			live:   liveWith(func(m map[string]any) { spec(m)["endpoints"].([]any)[0].(map[string]any)["honorLabels"] = false }),
			want:   []string{".spec.endpoints"},
		},
		{
			name:   "every entry of a granular map removed, the empty map still recorded",
			record: without(t, serviceMonitorRecord, fieldpath.MakePathOrDie("spec", "selector", "matchLabels", "team")),
			live:   liveWith(func(m map[string]any) { spec(m)["selector"] = map[string]any{"matchLabels": map[string]any{}} }),
			want:   []string{".spec.selector.matchLabels"},
		},
		{
			name:   "owner reference removed",
			record: without(t, serviceMonitorRecord, fieldpath.MakePathOrDie("metadata", "ownerReferences", fieldpath.KeyByFields("uid", "1234"))),
			live:   liveWith(func(m map[string]any) { delete(m["metadata"].(map[string]any), "ownerReferences") }),
			// The record drops the emptied list node too.
			want: []string{".metadata.ownerReferences"},
		},
		{
			name:   "a label taken",
			record: without(t, serviceMonitorRecord, fieldpath.MakePathOrDie("metadata", "labels", "app.kubernetes.io/name")),
			live: liveWith(func(m map[string]any) {
				m["metadata"].(map[string]any)["labels"].(map[string]any)["app.kubernetes.io/name"] = "other"
			}),
			want: []string{".metadata.labels.app.kubernetes.io/name"},
		},
		{
			name:   "an empty map recorded",
			record: `{"f:spec":{"f:namespaceSelector":{}}}`,
			body:   map[string]any{"spec": map[string]any{"namespaceSelector": map[string]any{}}},
		},
		{
			name:   "a set list addressed by value, one value taken",
			record: `{"f:spec":{"f:names":{"v:\"a\"":{}}}}`,
			body:   map[string]any{"spec": map[string]any{"names": []any{"a", "b"}}},
			live:   map[string]any{"spec": map[string]any{"names": []any{"a", "b"}}},
			want:   []string{".spec.names[1]"},
		},
		{
			name:   "a map list with a numeric key",
			record: `{"f:spec":{"f:ports":{"k:{\"port\":80}":{".":{},"f:port":{},"f:name":{}}}}}`,
			body:   map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80), "name": "http"}}}},
			live:   map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80), "name": "http"}}}},
		},
		{
			name:   "a map list element lacking a defaulted key field errs towards applying",
			record: `{"f:spec":{"f:ports":{"k:{\"port\":80,\"protocol\":\"TCP\"}":{".":{},"f:port":{}}}}}`,
			body:   map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}},
			want:   []string{".spec.ports[0]"},
		},
		{
			name:   "a scalar where the record has nested fields",
			record: `{"f:spec":{"f:x":{"f:y":{}}}}`,
			body:   map[string]any{"spec": map[string]any{"x": "flat"}},
			want:   []string{".spec.x"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			if body == nil {
				body = serviceMonitorBody()
			}
			owned := &fieldpath.Set{}
			if err := owned.FromJSON(bytes.NewReader([]byte(tc.record))); err != nil {
				t.Fatal(err)
			}
			got := unownedBySchemaless(body, tc.live, owned)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unowned fields (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOwnershipDriftFallsBackForKindsWithoutSchema: the client's type
// converter knows no custom resource, so ownershipDrift must take the
// schemaless path for them rather than report everything as drift.
func TestOwnershipDriftFallsBackForKindsWithoutSchema(t *testing.T) {
	scheme := testScheme(t)
	body := &unstructured.Unstructured{Object: serviceMonitorBody()}
	tc := applyconfigurations.NewTypeConverter(scheme)
	if _, err := tc.ObjectToTyped(body); err == nil {
		t.Fatal("the type converter has a schema for ServiceMonitor; the fallback is not exercised")
	}
	live := &unstructured.Unstructured{Object: serviceMonitorBody()}
	live.SetManagedFields([]metav1.ManagedFieldsEntry{applyRecord("monitoring.coreos.com/v1", serviceMonitorRecord)})
	if got := ownershipDrift(tc, body, live, naming.ManagedBy); len(got) != 0 {
		t.Errorf("drift of an unchanged ServiceMonitor: %v", got)
	}
	live.SetManagedFields([]metav1.ManagedFieldsEntry{applyRecord("monitoring.coreos.com/v1",
		without(t, serviceMonitorRecord, fieldpath.MakePathOrDie("spec", "endpoints")))})
	if diff := cmp.Diff([]string{".spec.endpoints"}, ownershipDrift(tc, body, live, naming.ManagedBy)); diff != "" {
		t.Errorf("drift (-want +got):\n%s", diff)
	}
}
