package main

import (
	"reflect"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The syntax Kubernetes requires of names and label parts, as regular
// expressions for OpenAPI patterns and CEL (which has no escape for "." in
// a pattern that survives both, hence "[.]").
const (
	// qualifiedName is a label key: an optional DNS subdomain and "/", then
	// a name of at most 63 characters. The prefix's own bound (253) is a
	// separate rule: a regular expression cannot count it.
	qualifiedName = `^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	labelValue    = `^(([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9])?$`
	dnsLabel      = `^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`
	dnsSubdomain  = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
)

// Bounds on the lists of the embedded types. Kubernetes sets none (a pod is
// bounded by the request size); the CEL rules below cost, in the apiserver's
// estimate, the product of the bounds above them, and the CRD's total must
// stay within its budget. Each is far above what a pod needs.
const (
	maxTerms       = 16 // affinity terms, node selector terms, match expressions and fields
	maxValues      = 64 // values of one requirement, matchLabels, namespaces
	maxLabelKeys   = 16 // matchLabelKeys, mismatchLabelKeys
	maxExcept      = 32 // ipBlock.except
	maxResources   = 12 // resource names in limits, in requests
	maxCIDRLength  = 43 // the longest IPv6 CIDR
	maxKeyLength   = 253 + 1 + 63
	maxValueLength = 63
)

var (
	labelKey = all(maxLength(maxKeyLength), pattern(qualifiedName),
		rule(`self.indexOf('/') <= 253`, "the prefix of a label key (before '/') must be at most 253 characters"))
	labelValueString = all(maxLength(maxValueLength), pattern(labelValue))
	// labelKeys is the rule on a map's keys, which a pattern cannot reach.
	labelKeys = rule(`self.all(k, k.matches('`+qualifiedName+`') && k.indexOf('/') <= 253)`,
		"every key must be a label key: an optional DNS subdomain prefix and '/', then at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit")
	cidrString = all(maxLength(maxCIDRLength),
		rule(`isCIDR(self) && cidr(self) == cidr(self).masked()`, "must be a CIDR such as 10.0.0.0/8 or fd00::/8, with no address bits set beyond the prefix length"))
)

func typeOf[T any]() reflect.Type { return reflect.TypeFor[T]() }

// rules are the rules of each embedded Kubernetes type, as the apiserver
// applies them to a pod template (k8s.io/kubernetes pkg/apis/core/validation)
// and a NetworkPolicy (pkg/apis/networking/validation).
var rules = map[reflect.Type]change{
	// The name of a Secret; empty is its schema's default.
	typeOf[corev1.LocalObjectReference]():     at("name", maxLength(253), pattern(`^(`+dnsSubdomain[1:len(dnsSubdomain)-1]+`)?$`)),
	typeOf[corev1.Toleration]():               toleration,
	typeOf[metav1.LabelSelector]():            labelSelector,
	typeOf[metav1.LabelSelectorRequirement](): labelSelectorRequirement,
	typeOf[corev1.NodeSelector]():             at("nodeSelectorTerms", minItems(1), maxItems(maxTerms)),
	typeOf[corev1.NodeSelectorTerm]():         nodeSelectorTerm,
	typeOf[corev1.NodeSelectorRequirement]():  nodeSelectorRequirement,
	typeOf[corev1.PreferredSchedulingTerm]():  at("weight", between(1, 100)),
	typeOf[corev1.NodeAffinity]():             at("preferredDuringSchedulingIgnoredDuringExecution", maxItems(maxTerms)),
	typeOf[corev1.PodAffinity]():              podAffinityTerms,
	typeOf[corev1.PodAntiAffinity]():          podAffinityTerms,
	typeOf[corev1.WeightedPodAffinityTerm]():  at("weight", between(1, 100)),
	typeOf[corev1.PodAffinityTerm]():          podAffinityTerm,
	typeOf[corev1.TopologySpreadConstraint](): topologySpreadConstraint,
	typeOf[corev1.ResourceRequirements]():     resourceRequirements,
	typeOf[networkingv1.NetworkPolicyPeer]():  networkPolicyPeer,
	typeOf[networkingv1.IPBlock]():            ipBlock,
}

var toleration = all(
	at("key", labelKey),
	at("operator", enum("", "Equal", "Exists")),
	at("value", labelValueString),
	at("effect", enum("", "NoSchedule", "PreferNoSchedule", "NoExecute")),
	rule(`(has(self.key) && self.key != '') || (has(self.operator) && self.operator == 'Exists')`,
		"operator must be Exists when key is empty (a toleration of every taint)"),
	rule(`!has(self.operator) || self.operator != 'Exists' || !has(self.value) || self.value == ''`,
		"value must be empty when operator is Exists"),
	rule(`!has(self.tolerationSeconds) || (has(self.effect) && self.effect == 'NoExecute')`,
		"tolerationSeconds needs effect NoExecute"),
)

var labelSelector = all(
	at("matchLabels", maxProperties(maxValues), labelKeys, at("{}", labelValueString)),
	at("matchExpressions", maxItems(maxTerms)),
)

var labelSelectorRequirement = all(
	at("key", labelKey),
	at("operator", enum("In", "NotIn", "Exists", "DoesNotExist")),
	at("values", maxItems(maxValues), at("[]", labelValueString)),
	rule(`self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : !has(self.values) || size(self.values) == 0`,
		"values must be set for operator In and NotIn, and empty for Exists and DoesNotExist"),
)

var nodeSelectorRequirement = all(
	at("key", labelKey),
	at("operator", enum("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")),
	at("values", maxItems(maxValues), at("[]", maxLength(253))),
	rule(`self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : (self.operator in ['Gt', 'Lt'] ? has(self.values) && size(self.values) == 1 : !has(self.values) || size(self.values) == 0)`,
		"values must be set for operator In and NotIn, hold one integer for Gt and Lt, and be empty for Exists and DoesNotExist"),
)

// nodeSelectorTerm: the expressions select node labels, whose values are
// label values; the fields select a node by name.
var nodeSelectorTerm = all(
	at("matchExpressions", maxItems(maxTerms), at("[].values.[]", labelValueString)),
	at("matchFields", maxItems(maxTerms), at("[]",
		at("key", enum("metadata.name")),
		at("operator", enum("In", "NotIn")),
		at("values", minItems(1), maxItems(1), at("[]", pattern(dnsSubdomain))))),
)

var podAffinityTerms = all(
	at("requiredDuringSchedulingIgnoredDuringExecution", maxItems(maxTerms)),
	at("preferredDuringSchedulingIgnoredDuringExecution", maxItems(maxTerms)),
)

// matchLabelKeysRules are the rules of matchLabelKeys (in pod affinity terms
// and topology spread constraints): label keys, which need a labelSelector
// and repeat none of its keys (the apiserver adds them to it for each pod).
var matchLabelKeysRules = all(
	at("matchLabelKeys", maxItems(maxLabelKeys), at("[]", labelKey)),
	rule(`!has(self.matchLabelKeys) || size(self.matchLabelKeys) == 0 || has(self.labelSelector)`,
		"matchLabelKeys needs a labelSelector"),
	rule(`!has(self.matchLabelKeys) || !has(self.labelSelector) || self.matchLabelKeys.all(k, !(has(self.labelSelector.matchLabels) && k in self.labelSelector.matchLabels) && !(has(self.labelSelector.matchExpressions) && self.labelSelector.matchExpressions.exists(e, e.key == k)))`,
		"a key of matchLabelKeys may not also be a key of labelSelector"),
)

var podAffinityTerm = all(
	at("topologyKey", minLength(1), labelKey),
	at("namespaces", maxItems(maxValues), at("[]", pattern(dnsLabel), maxLength(63))),
	matchLabelKeysRules,
	at("mismatchLabelKeys", maxItems(maxLabelKeys), at("[]", labelKey)),
	rule(`!has(self.mismatchLabelKeys) || size(self.mismatchLabelKeys) == 0 || has(self.labelSelector)`,
		"mismatchLabelKeys needs a labelSelector"),
	rule(`!has(self.matchLabelKeys) || !has(self.mismatchLabelKeys) || self.matchLabelKeys.all(k, !(k in self.mismatchLabelKeys))`,
		"a key may not be in both matchLabelKeys and mismatchLabelKeys"),
)

var topologySpreadConstraint = all(
	at("maxSkew", atLeast(1)),
	at("topologyKey", minLength(1), labelKey),
	at("whenUnsatisfiable", enum("DoNotSchedule", "ScheduleAnyway")),
	at("minDomains", atLeast(1)),
	at("nodeAffinityPolicy", enum("Honor", "Ignore")),
	at("nodeTaintsPolicy", enum("Honor", "Ignore")),
	matchLabelKeysRules,
	rule(`!has(self.minDomains) || self.whenUnsatisfiable == 'DoNotSchedule'`,
		"minDomains needs whenUnsatisfiable DoNotSchedule"),
)

var networkPolicyPeer = all(
	rule(`has(self.podSelector) || has(self.namespaceSelector) || has(self.ipBlock)`,
		"a peer needs a podSelector, a namespaceSelector or an ipBlock"),
	rule(`!has(self.ipBlock) || !(has(self.podSelector) || has(self.namespaceSelector))`,
		"an ipBlock cannot be combined with a podSelector or namespaceSelector in one peer"),
)

var ipBlock = all(
	at("cidr", cidrString),
	at("except", maxItems(maxExcept), at("[]", cidrString)),
	rule(`!has(self.except) || !isCIDR(self.cidr) || self.except.all(e, !isCIDR(e) || (cidr(self.cidr).containsCIDR(e) && cidr(e).prefixLength() > cidr(self.cidr).prefixLength()))`,
		"every except entry must be a CIDR strictly inside cidr"),
)

// Container resource names: cpu, memory, ephemeral-storage and
// hugepages-<size>, or a name with a DNS prefix (an extended resource, such
// as example.com/gpu, whose prefix takes "requests." in a quota, so at most
// 244 characters).
const (
	standardResource = `^(cpu|memory|ephemeral-storage|hugepages-[A-Za-z0-9]([-A-Za-z0-9_.]{0,51}[A-Za-z0-9])?)$`
	prefixedResource = `^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$`
	// extended is true for a resource name Kubernetes does not overcommit
	// and counts in whole units (not cpu, memory, hugepages or a
	// kubernetes.io name).
	extended = `(k.contains('/') && !k.contains('kubernetes.io/'))`
	// notOvercommitted is true for the names whose request must equal
	// their limit: extended resources and huge pages.
	notOvercommitted = `(k.startsWith('hugepages-') || ` + extended + `)`
)

// amount is the value of x, a resource.Quantity's int-or-string, as a
// double: an integer as it is, a string through quantity(). The
// conversion of an integer by string() would be estimated (by the
// apiserver's cost check) as the longest string a request can hold, which
// the budget cannot pay for every resource. A double is exact up to 2^53,
// beyond any quantity a pod asks for.
func amount(x string) string {
	return `(type(` + x + `) == int ? double(` + x + `) : quantity(` + x + `).asApproximateFloat())`
}

// resourceList is the rule set of limits or of requests.
var resourceList = all(
	maxProperties(maxResources),
	rule(`self.all(k, k.matches('`+standardResource+`') || (k.matches('`+prefixedResource+`') && k.indexOf('/') <= 244 && !k.startsWith('requests.')))`,
		"resource names must be cpu, memory, ephemeral-storage, hugepages-<size> or an extended resource with a DNS prefix, such as example.com/gpu"),
	rule(`self.all(k, type(self[k]) == int ? int(self[k]) >= 0 : !quantity(self[k]).isLessThan(quantity('0')))`, "quantities must not be negative"),
	rule(`self.all(k, !k.startsWith('hugepages-') || (isQuantity(k.substring(10)) && quantity(k.substring(10)).isGreaterThan(quantity('0')) && (type(self[k]) == int ? int(self[k]) : quantity(self[k]).asInteger()) % quantity(k.substring(10)).asInteger() == 0))`,
		"huge pages are counted in pages: hugepages-<size> needs a page size such as 2Mi, and an amount that is a multiple of it"),
	rule(`self.all(k, !`+extended+` || type(self[k]) == int || quantity(self[k]).isInteger())`,
		"an extended resource is counted in whole units"),
)

var resourceRequirements = all(
	at("limits", resourceList),
	at("requests", resourceList),
	rule(`!has(self.claims) || size(self.claims) == 0`,
		"claims name the pod's resourceClaims, which an NginxOperator does not have: leave claims empty"),
	rule(`!has(self.requests) || !has(self.limits) || self.requests.all(k, !(k in self.limits) || `+amount(`self.requests[k]`)+` <= `+amount(`self.limits[k]`)+`)`,
		"a request may not exceed its limit"),
	rule(`!has(self.requests) || self.requests.all(k, !`+notOvercommitted+` || (has(self.limits) && k in self.limits && `+amount(`self.requests[k]`)+` == `+amount(`self.limits[k]`)+`))`,
		"huge pages and extended resources need a limit equal to their request"),
	rule(`!((has(self.limits) && self.limits.exists(k, k.startsWith('hugepages-'))) || (has(self.requests) && self.requests.exists(k, k.startsWith('hugepages-')))) || (has(self.limits) && ('cpu' in self.limits || 'memory' in self.limits)) || (has(self.requests) && ('cpu' in self.requests || 'memory' in self.requests))`,
		"huge pages need a cpu or memory request or limit"),
)
