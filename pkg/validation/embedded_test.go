package validation_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8svalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// embeddedCase breaks one rule of a Kubernetes type the spec embeds, which
// the apiserver would apply to the StatefulSet's pod template or to the
// NetworkPolicy; want are parts of the refusal (the field, the message).
type embeddedCase struct {
	name   string
	mutate func(*v1beta1.NginxOperator)
	want   []string
}

func antiAffinityTerm(o *v1beta1.NginxOperator) *corev1.PodAffinityTerm {
	o.Spec.Pod.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			TopologyKey:   "kubernetes.io/hostname",
		}},
	}}
	return &o.Spec.Pod.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0]
}

func nodeTerm(o *v1beta1.NginxOperator, req corev1.NodeSelectorRequirement) {
	o.Spec.Pod.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
			NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{req}}},
		},
	}}
}

func spread(o *v1beta1.NginxOperator) *corev1.TopologySpreadConstraint {
	o.Spec.Pod.TopologySpreadConstraints = []corev1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	return &o.Spec.Pod.TopologySpreadConstraints[0]
}

func peer(o *v1beta1.NginxOperator, p networkingv1.NetworkPolicyPeer) {
	o.Spec.NetworkPolicy = &v1beta1.NetworkPolicySpec{From: []networkingv1.NetworkPolicyPeer{p}}
}

