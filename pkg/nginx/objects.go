package nginx

import (
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/serviceport"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// PodTemplateVersion is the current value of layout.PodTemplateAnnotation:
// "2" added nginx's termination message and its preStop delay; "3" runs
// nginx under the nginx-reloader, so a new configuration or certificate is
// loaded in place. Upgrading from an operator before "3" rolls every
// instance's pods once; "4" runs nginx from the reloader's working copy of
// nginx.conf, which the operator pushes to; "5" mounts the files nginx
// reads of the references from the instance's files Secrets, one volume
// whatever the instance references, where "4" had a volume of each
// referenced Secret and ConfigMap (so a new certificate rolled the pods);
// "6" runs the reloader that orders configurations by the config Secret's
// revision (reloader.RevisionFile), which an earlier one would take for a
// file nginx reads, and reload for. (The nginx.operator.dev/
// prefix of the operator's annotations is reserved: admission refuses user
// annotations under it, and the operator's values win over
// spec.pod.annotations anyway.)
const PodTemplateVersion = "6"

// Materials is everything the builders need besides the instance.
type Materials struct {
	Config     []byte // rendered nginx.conf
	ConfigHash string
	Image      string // spec.image or the operator's default
	// References are the objects the spec names (render.ReferencesOf). No
	// builder reads them: the pod template is the same whatever the spec
	// references (the files Secrets carry their files).
	References render.References
	// ExporterImage runs the nginx-prometheus-exporter sidecar of instances
	// with spec.metrics.enabled.
	ExporterImage string
	// ReloaderImage holds the nginx-reloader binary an init container
	// copies into the pod (the operator's own image, --reloader-image).
	ReloaderImage string
	// Restore, when set, is the init container that seeds the content volume
	// (spec.restore) and the volumes it needs besides that one.
	Restore *RestoreInit
	// FilesHash digests the files nginx reads of the references (the
	// manifest at the head of Config); empty without any.
	FilesHash string
	// PushKey signs the configurations the operator pushes to the pods'
	// reloaders (layout.PushKeyFile).
	PushKey []byte
	// Revision orders Config among the instance's configurations
	// (reloader.RevisionFile): the config Secret's, raised when Config
	// or its files change (configRevision).
	Revision uint64
}

// RestoreInit is an init container plus the extra volumes it mounts.
type RestoreInit struct {
	Container corev1.Container
	Volumes   []corev1.Volume
}

func objectMeta(nginx *v1beta1.NginxOperator, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:        name,
		Namespace:   nginx.Namespace,
		Labels:      merged(nginx.Spec.ChildMetadata.Labels, layout.Labels(nginx.Name)),
		Annotations: merged(nginx.Spec.ChildMetadata.Annotations),
	}
}

// merged is the union of ms, a later map's value winning on a key they
// share; nil when they are all empty.
func merged(ms ...map[string]string) map[string]string {
	var out map[string]string
	for _, m := range ms {
		if len(m) > 0 && out == nil {
			out = map[string]string{}
		}
		maps.Copy(out, m)
	}
	return out
}

func selector(nginx *v1beta1.NginxOperator) map[string]string {
	return layout.Selector(nginx.Name)
}

// ConfigSecret holds nginx.conf. A Secret rather than a ConfigMap because
// configurations may name internal hosts and paths. It is one Secret whose
// content changes: the kubelet updates the pods' volume in place, and each
// pod's reloader checks the new configuration with nginx -t and loads it
// gracefully, or keeps the old one serving and reports why. Its annotations
// say what it was written for (see layout.ConfigHashAnnotation).
func ConfigSecret(nginx *v1beta1.NginxOperator, in Materials) *corev1.Secret {
	meta := objectMeta(nginx, layout.NamesFor(nginx.Name).ConfigSecret)
	meta.Annotations = merged(meta.Annotations, syncAnnotations(in))
	return &corev1.Secret{
		ObjectMeta: meta,
		Type:       corev1.SecretTypeOpaque,
		Data: map[string][]byte{layout.ConfigFile: in.Config, layout.PushKeyFile: in.PushKey,
			reloader.RevisionFile: []byte(strconv.FormatUint(in.Revision, 10))},
	}
}

