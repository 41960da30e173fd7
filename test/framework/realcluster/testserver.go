package realcluster

import (
	"context"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/test/framework/node"
)

// RunTestServer runs the node's test server (TestServer, which the node
// must import: Options.GoImages) as pod and Service name in ns, on port 80,
// or 443 with HTTPS from the TLS Secret tlsSecret when it is not empty.
func RunTestServer(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name, tlsSecret string) {
	t.Helper()
	args, port := []string{"serve", ":8080"}, int32(80)
	container := corev1.Container{
		Name: "server", Image: TestServer.Name,
		Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}},
		ReadinessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("http")}}, PeriodSeconds: 1},
		SecurityContext: RestrictedContainer(),
	}
	var volumes []corev1.Volume
	if tlsSecret != "" {
		args, port = []string{"serve", ":8080", "/tls/tls.crt", "/tls/tls.key"}, 443
		volumes = []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: tlsSecret}}}}
		container.VolumeMounts = []corev1.VolumeMount{{Name: "tls", MountPath: "/tls", ReadOnly: true}}
	}
	container.Args = args
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": name}},
		Spec:       corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false), Containers: []corev1.Container{container}, Volumes: volumes},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": name},
			Ports:    []corev1.ServicePort{{Name: "http", Port: port, TargetPort: intstr.FromString("http")}},
		},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// The ports of RunStreamServers's Service: StreamEchoPort (TCP) greets each
// connection with "hello from <pod name>" and echoes its lines,
// StreamDNSPort (UDP) answers a DNS TXT query for any name with the pod's
// name, and StreamTLSPort, with a TLS Secret, greets and echoes over TLS
// with the Secret's certificate.
const (
	StreamEchoPort int32 = 7000
	StreamDNSPort  int32 = 53
	StreamTLSPort  int32 = 443
)

// RunStreamServers runs replicas of the node's test server in its stream
// mode (`testserver stream`) as the Deployment and Service name in ns, its
// pods labelled app=name and ready once they accept connections; with
// tlsSecret (a kubernetes.io/tls Secret), they serve StreamTLSPort too;
// with lifecycle, their container has it (a preStop pause).
func RunStreamServers(ctx context.Context, t testing.TB, cs kubernetes.Interface, ns, name string, replicas int32, tlsSecret string, lifecycle *corev1.Lifecycle) {
	t.Helper()
	labels := map[string]string{"app": name}
	container := corev1.Container{
		Name: "server", Image: TestServer.Name, Args: []string{"stream", ":7000", ":5353"},
		Ports: []corev1.ContainerPort{
			{Name: "echo", ContainerPort: 7000},
			{Name: "dns", ContainerPort: 5353, Protocol: corev1.ProtocolUDP},
		},
		ReadinessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("echo")}}, PeriodSeconds: 1},
		SecurityContext: RestrictedContainer(),
		Lifecycle:       lifecycle,
	}
	servicePorts := []corev1.ServicePort{
		{Name: "echo", Port: StreamEchoPort, TargetPort: intstr.FromString("echo")},
		{Name: "dns", Port: StreamDNSPort, TargetPort: intstr.FromString("dns"), Protocol: corev1.ProtocolUDP},
	}
	spec := corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false)}
	if tlsSecret != "" {
		container.Args = append(container.Args, ":7443", "/tls/tls.crt", "/tls/tls.key")
		container.Ports = append(container.Ports, corev1.ContainerPort{Name: "tls", ContainerPort: 7443})
		container.VolumeMounts = []corev1.VolumeMount{{Name: "tls", MountPath: "/tls", ReadOnly: true}}
		spec.Volumes = []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: tlsSecret}}}}
		servicePorts = append(servicePorts, corev1.ServicePort{Name: "tls", Port: StreamTLSPort, TargetPort: intstr.FromString("tls")})
	}
	spec.Containers = []corev1.Container{container}
	deployment := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		},
	}
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	service := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{Selector: labels, Ports: servicePorts}}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, service, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// RestrictedContainer is a container security context that passes the
// restricted Pod Security Standard, for the test images (which name no user).
func RestrictedContainer() *corev1.SecurityContext { return node.RestrictedContainer() }

// RunProbe runs the node's test server as a client (node.RunProbe: pod
// name in ns, with labels, reading urls), waits until it has ended and
// returns its log, a line per URL: "GET <url>: <body>" or
// "GET <url>: FAIL: <why>".
func RunProbe(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, labels map[string]string, urls ...string) string {
	t.Helper()
	_, logs, err := node.RunProbe(ctx, cs, ns, name, TestServer.Name, labels, urls...)
	if err != nil {
		t.Fatal(err)
	}
	return logs
}