func quantities(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func podSettingCases() []embeddedCase {
	tol := func(t corev1.Toleration) func(*v1beta1.NginxOperator) {
		return func(o *v1beta1.NginxOperator) { o.Spec.Pod.Tolerations = []corev1.Toleration{t} }
	}
	return []embeddedCase{
		{"toleration value not a label value", tol(corev1.Toleration{Key: "dedicated", Value: "-x"}), []string{"spec.pod.tolerations[0].value"}},
		{"toleration key with a space", tol(corev1.Toleration{Key: "a b", Operator: "Exists"}), []string{"spec.pod.tolerations[0].key"}},
		{"toleration key prefix too long", tol(corev1.Toleration{Key: strings.Repeat("a", 254) + "/x", Operator: "Exists"}),
			[]string{"spec.pod.tolerations[0].key", "before '/') must be at most 253"}},
		{"toleration operator", tol(corev1.Toleration{Key: "k", Operator: "Sometimes"}), []string{"spec.pod.tolerations[0].operator", "Unsupported value"}},
		{"toleration effect", tol(corev1.Toleration{Key: "k", Effect: "Sometimes"}), []string{"spec.pod.tolerations[0].effect"}},
		{"toleration without key nor Exists", tol(corev1.Toleration{Value: "x"}), []string{"spec.pod.tolerations[0]", "operator must be Exists when key is empty"}},
		{"toleration Exists with a value", tol(corev1.Toleration{Key: "k", Operator: "Exists", Value: "x"}), []string{"value must be empty when operator is Exists"}},
		{"tolerationSeconds without NoExecute", tol(corev1.Toleration{Key: "k", Operator: "Exists", TolerationSeconds: ptr.To[int64](5)}), []string{"tolerationSeconds needs effect NoExecute"}},
		{"65 tolerations", func(o *v1beta1.NginxOperator) {
			o.Spec.Pod.Tolerations = make([]corev1.Toleration, 65)
			for i := range o.Spec.Pod.Tolerations {
				o.Spec.Pod.Tolerations[i] = corev1.Toleration{Operator: "Exists"}
			}
		}, []string{"spec.pod.tolerations", "must have at most 64 items"}},
		{"affinity term without topologyKey", func(o *v1beta1.NginxOperator) { antiAffinityTerm(o).TopologyKey = "" },
			[]string{"podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"}},
		{"affinity topologyKey a/b/c", func(o *v1beta1.NginxOperator) { antiAffinityTerm(o).TopologyKey = "a/b/c" },
			[]string{"requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey"}},
		{"affinity selector value -x", func(o *v1beta1.NginxOperator) { antiAffinityTerm(o).LabelSelector.MatchLabels["app"] = "-x" },
			[]string{"labelSelector.matchLabels.app"}},
		{"affinity selector key with a space", func(o *v1beta1.NginxOperator) {
			antiAffinityTerm(o).LabelSelector.MatchLabels = map[string]string{"a b": "x"}
		}, []string{"labelSelector.matchLabels", "every key must be a label key"}},
		{"affinity expression In without values", func(o *v1beta1.NginxOperator) {
			antiAffinityTerm(o).LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: "In"}}
		}, []string{"labelSelector.matchExpressions[0]", "values must be set for operator In and NotIn"}},
		{"affinity expression operator", func(o *v1beta1.NginxOperator) {
			antiAffinityTerm(o).LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Maybe"}}
		}, []string{"labelSelector.matchExpressions[0].operator"}},
		{"affinity namespace not a DNS label", func(o *v1beta1.NginxOperator) { antiAffinityTerm(o).Namespaces = []string{"Team_A"} },
			[]string{"requiredDuringSchedulingIgnoredDuringExecution[0].namespaces[0]"}},
		{"matchLabelKeys repeating a selector key", func(o *v1beta1.NginxOperator) { antiAffinityTerm(o).MatchLabelKeys = []string{"app"} },
			[]string{"a key of matchLabelKeys may not also be a key of labelSelector"}},
		{"a key in matchLabelKeys and mismatchLabelKeys", func(o *v1beta1.NginxOperator) {
			t := antiAffinityTerm(o)
			t.MatchLabelKeys, t.MismatchLabelKeys = []string{"version"}, []string{"version"}
		}, []string{"a key may not be in both matchLabelKeys and mismatchLabelKeys"}},
		{"preferred weight 0", func(o *v1beta1.NginxOperator) {
			o.Spec.Pod.Affinity = &corev1.Affinity{PodAffinity: &corev1.PodAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
				Weight: 0, PodAffinityTerm: corev1.PodAffinityTerm{TopologyKey: "kubernetes.io/hostname"}}}}}
		}, []string{"preferredDuringSchedulingIgnoredDuringExecution[0].weight"}},
		{"node affinity without terms", func(o *v1beta1.NginxOperator) {
			o.Spec.Pod.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{}}}
		}, []string{"nodeSelectorTerms"}},
		{"node affinity value not a label value", func(o *v1beta1.NginxOperator) {
			nodeTerm(o, corev1.NodeSelectorRequirement{Key: "zone", Operator: "In", Values: []string{"a b"}})
		}, []string{"nodeSelectorTerms[0].matchExpressions[0].values[0]"}},
		{"node affinity Gt with two values", func(o *v1beta1.NginxOperator) {
			nodeTerm(o, corev1.NodeSelectorRequirement{Key: "cores", Operator: "Gt", Values: []string{"1", "2"}})
		}, []string{"nodeSelectorTerms[0].matchExpressions[0]", "hold one integer for Gt and Lt"}},
		{"node field selector on a label", func(o *v1beta1.NginxOperator) {
			o.Spec.Pod.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchFields: []corev1.NodeSelectorRequirement{{Key: "zone", Operator: "In", Values: []string{"a"}}}}}}}}
		}, []string{"matchFields[0].key"}},
		{"spread maxSkew 0", func(o *v1beta1.NginxOperator) { spread(o).MaxSkew = 0 }, []string{"spec.pod.topologySpreadConstraints[0].maxSkew"}},
		{"spread topologyKey a/b/c", func(o *v1beta1.NginxOperator) { spread(o).TopologyKey = "a/b/c" }, []string{"spec.pod.topologySpreadConstraints[0].topologyKey"}},
		{"spread whenUnsatisfiable", func(o *v1beta1.NginxOperator) { spread(o).WhenUnsatisfiable = "Maybe" }, []string{"spec.pod.topologySpreadConstraints[0].whenUnsatisfiable"}},
		{"spread minDomains with ScheduleAnyway", func(o *v1beta1.NginxOperator) { spread(o).MinDomains = ptr.To[int32](2) }, []string{"minDomains needs whenUnsatisfiable DoNotSchedule"}},
		{"spread matchLabelKeys without selector", func(o *v1beta1.NginxOperator) {
			c := spread(o)
			c.LabelSelector, c.MatchLabelKeys = nil, []string{"pod-template-hash"}
		}, []string{"matchLabelKeys needs a labelSelector"}},
		{"two spreads on one key", func(o *v1beta1.NginxOperator) {
			spread(o)
			o.Spec.Pod.TopologySpreadConstraints = append(o.Spec.Pod.TopologySpreadConstraints, o.Spec.Pod.TopologySpreadConstraints[0])
		}, []string{"spec.pod.topologySpreadConstraints", "same topologyKey and whenUnsatisfiable"}},
	}
}

