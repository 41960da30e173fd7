package realpods

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
	"github.com/nginx-operator/nginx-operator/test/grpcecho"
)

// A gRPC Service through nginx, as a gRPC client sees it: unary and
// server-streaming calls in plain text (an h2c port) and over TLS, the
// backend's own status reaching the client, calls spread over the pods,
// and the backend rolled under load (its pods pause 5 s before they stop)
// failing no call.
func TestGRPCThroughNginxAsAClientSeesIt(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	rn := realcluster.NodeOf(c)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	const host = "grpc.realpods.test"
	pool, certPEM, keyPEM := framework.ServingCert(t, host)
	tlsSecret(ctx, t, cs, ns, "grpc-tls", certPEM, keyPEM)
	runGRPCServers(ctx, t, cs, ns, "greeter", 2)
	greeter := []v1beta1.Location{{Path: "/", Proxy: &v1beta1.ProxyLocation{Service: "greeter", Port: 9090, BackendProtocol: "GRPC"}}}
	objs := applyObjects(ctx, t, c, ns, nginxOperator(t, "gw", v1beta1.NginxOperatorSpec{
		Replicas: ptr.To[int32](2),
		Ports:    []v1beta1.Port{{Name: "h2c", ContainerPort: 8080, H2C: true}, {Name: "https", ContainerPort: 8443}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{
			{Port: "h2c", DefaultServer: true, Locations: greeter},
			{Port: "https", DefaultServer: true, TLS: &v1beta1.TLS{SecretName: "grpc-tls"}, Locations: greeter},
		}},
	}))
	framework.WaitReady(ctx, t, cl, 3*time.Minute, objs...)
	waitEndpoints(ctx, t, cl, ns, "gw", 2)
	ip := clusterIP(ctx, t, cs, ns, "gw")
	fromNode := grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) { return rn.DialContext(ctx, "tcp", addr) })
	clients := map[string]healthpb.HealthClient{
		"plain text": grpcHealthClient(t, ip+":80", fromNode, grpc.WithTransportCredentials(insecure.NewCredentials())),
		"TLS": grpcHealthClient(t, ip+":443", fromNode,
			grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{RootCAs: pool, ServerName: host, MinVersion: tls.VersionTLS12}))),
	}
	for name, hc := range clients {
		if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool { _, err := grpcCheck(ctx, hc, ""); return err == nil }) {
			t.Fatalf("%s: no gRPC answer through %s", name, ip)
		}
		checkGRPCCalls(ctx, t, name, hc)
	}

	plain := clients["plain text"]
	load := startGRPCLoad(ctx, plain, 4)
	rollBackend(ctx, t, cs, ns, "greeter")
	// The load goes on 5 s on the new pods (paces the load, waits for
	// nothing): calls in flight as the old pods went must not fail either.
	time.Sleep(5 * time.Second)
	served, failures := load.stop()
	t.Logf("%d unary calls while the backend rolled, over the pods: %v", load.total, served)
	if len(failures) > 0 {
		t.Errorf("%d of %d calls failed while the backend rolled, first: %v", len(failures), load.total, failures[0])
	}
	// Two pods before the rollout, two new ones after: nginx balanced the
	// calls of one client connection over them.
	if len(served) < 3 {
		t.Errorf("the calls reached %v, want the pods from before and after the rollout", served)
	}
}

// checkGRPCCalls makes a unary call, a server-streaming one and one the
// backend refuses through hc.
func checkGRPCCalls(ctx context.Context, t *testing.T, name string, hc healthpb.HealthClient) {
	t.Helper()
	if st, err := grpcCheck(ctx, hc, ""); err != nil || st != healthpb.HealthCheckResponse_SERVING {
		t.Errorf("%s: unary Check = %v, %v; want SERVING", name, st, err)
	}
	stream, err := hc.Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatalf("%s: Watch: %v", name, err)
	}
	var got []healthpb.HealthCheckResponse_ServingStatus
	for {
		resp, err := stream.Recv()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Errorf("%s: the stream ended with %v", name, err)
			}
			break
		}
		got = append(got, resp.GetStatus())
	}
	if fmt.Sprint(got) != fmt.Sprint(grpcecho.WatchStatuses) {
		t.Errorf("%s: streamed %v, want %v", name, got, grpcecho.WatchStatuses)
	}
	if _, err := grpcCheck(ctx, hc, grpcecho.RefusedService); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("%s: a call the backend refuses ended with %v, want its FailedPrecondition", name, err)
	}
}

func grpcHealthClient(t *testing.T, target string, opts ...grpc.DialOption) healthpb.HealthClient {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///"+target, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return healthpb.NewHealthClient(conn)
}

// grpcCheck calls Check for service with a 10 s deadline and returns the
// status; the server that answered is in the call's header.
func grpcCheck(ctx context.Context, hc healthpb.HealthClient, service string) (healthpb.HealthCheckResponse_ServingStatus, error) {
	st, _, err := grpcCheckFrom(ctx, hc, service)
	return st, err
}

func grpcCheckFrom(ctx context.Context, hc healthpb.HealthClient, service string) (healthpb.HealthCheckResponse_ServingStatus, string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var header metadata.MD
	resp, err := hc.Check(ctx, &healthpb.HealthCheckRequest{Service: service}, grpc.Header(&header))
	server := ""
	if v := header.Get(grpcecho.ServerHeader); len(v) > 0 {
		server = v[0]
	}
	return resp.GetStatus(), server, err
}

// grpcLoad is unary calls from several goroutines over one connection.
type grpcLoad struct {
	stopped  chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	total    int
	served   map[string]int
	failures []error
}

func startGRPCLoad(ctx context.Context, hc healthpb.HealthClient, callers int) *grpcLoad {
	l := &grpcLoad{stopped: make(chan struct{}), served: map[string]int{}}
	for range callers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for {
				select {
				case <-l.stopped:
					return
				default:
				}
				_, server, err := grpcCheckFrom(ctx, hc, "")
				l.mu.Lock()
				l.total++
				if err != nil {
					l.failures = append(l.failures, err)
				} else {
					l.served[server]++
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

func (l *grpcLoad) stop() (map[string]int, []error) {
	close(l.stopped)
	l.wg.Wait()
	return l.served, l.failures
}

// runGRPCServers runs replicas of the node's test server in its gRPC mode
// as the Deployment name (pods that pause 5 s before they stop), behind a
// Service name of port 9090.
func runGRPCServers(ctx context.Context, t *testing.T, cs kubernetes.Interface, ns, name string, replicas int32) {
	t.Helper()
	labels := map[string]string{"app": name}
	pod := corev1.PodSpec{AutomountServiceAccountToken: ptr.To(false), Containers: []corev1.Container{{
		Name: "server", Image: realcluster.TestServer.Name, Args: []string{"grpc", ":9090"},
		Ports:           []corev1.ContainerPort{{Name: "grpc", ContainerPort: 9090}},
		ReadinessProbe:  &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromString("grpc")}}, PeriodSeconds: 1},
		Lifecycle:       &corev1.Lifecycle{PreStop: &corev1.LifecycleHandler{Sleep: &corev1.SleepAction{Seconds: 5}}},
		SecurityContext: realcluster.RestrictedContainer(),
	}}}
	deployment := testServerDeployment(name, replicas, labels, pod)
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, deployment, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	service := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.ServiceSpec{Selector: labels,
		Ports: []corev1.ServicePort{{Name: "grpc", Port: 9090, TargetPort: intstr.FromString("grpc"), AppProtocol: ptr.To("kubernetes.io/h2c")}}}}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, service, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}
