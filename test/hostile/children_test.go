package hostile

// The fields whose values reach a child's API rather than nginx.conf: the
// Kubernetes types the spec embeds (tolerations, affinity, topology spread
// constraints, resources, NetworkPolicy peers) and the volume claim
// template. Each value the child's API server would refuse must be refused
// at admission (the CRD holds those rules, hack/crdembedded); the test
// dry-runs every child of an admitted spec, and a refusal there fails the
// case (send.problems), unless the field is on the short list only the
// child's API can judge.

import (
	"github.com/nginx-operator/nginx-operator/test/hostile/hostiletest"

	"fmt"
	"strings"
)

// nodeRequirement is a required node affinity term with one expression.
func nodeRequirement(key, operator string, values ...any) map[string]any {
	expr := map[string]any{"key": key, "operator": operator}
	if values != nil {
		expr["values"] = values
	}
	return map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
		"nodeSelectorTerms": []any{map[string]any{"matchExpressions": []any{expr}}}}}
}

func setNodeAffinity(spec map[string]any, na map[string]any) {
	getAt(spec, "pod", "affinity").(map[string]any)["nodeAffinity"] = na
}

func childFields() []corpusField {
	short := shortStrings()
	shortStr := func(extra ...string) []any { return anyOf(short, extra) }
	nums := func(extra ...int64) []any { return anyOf(numbers, extra) }
	longPrefix := strings.Repeat("a", 254) + "/x"
	spread := func(field string) func(spec map[string]any, v any) {
		return hostiletest.SetAt("pod", "topologySpreadConstraints", 0, field)
	}
	return []corpusField{
		{"pod.tolerations[].key", hostiletest.SetAt("pod", "tolerations", 0, "key"), shortStr("a b", "a/b/c", "-x", "example.com/dedicated", longPrefix)},
		{"pod.tolerations[].operator", hostiletest.SetAt("pod", "tolerations", 0, "operator"), shortStr("Exists", "Equal", "Sometimes", "exists", "Lt")},
		{"pod.tolerations[].tolerationSeconds (effect NoSchedule)", hostiletest.SetAt("pod", "tolerations", 0, "tolerationSeconds"), nums()},
		{"pod.affinity.podAntiAffinity.required[].namespaces[]", func(spec map[string]any, v any) {
			hostiletest.SetAt(antiAffinity("namespaces")...)(spec, []any{v})
		}, shortStr("team-a", "Team_A", "a.b")},
		{"pod.affinity.podAntiAffinity.required[].matchLabelKeys[]", func(spec map[string]any, v any) {
			hostiletest.SetAt(antiAffinity("matchLabelKeys")...)(spec, []any{v})
		}, shortStr("app", "pod-template-hash", "a b")},
		{"pod.affinity.podAntiAffinity.required[].labelSelector.matchExpressions[].operator", func(spec map[string]any, v any) {
			hostiletest.SetAt(antiAffinity("labelSelector", "matchExpressions")...)(spec, []any{map[string]any{"key": "tier", "operator": v, "values": []any{"web"}}})
		}, shortStr("In", "Exists", "Maybe", "in")},
		{"pod.affinity.podAffinity.preferred[].weight", func(spec map[string]any, v any) {
			getAt(spec, "pod", "affinity").(map[string]any)["podAffinity"] = map[string]any{"preferredDuringSchedulingIgnoredDuringExecution": []any{
				map[string]any{"weight": v, "podAffinityTerm": map[string]any{"topologyKey": "topology.kubernetes.io/zone"}}}}
		}, nums(100, 101)},
		{"pod.affinity.nodeAffinity.required.nodeSelectorTerms[].matchExpressions[].values[]", func(spec map[string]any, v any) {
			setNodeAffinity(spec, nodeRequirement("zone", "In", v))
		}, shortStr("-x", "a_b", "a b", "eu-west-1a")},
		{"pod.affinity.nodeAffinity.required.nodeSelectorTerms[].matchExpressions[].operator (values 1, 2)", func(spec map[string]any, v any) {
			setNodeAffinity(spec, nodeRequirement("cores", v.(string), "1", "2"))
		}, shortStr("In", "Gt", "Lt", "Exists", "Near")},
		{"pod.affinity.nodeAffinity.required.nodeSelectorTerms[].matchFields[].key", func(spec map[string]any, v any) {
			setNodeAffinity(spec, map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{
				"nodeSelectorTerms": []any{map[string]any{"matchFields": []any{map[string]any{"key": v, "operator": "In", "values": []any{"node-1"}}}}}}})
		}, shortStr("metadata.name", "zone")},
		{"pod.topologySpreadConstraints[].maxSkew", spread("maxSkew"), nums()},
		{"pod.topologySpreadConstraints[].minDomains (ScheduleAnyway)", spread("minDomains"), nums()},
		{"pod.topologySpreadConstraints[].nodeAffinityPolicy", spread("nodeAffinityPolicy"), shortStr("Honor", "Ignore", "Maybe")},
		{"pod.topologySpreadConstraints[].matchLabelKeys[]", func(spec map[string]any, v any) {
			spread("matchLabelKeys")(spec, []any{v})
		}, shortStr("app", "pod-template-hash", "a b")},
		{"pod.topologySpreadConstraints[].labelSelector.matchLabels (key)", setKey("pod", "topologySpreadConstraints", 0, "labelSelector", "matchLabels"), shortStr("a b", "-x")},
		{"resources.limits (key)", func(spec map[string]any, v any) {
			hostiletest.SetAt("resources", "limits")(spec, map[string]any{v.(string): "1"})
		}, shortStr("example.com/gpu", "gpu", "hugepages-2Mi", "requests.example.com/gpu", "cpu ")},
		{"resources.requests.cpu (limit 2)", hostiletest.SetAt("resources", "requests", "cpu"), shortStr("-1", "3", "2", "0.5", "-0", "1e9")},
		// Beyond 2^53 the CRD's comparison (in doubles) sees these as equal;
		// the API server compares exactly: the short list's one resource case.
		{"resources.requests.memory (limit 2^53)", func(spec map[string]any, v any) {
			hostiletest.SetAt("resources", "limits", "memory")(spec, "9007199254740992")
			hostiletest.SetAt("resources", "requests", "memory")(spec, v)
		}, anyOf([]string{"9007199254740993", "9007199254740992", "9007199254740994"})},
		{"resources.limits.example.com/gpu (request 1)", func(spec map[string]any, v any) {
			hostiletest.SetAt("resources", "requests", "example.com/gpu")(spec, "1")
			hostiletest.SetAt("resources", "limits", "example.com/gpu")(spec, v)
		}, shortStr("1", "2", "500m", "-1")},
		{"networkPolicy.from[].ipBlock.cidr (IPv6 and forms)", hostiletest.SetAt("networkPolicy", "from", 0, "ipBlock", "cidr"),
			shortStr("fd00::/8", "FD00::/8", "fd00::1/8", "010.0.0.0/8", "::ffff:10.0.0.0/104", "10.0.0.0/8 ")},
		{"networkPolicy.metricsFrom[].ipBlock.cidr", func(spec map[string]any, v any) {
			hostiletest.SetAt("networkPolicy", "metricsFrom")(spec, []any{map[string]any{"ipBlock": map[string]any{"cidr": v}}})
		}, shortStr("10.0.0.0/33", "10.0.0.0/8")},
		{"networkPolicy.from[].namespaceSelector.matchLabels (key, space)", setKey("networkPolicy", "from", 1, "namespaceSelector", "matchLabels"), shortStr("team a", "a\tb")},
		{"networkPolicy.from[].podSelector.matchExpressions[].values (operator In)", func(spec map[string]any, v any) {
			hostiletest.SetAt("networkPolicy", "from", 1, "podSelector")(spec, map[string]any{"matchExpressions": []any{
				map[string]any{"key": "app", "operator": "In", "values": v}}})
		}, []any{[]any{}, []any{"a b"}, []any{"web"}}},
	}
}