func resourceAndPolicyCases() []embeddedCase {
	res := func(r corev1.ResourceRequirements) func(*v1beta1.NginxOperator) {
		return func(o *v1beta1.NginxOperator) { o.Spec.Resources = r }
	}
	return []embeddedCase{
		{"resource claim", res(corev1.ResourceRequirements{Claims: []corev1.ResourceClaim{{Name: "gpu"}}}), []string{"spec.resources", "leave claims empty"}},
		{"resource name with a space", res(corev1.ResourceRequirements{Requests: quantities("cpu ", "1")}), []string{"spec.resources.requests", "resource names must be"}},
		{"resource name a/b/c", res(corev1.ResourceRequirements{Limits: quantities("a/b/c", "1")}), []string{"spec.resources.limits", "resource names must be"}},
		{"unknown unprefixed resource", res(corev1.ResourceRequirements{Limits: quantities("gpu", "1")}), []string{"spec.resources.limits", "resource names must be"}},
		{"negative request", res(corev1.ResourceRequirements{Requests: quantities("cpu", "-1")}), []string{"spec.resources.requests", "must not be negative"}},
		{"request above limit", res(corev1.ResourceRequirements{Requests: quantities("cpu", "2"), Limits: quantities("cpu", "1")}), []string{"spec.resources", "may not exceed its limit"}},
		{"extended resource without limit", res(corev1.ResourceRequirements{Requests: quantities("example.com/gpu", "1")}), []string{"need a limit equal to their request"}},
		{"fractional extended resource", res(corev1.ResourceRequirements{Limits: quantities("example.com/gpu", "500m")}), []string{"counted in whole units"}},
		{"huge pages not a multiple of the page size", res(corev1.ResourceRequirements{Limits: quantities("memory", "1Gi", "hugepages-2Mi", "3Mi")}),
			[]string{"spec.resources.limits", "huge pages are counted in pages"}},
		{"huge pages of no size", res(corev1.ResourceRequirements{Limits: quantities("memory", "1Gi", "hugepages-abc", "4Mi")}),
			[]string{"spec.resources.limits", "huge pages are counted in pages"}},
		{"huge pages alone", res(corev1.ResourceRequirements{Limits: quantities("hugepages-2Mi", "2Mi")}), []string{"huge pages need a cpu or memory"}},
		{"priority class name not a name", func(o *v1beta1.NginxOperator) { o.Spec.Pod.PriorityClassName = "High" },
			[]string{"spec.pod.priorityClassName"}},
		{"volume size 0", func(o *v1beta1.NginxOperator) {
			o.Spec.Content.VolumeClaimTemplate = &v1beta1.VolumeClaimTemplate{Size: resource.MustParse("0")}
		}, []string{"spec.content.volumeClaimTemplate.size", "more than zero"}},
		{"volume storage class not a name", func(o *v1beta1.NginxOperator) {
			o.Spec.Content.VolumeClaimTemplate = &v1beta1.VolumeClaimTemplate{Size: resource.MustParse("1Gi"), StorageClassName: ptr.To("Standard")}
		}, []string{"spec.content.volumeClaimTemplate.storageClassName"}},
		{"ReadWriteOncePod with another mode", func(o *v1beta1.NginxOperator) {
			o.Spec.Content.VolumeClaimTemplate = &v1beta1.VolumeClaimTemplate{Size: resource.MustParse("1Gi"),
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod, corev1.ReadWriteOnce}}
		}, []string{"ReadWriteOncePod cannot be combined"}},
		{"CIDR /33", func(o *v1beta1.NginxOperator) {
			peer(o, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/33"}})
		},
			[]string{"spec.networkPolicy.from[0].ipBlock.cidr", "must be a CIDR"}},
		{"CIDR with host bits", func(o *v1beta1.NginxOperator) {
			peer(o, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.1/8"}})
		},
			[]string{"spec.networkPolicy.from[0].ipBlock.cidr"}},
		{"an address, not a CIDR", func(o *v1beta1.NginxOperator) {
			peer(o, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0"}})
		},
			[]string{"spec.networkPolicy.from[0].ipBlock.cidr"}},
		{"except outside cidr", func(o *v1beta1.NginxOperator) {
			peer(o, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"11.0.0.0/16"}}})
		}, []string{"spec.networkPolicy.from[0].ipBlock", "strictly inside cidr"}},
		{"except equal to cidr", func(o *v1beta1.NginxOperator) {
			peer(o, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.0.0.0/8"}}})
		}, []string{"strictly inside cidr"}},
		{"empty peer", func(o *v1beta1.NginxOperator) { peer(o, networkingv1.NetworkPolicyPeer{}) },
			[]string{"spec.networkPolicy.from[0]", "a peer needs a podSelector, a namespaceSelector or an ipBlock"}},
		{"ipBlock with a selector", func(o *v1beta1.NginxOperator) {
			peer(o, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8"}, PodSelector: &metav1.LabelSelector{}})
		}, []string{"an ipBlock cannot be combined"}},
		{"namespace selector key with a space", func(o *v1beta1.NginxOperator) {
			peer(o, networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team a": "x"}}})
		}, []string{"spec.networkPolicy.from[0].namespaceSelector.matchLabels", "every key must be a label key"}},
		{"metrics peer selector value a_", func(o *v1beta1.NginxOperator) {
			o.Spec.NetworkPolicy = &v1beta1.NetworkPolicySpec{MetricsFrom: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a_"}}}}}
		}, []string{"spec.networkPolicy.metricsFrom[0].podSelector.matchLabels.app"}},
	}
}

// What the apiserver refuses in the StatefulSet or the NetworkPolicy an
// instance makes, admission refuses in the instance, naming the field: the
// rules are in the shipped CRD (NginxOperatorSchema checks nothing else).
func TestAdmissionRefusesWhatTheChildrensAPIWould(t *testing.T) {
	for _, tc := range append(podSettingCases(), resourceAndPolicyCases()...) {
		t.Run(tc.name, func(t *testing.T) {
			obj := valid()
			tc.mutate(obj)
			errs := validation.NginxOperatorSchema(context.Background(), obj)
			if len(errs) == 0 {
				t.Fatal("admitted")
			}
			got := errs.ToAggregate().Error()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("the refusal lacks %q:\n%s", w, got)
				}
			}
		})
	}
}

// The rules refuse no setting the children's API accepts: every field of
// the embedded types set to a valid value, integers and strings for
// quantities, is admitted.
func TestAdmissionAcceptsValidEmbeddedSettings(t *testing.T) {
	obj := valid()
	term := antiAffinityTerm(obj)
	term.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "example.com/tier", Operator: "NotIn", Values: []string{"batch", ""}}}
	term.MatchLabelKeys, term.MismatchLabelKeys, term.Namespaces = []string{"pod-template-hash"}, []string{"tenant"}, []string{"team-a"}
	obj.Spec.Pod.Affinity.NodeAffinity = &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "cores", Operator: "Gt", Values: []string{"3"}}, {Key: "gpu", Operator: "DoesNotExist"}},
			MatchFields:      []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: "NotIn", Values: []string{"node-1.example.com"}}},
		}}},
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 100, Preference: corev1.NodeSelectorTerm{}}},
	}
	c := spread(obj)
	c.WhenUnsatisfiable, c.MinDomains, c.MatchLabelKeys = corev1.DoNotSchedule, ptr.To[int32](2), []string{"pod-template-hash"}
	obj.Spec.Pod.TopologySpreadConstraints = append(obj.Spec.Pod.TopologySpreadConstraints, corev1.TopologySpreadConstraint{
		MaxSkew: 2, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: corev1.ScheduleAnyway})
	obj.Spec.Pod.Tolerations = []corev1.Toleration{
		{Operator: "Exists"},
		{Key: "node.kubernetes.io/unreachable", Operator: "Exists", Effect: "NoExecute", TolerationSeconds: ptr.To[int64](30)},
		{Key: "dedicated", Value: "web", Effect: "NoSchedule"},
	}
	obj.Spec.Resources = corev1.ResourceRequirements{
		Requests: quantities("cpu", "100m", "memory", "64Mi", "example.com/gpu", "1", "hugepages-2Mi", "4Mi"),
		Limits:   quantities("cpu", "2", "memory", "256Mi", "example.com/gpu", "1", "hugepages-2Mi", "4Mi", "ephemeral-storage", "1Gi"),
	}
	obj.Spec.Content.VolumeClaimTemplate = &v1beta1.VolumeClaimTemplate{Size: resource.MustParse("1Gi"), StorageClassName: ptr.To("fast.example.com"),
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOncePod}}
	obj.Spec.NetworkPolicy = &v1beta1.NetworkPolicySpec{
		From: []networkingv1.NetworkPolicyPeer{
			{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.1.0.0/16"}}},
			{IPBlock: &networkingv1.IPBlock{CIDR: "fd00::/8"}},
			{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": "edge"}}, PodSelector: &metav1.LabelSelector{}},
		},
	}
	if errs := validation.NginxOperatorSchema(context.Background(), obj); len(errs) != 0 {
		t.Fatalf("refused: %v", errs.ToAggregate())
	}
	// Quantities written as JSON integers, as `cpu: 2` in YAML is.
	m := map[string]any{"apiVersion": v1beta1.GroupVersion.String(), "kind": "NginxOperator",
		"metadata": map[string]any{"name": "web", "namespace": "team-a"},
		"spec": map[string]any{"resources": map[string]any{
			"requests": map[string]any{"cpu": int64(1), "example.com/gpu": int64(2), "memory": "64Mi"},
			"limits":   map[string]any{"cpu": int64(2), "example.com/gpu": int64(2), "memory": int64(1 << 30)},
		}, "content": map[string]any{"volumeClaimTemplate": map[string]any{"size": int64(1 << 30)}}}}
	s, err := validation.V1beta1("NginxOperator")
	if err != nil {
		t.Fatal(err)
	}
	if errs := s.Validate(context.Background(), m); len(errs) != 0 {
		t.Fatalf("integer quantities refused: %v", errs.ToAggregate())
	}
}

// The string rules agree with Kubernetes' own validation of label keys,
// label values and CIDRs (k8s.io/apimachinery, strict IP validation as
// Kubernetes 1.36 applies it) on every value below: admission refuses a
// value exactly when the apiserver would refuse it in the child.
func TestAdmissionAgreesWithKubernetesOnNamesAndCIDRs(t *testing.T) {
	strs := []string{"", "a", "a b", " a", "-x", "x-", "a_b", "a.b", "A", "Z9", "a/b", "a/b/c", "/a", "a/", "example.com/x",
		"Example.com/x", "example.com/-x", "a..b/x", "kubernetes.io/hostname", "ünï", "a\nb", "$x", strings.Repeat("a", 63),
		strings.Repeat("a", 64), strings.Repeat("a", 253) + "/x", strings.Repeat("a", 254) + "/x", strings.Repeat("a.", 126) + "a/b"}
	cidrs := []string{"10.0.0.0/8", "10.0.0.1/8", "10.0.0.0/33", "10.0.0.0", "010.0.0.0/8", "10.0.0.0/08", "::ffff:10.0.0.0/104",
		"fe80::%eth0/64", "FD00::/8", "fd00:0::/8", "fd00::1/8", "10.0.0.0/8 ", "0.0.0.0/0", "::/0", "10.0.0.0/32", "", "x"}
	type check struct {
		name   string
		values []string
		set    func(o *v1beta1.NginxOperator, v string)
		k8s    func(v string) bool // refused by Kubernetes
	}
	for _, c := range []check{
		{"toleration key", strs, func(o *v1beta1.NginxOperator, v string) {
			o.Spec.Pod.Tolerations = []corev1.Toleration{{Key: v, Operator: "Exists"}}
		}, func(v string) bool { return v != "" && len(k8svalidation.IsQualifiedName(v)) > 0 }},
		{"toleration value", strs, func(o *v1beta1.NginxOperator, v string) {
			o.Spec.Pod.Tolerations = []corev1.Toleration{{Key: "k", Value: v}}
		}, func(v string) bool { return len(k8svalidation.IsValidLabelValue(v)) > 0 }},
		{"selector key", strs, func(o *v1beta1.NginxOperator, v string) {
			antiAffinityTerm(o).LabelSelector.MatchLabels = map[string]string{v: "x"}
		}, func(v string) bool { return len(k8svalidation.IsQualifiedName(v)) > 0 }},
		{"selector value", strs, func(o *v1beta1.NginxOperator, v string) {
			antiAffinityTerm(o).LabelSelector.MatchLabels = map[string]string{"app": v}
		}, func(v string) bool { return len(k8svalidation.IsValidLabelValue(v)) > 0 }},
		{"topologyKey", strs, func(o *v1beta1.NginxOperator, v string) { antiAffinityTerm(o).TopologyKey = v },
			func(v string) bool { return len(k8svalidation.IsQualifiedName(v)) > 0 }},
		{"ipBlock cidr", cidrs, func(o *v1beta1.NginxOperator, v string) {
			peer(o, networkingv1.NetworkPolicyPeer{IPBlock: &networkingv1.IPBlock{CIDR: v}})
		}, func(v string) bool {
			return v == "" || len(k8svalidation.IsValidCIDRForLegacyField(field.NewPath("cidr"), v, true, nil)) > 0
		}},
	} {
		for _, v := range c.values {
			o := valid()
			c.set(o, v)
			refused := len(validation.NginxOperatorSchema(context.Background(), o)) > 0
			if want := c.k8s(v); refused != want {
				t.Errorf("%s %q: admission refuses it: %v, Kubernetes refuses it: %v", c.name, v, refused, want)
			}
		}
	}
}
