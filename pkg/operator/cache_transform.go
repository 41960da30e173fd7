package operator

import (
	"reflect"
	"strings"
	"unique"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// lastAppliedAnnotation is kubectl's client-side apply record: often the size
// of the object again, and never read by the operator.
const lastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// TrimForCache is the informer cache's transform: it drops from every cached
// object what the operator never reads, before the object is stored, so the
// cache's memory grows with what the controllers use rather than with what
// other clients wrote.
//
//   - metadata.managedFields: only the operator's own server-side apply
//     record (manager naming.ManagedBy, operation Apply) is kept; the
//     Applier needs it to tell whether anyone changed the operator's fields
//     (see k8sutil.Applier). The records of the controller-manager's status
//     updates, kubectl and others are dropped. For built-in kinds the
//     record's field set is kept as a digest (k8sutil.CompactApplyRecord):
//     at 1,000 instances the full sets were about a sixth of the heap.
//   - kubectl's last-applied-configuration annotation.
//   - copies of the same strings: every object's namespace, label keys and
//     values, annotation keys, owner's kind and version and record's
//     manager are decoded afresh; one copy of each is kept (shareStrings).
//   - a StatefulSet's spec but its replicas, claim templates, pod template
//     annotations and its init containers' names and arguments, which is
//     what the controller reads (with the status): the replicas, whether a
//     claim template changed, the template's version, whether a restore is
//     under way; drift is found from managedFields, not values (see
//     TrimStatefulSet).
//   - a Service's spec but its IP families and cluster addresses, and its
//     status but its load balancer's addresses: the controller reads the
//     families (nginx listens on IPv6 where the Service has it), a
//     Gateway's status its addresses; drift is found from managedFields,
//     not values. Its annotations stay, as every object's:
//     layout.ServicePortsAnnotation says which ports it keeps.
//   - a Secret's data but the push key and the revision: the operator's
//     cached Secrets are the nginx.conf it generated, which it writes and
//     deletes but never reads back, the key it signs what it pushes to the
//     pods with (layout.PushKeyFile), which it reads to sign, and the
//     configuration's revision (reloader.RevisionFile), which it raises. Secrets a user
//     references are read with the API reader, untouched by this.
//   - a Pod's spec and all of its status but the phase, the pod IP and the
//     containers' names, readiness, restart counts and states: the
//     NginxOperator controller reads those, with the pod's labels,
//     annotations and owner, to report a configuration nginx refuses and to
//     read each pod's reloader at its IP (see TrimPod).
//
// A controller that starts reading one of the dropped fields from the cache
// must change this function.
func TrimForCache(obj any) (any, error) {
	m, ok := obj.(metav1.Object)
	if !ok {
		return obj, nil
	}
	trimManagedFields(m)
	if builtIn(obj) {
		k8sutil.CompactApplyRecord(m.GetManagedFields())
	}
	shareStrings(m)
	if a := m.GetAnnotations(); a != nil {
		if _, ok := a[lastAppliedAnnotation]; ok {
			delete(a, lastAppliedAnnotation)
			m.SetAnnotations(a)
		}
	}
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		TrimStatefulSet(o)
	case *corev1.Service:
		o.Spec = corev1.ServiceSpec{IPFamilies: o.Spec.IPFamilies, ClusterIPs: o.Spec.ClusterIPs}
		o.Status = corev1.ServiceStatus{LoadBalancer: o.Status.LoadBalancer}
	case *corev1.Secret:
		o.Data, o.StringData = keptSecretData(o.Data), nil
	case *corev1.Pod:
		TrimPod(o)
	}
	return obj, nil
}

// TrimStatefulSet keeps of a cached StatefulSet's spec what the
// NginxOperator controller reads: the replicas, the claim templates (which
// a StatefulSet cannot change, so a new one means recreating it), the pod
// template's annotations (its version) and the names and arguments of its
// init containers (carriesRestore). The rest of the template was a third of
// the cached StatefulSet: the init containers' resources, security
// contexts and mounts, the template's labels, the selector, the security
// context of the pod; 2 MiB at 1,000 instances.
func TrimStatefulSet(sts *appsv1.StatefulSet) {
	var inits []corev1.Container
	for _, c := range sts.Spec.Template.Spec.InitContainers {
		inits = append(inits, corev1.Container{Name: c.Name, Args: c.Args})
	}
	sts.Spec = appsv1.StatefulSetSpec{
		Replicas:             sts.Spec.Replicas,
		VolumeClaimTemplates: sts.Spec.VolumeClaimTemplates,
		Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: sts.Spec.Template.Annotations},
			Spec:       corev1.PodSpec{InitContainers: inits},
		},
	}
}