func childStructures() []struct {
	show string
	edit func(spec map[string]any)
} {
	tolerations := func(s map[string]any, t ...any) { hostiletest.SetAt("pod", "tolerations")(s, t) }
	return []struct {
		show string
		edit func(spec map[string]any)
	}{
		{"a toleration without key that is not Exists", func(s map[string]any) {
			tolerations(s, map[string]any{"operator": "Equal", "value": "x"})
		}},
		{"a toleration Exists with a value", func(s map[string]any) {
			tolerations(s, map[string]any{"key": "k", "operator": "Exists", "value": "x"})
		}},
		{"65 tolerations", func(s map[string]any) {
			var t []any
			for i := range 65 {
				t = append(t, map[string]any{"key": fmt.Sprintf("k%d", i), "operator": "Exists"})
			}
			tolerations(s, t...)
		}},
		{"a pod affinity term without topologyKey", func(s map[string]any) {
			delete(getAt(s, antiAffinity()...).(map[string]any), "topologyKey")
		}},
		{"required node affinity without terms", func(s map[string]any) {
			setNodeAffinity(s, map[string]any{"requiredDuringSchedulingIgnoredDuringExecution": map[string]any{"nodeSelectorTerms": []any{}}})
		}},
		{"matchLabelKeys and mismatchLabelKeys share a key", func(s map[string]any) {
			hostiletest.SetAt(antiAffinity("matchLabelKeys")...)(s, []any{"version"})
			hostiletest.SetAt(antiAffinity("mismatchLabelKeys")...)(s, []any{"version"})
		}},
		{"two spread constraints on one topologyKey and whenUnsatisfiable", func(s map[string]any) {
			c := getAt(s, "pod", "topologySpreadConstraints", 0)
			hostiletest.SetAt("pod", "topologySpreadConstraints")(s, []any{c, c})
		}},
		{"spread matchLabelKeys without a labelSelector", func(s map[string]any) {
			c := getAt(s, "pod", "topologySpreadConstraints", 0).(map[string]any)
			delete(c, "labelSelector")
			c["matchLabelKeys"] = []any{"pod-template-hash"}
		}},
		{"huge pages without cpu or memory", func(s map[string]any) {
			s["resources"] = map[string]any{"limits": map[string]any{"hugepages-2Mi": "4Mi"}, "requests": map[string]any{"hugepages-2Mi": "4Mi"}}
		}},
		{"an extended resource requested without a limit", func(s map[string]any) {
			hostiletest.SetAt("resources", "requests", "example.com/gpu")(s, "1")
		}},
		{"ReadWriteOncePod with ReadWriteOnce", func(s map[string]any) {
			hostiletest.SetAt("content", "volumeClaimTemplate", "accessModes")(s, []any{"ReadWriteOncePod", "ReadWriteOnce"})
		}},
		{"accessModes: []", func(s map[string]any) { hostiletest.SetAt("content", "volumeClaimTemplate", "accessModes")(s, []any{}) }},
		{"an empty NetworkPolicy peer", func(s map[string]any) { hostiletest.SetAt("networkPolicy", "from")(s, []any{map[string]any{}}) }},
		{"an ipBlock with a podSelector in one peer", func(s map[string]any) {
			hostiletest.SetAt("networkPolicy", "from", 0, "podSelector")(s, map[string]any{})
		}},
		{"an except equal to cidr", func(s map[string]any) {
			hostiletest.SetAt("networkPolicy", "from", 0, "ipBlock", "except")(s, []any{"10.0.0.0/8"})
		}},
		{"an IPv6 except in an IPv4 cidr", func(s map[string]any) {
			hostiletest.SetAt("networkPolicy", "from", 0, "ipBlock", "except")(s, []any{"fd00::/16"})
		}},
	}
}