// ServiceAccount of the pods; nginx needs no API access, so no token is mounted.
func ServiceAccount(nginx *v1beta1.NginxOperator) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{
		ObjectMeta:                   objectMeta(nginx, layout.NamesFor(nginx.Name).ServiceAccount),
		AutomountServiceAccountToken: ptr.To(false),
	}
}

// servicePorts are the ports of spec.ports on a Service: the i-th on
// numbers[i], forwarded to the pods' port of that name.
func servicePorts(nginx *v1beta1.NginxOperator, numbers []int32) []corev1.ServicePort {
	var ports []corev1.ServicePort
	for i, p := range nginx.Spec.Ports {
		sp := corev1.ServicePort{Name: p.Name, Port: numbers[i], TargetPort: intstr.FromString(p.Name), Protocol: protocolOf(p)}
		if p.H2C {
			// Tells a load balancer or mesh in front of the Service to
			// speak plain-text HTTP/2 to it.
			sp.AppProtocol = ptr.To("kubernetes.io/h2c")
		}
		ports = append(ports, sp)
	}
	return ports
}

// protocolOf is p's protocol: TCP unless it is UDP.
func protocolOf(p v1beta1.Port) corev1.Protocol {
	if p.Protocol == corev1.ProtocolUDP {
		return corev1.ProtocolUDP
	}
	return corev1.ProtocolTCP
}

// Service is what clients use: each of spec.ports on its Service port (as
// serviceport.Resolve decides under rule, the rule of the instance's
// existing Service, see serviceport.RuleOf), and on its nodePort when the
// spec sets one. An unset nodePort is left out of the apply, so that the
// API server keeps the one it allocated (it carries a port's node port
// over, by port name, to an update that leaves it out) rather than the
// operator asking for another. The rule is written in the Service's
// annotation layout.ServicePortsAnnotation, so it lasts.
//
// With spec.metrics.enabled it also exposes the exporter's port and the
// reloader's, the two an NginxMonitor scrapes (Prometheus discovers
// targets through a Service's EndpointSlices). An instance that did not ask
// for metrics exposes neither: the reloader's port then stays reachable on
// the pod network only, where the operator reads each pod's /status.
func Service(nginx *v1beta1.NginxOperator, resolved serviceport.Ports) *corev1.Service {
	meta := objectMeta(nginx, layout.NamesFor(nginx.Name).Service)
	meta.Annotations = merged(meta.Annotations, nginx.Spec.Service.Annotations,
		map[string]string{layout.ServicePortsAnnotation: string(resolved.Rule)})
	svc := nginx.Spec.Service
	ports := servicePorts(nginx, resolved.Service)
	if svc.Type == corev1.ServiceTypeNodePort || svc.Type == corev1.ServiceTypeLoadBalancer {
		for i, p := range nginx.Spec.Ports {
			ports[i].NodePort = p.NodePort
		}
	}
	if nginx.Spec.Metrics.Enabled {
		ports = append(ports,
			corev1.ServicePort{
				Name: layout.MetricsPortName, Port: layout.ExporterPort, TargetPort: intstr.FromString(layout.MetricsPortName), Protocol: corev1.ProtocolTCP,
			},
			corev1.ServicePort{
				Name: layout.ReloaderPortName, Port: layout.ReloaderPort, TargetPort: intstr.FromString(layout.ReloaderPortName), Protocol: corev1.ProtocolTCP,
			})
	}
	spec := corev1.ServiceSpec{
		Type: svc.Type, Selector: selector(nginx), Ports: ports,
		ExternalTrafficPolicy:    svc.ExternalTrafficPolicy,
		LoadBalancerSourceRanges: svc.LoadBalancerSourceRanges,
		SessionAffinity:          svc.SessionAffinity,
		IPFamilyPolicy:           svc.IPFamilyPolicy,
		IPFamilies:               svc.IPFamilies,
	}
	if svc.LoadBalancerClass != "" {
		spec.LoadBalancerClass = ptr.To(svc.LoadBalancerClass)
	}
	return &corev1.Service{ObjectMeta: meta, Spec: spec}
}

// ServesIPv6 tells whether the cluster gave svc, the instance's Service, an
// IPv6 address; nginx listens on IPv6 only then (render.Options.IPv6).
func ServesIPv6(svc *corev1.Service) bool {
	return slices.Contains(svc.Spec.IPFamilies, corev1.IPv6Protocol)
}