// TrimPod drops from a cached pod what the operator never reads: the spec,
// the init containers' statuses (restores read pods with the API reader),
// the conditions, the addresses but the first and the containers' images, IDs,
// resources and mounts. Metadata stays: the controller maps a pod to its
// instance by its labels and owner and reads its configuration hash from its
// annotations; the pod IP stays, where the controller reads the reloader.
func TrimPod(pod *corev1.Pod) {
	pod.Spec = corev1.PodSpec{}
	var statuses []corev1.ContainerStatus
	for _, st := range pod.Status.ContainerStatuses {
		statuses = append(statuses, corev1.ContainerStatus{
			Name: st.Name, Ready: st.Ready, RestartCount: st.RestartCount, Started: st.Started,
			State: st.State, LastTerminationState: st.LastTerminationState,
		})
	}
	pod.Status = corev1.PodStatus{Phase: pod.Status.Phase, PodIP: pod.Status.PodIP, ContainerStatuses: statuses}
}

// shareStrings makes m's strings that recur across cached objects point
// to one copy each (unique.Make): the namespace, the labels (an instance's
// children share its name, all share the operator's keys and values), the
// annotations' keys, the owner references' kind and version and the apply
// record's manager, version and type. Each cached object decodes its own
// copies; at 1,000 instances they were about 2 MiB of the heap. Annotation
// values (hashes, mostly one per object) are left alone: sharing a string
// costs an entry in unique's table.
func shareStrings(m metav1.Object) {
	m.SetNamespace(share(m.GetNamespace()))
	for k, v := range m.GetLabels() {
		m.GetLabels()[share(k)] = share(v) // an existing key: replaced in place
	}
	for k, v := range m.GetAnnotations() {
		m.GetAnnotations()[share(k)] = v
	}
	owners := m.GetOwnerReferences()
	for i := range owners {
		owners[i].APIVersion, owners[i].Kind = share(owners[i].APIVersion), share(owners[i].Kind)
	}
	records := m.GetManagedFields()
	for i := range records {
		r := &records[i]
		r.Manager, r.APIVersion, r.FieldsType = share(r.Manager), share(r.APIVersion), share(r.FieldsType)
		r.Operation = metav1.ManagedFieldsOperationType(share(string(r.Operation)))
	}
}

// share is the one copy of s that every cached object shares.
func share(s string) string {
	if s == "" {
		return s
	}
	return unique.Make(s).Value()
}

func trimManagedFields(m metav1.Object) {
	fields := m.GetManagedFields()
	if len(fields) == 0 {
		return
	}
	var keep []metav1.ManagedFieldsEntry
	for _, f := range fields {
		if f.Manager == naming.ManagedBy && f.Operation == metav1.ManagedFieldsOperationApply {
			keep = append(keep, f)
		}
	}
	if len(keep) == len(fields) {
		return
	}
	m.SetManagedFields(keep)
}

// builtIn tells whether obj is of a kind from k8s.io/api, whose schema the
// Applier's type converter knows.
func builtIn(obj any) bool {
	t := reflect.TypeOf(obj)
	return t.Kind() == reflect.Pointer && strings.HasPrefix(t.Elem().PkgPath(), "k8s.io/api/")
}

// keptSecretData is data with the push key and the configuration's revision
// only, nil without either.
func keptSecretData(data map[string][]byte) map[string][]byte {
	var kept map[string][]byte
	for _, name := range []string{layout.PushKeyFile, reloader.RevisionFile} {
		if v, ok := data[name]; ok {
			if kept == nil {
				kept = map[string][]byte{}
			}
			kept[name] = v
		}
	}
	return kept
}