func containerPorts(nginx *v1beta1.NginxOperator) []int32 {
	out := make([]int32, len(nginx.Spec.Ports))
	for i, p := range nginx.Spec.Ports {
		out[i] = p.ContainerPort
	}
	return out
}

// HeadlessService gives the StatefulSet's pods stable DNS names. Its ports
// are the containerPorts: a client of a headless Service connects to a pod
// itself, where nothing translates a port.
func HeadlessService(nginx *v1beta1.NginxOperator) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(nginx, layout.NamesFor(nginx.Name).HeadlessService),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 selector(nginx),
			Ports:                    servicePorts(nginx, containerPorts(nginx)),
			PublishNotReadyAddresses: true,
		},
	}
}

// PodDisruptionBudget, or nil when the spec asks for none.
func PodDisruptionBudget(nginx *v1beta1.NginxOperator) *policyv1.PodDisruptionBudget {
	pdb := nginx.Spec.PodDisruptionBudget
	if pdb == nil {
		return nil
	}
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: objectMeta(nginx, layout.NamesFor(nginx.Name).PodDisruptionBudget),
		Spec: policyv1.PodDisruptionBudgetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: selector(nginx)},
			MinAvailable:   pdb.MinAvailable,
			MaxUnavailable: pdb.MaxUnavailable,
		},
	}
}

// OperatorPods are the operator's own pods, as a NetworkPolicy admits them
// to the reloader's port: the pods with Labels in Namespace, or in any
// namespace when Namespace is empty (an operator outside the cluster).
type OperatorPods struct {
	Namespace string
	Labels    map[string]string
}

// NetworkPolicy admits connections to the instance's pods (see
// NginxOperatorSpec.NetworkPolicy): one rule for nginx's ports, one for the
// reloader's port from the operator, one for the metrics ports from
// metricsFrom. nil when the spec asks for none.
func NetworkPolicy(nginx *v1beta1.NginxOperator, operator OperatorPods) *networkingv1.NetworkPolicy {
	spec := nginx.Spec.NetworkPolicy
	if spec == nil {
		return nil
	}
	var nginxPorts []networkingv1.NetworkPolicyPort
	for _, p := range nginx.Spec.Ports {
		nginxPorts = append(nginxPorts, policyPort(p.Protocol, p.ContainerPort))
	}
	namespaces := &metav1.LabelSelector{}
	if operator.Namespace != "" {
		namespaces.MatchLabels = map[string]string{corev1.LabelMetadataName: operator.Namespace}
	}
	rules := []networkingv1.NetworkPolicyIngressRule{
		{From: spec.From, Ports: nginxPorts},
		{From: []networkingv1.NetworkPolicyPeer{{NamespaceSelector: namespaces, PodSelector: &metav1.LabelSelector{MatchLabels: operator.Labels}}},
			Ports: []networkingv1.NetworkPolicyPort{policyPort(corev1.ProtocolTCP, layout.ReloaderPort)}},
	}
	if len(spec.MetricsFrom) > 0 {
		metricsPorts := []networkingv1.NetworkPolicyPort{policyPort(corev1.ProtocolTCP, layout.ReloaderPort)}
		if nginx.Spec.Metrics.Enabled {
			metricsPorts = append(metricsPorts, policyPort(corev1.ProtocolTCP, layout.ExporterPort))
		}
		rules = append(rules, networkingv1.NetworkPolicyIngressRule{From: spec.MetricsFrom, Ports: metricsPorts})
	}
	return &networkingv1.NetworkPolicy{
		ObjectMeta: objectMeta(nginx, layout.NamesFor(nginx.Name).NetworkPolicy),
		Spec: networkingv1.NetworkPolicySpec{
			PodSelector: metav1.LabelSelector{MatchLabels: selector(nginx)},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress},
			Ingress:     rules,
		},
	}
}

// policyPort is a NetworkPolicy's port; an empty protocol is TCP, as for
// a container port.
func policyPort(protocol corev1.Protocol, port int32) networkingv1.NetworkPolicyPort {
	if protocol == "" {
		protocol = corev1.ProtocolTCP
	}
	return networkingv1.NetworkPolicyPort{Protocol: &protocol, Port: ptr.To(intstr.FromInt32(port))}
}
