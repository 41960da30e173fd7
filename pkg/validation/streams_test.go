package validation_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// withStreams gives valid()'s instance a TLS server on an https port
// shared with streams, a TCP port "db" and a UDP port "dns", and the
// streams mutate then changes.
func withStreams(mutate func(o *v1beta1.NginxOperator)) func(*v1beta1.NginxOperator) {
	return func(o *v1beta1.NginxOperator) {
		o.Spec.Ports = append(o.Spec.Ports,
			v1beta1.Port{Name: "https", ContainerPort: 8443},
			v1beta1.Port{Name: "db", ContainerPort: 5432},
			v1beta1.Port{Name: "dns", ContainerPort: 5353, Protocol: corev1.ProtocolUDP},
		)
		o.Spec.Config.Servers = append(o.Spec.Config.Servers, v1beta1.Server{Port: "https", ServerNames: []string{"www.example.com"}, TLS: &v1beta1.TLS{SecretName: "www"}})
		backends := []v1beta1.Backend{{Service: "db", Port: 5432}}
		o.Spec.Config.Streams = []v1beta1.Stream{
			{Port: "https", ServerNames: []string{"db.example.com"}, Backends: backends},
			{Port: "db", Backends: backends},
			{Port: "dns", Backends: []v1beta1.Backend{{Service: "coredns", Port: 53}}, ExpectedResponses: ptr.To[int32](1)},
		}
		mutate(o)
	}
}

// Streams refuse, at admission, what nginx cannot do or would do otherwise
// than the spec says, with a message naming the fix.
func TestStreamFieldsRefuseBadValuesWithMessagesUsersUnderstand(t *testing.T) {
	stream := func(o *v1beta1.NginxOperator, i int) *v1beta1.Stream { return &o.Spec.Config.Streams[i] }
	cases := []struct {
		name   string
		mutate func(*v1beta1.NginxOperator)
		want   []string
	}{
		{"a stream on an undeclared port", func(o *v1beta1.NginxOperator) { stream(o, 1).Port = "pg" },
			[]string{"every config.streams[].port must be the name of one of spec.ports"}},
		{"a server on a UDP port", func(o *v1beta1.NginxOperator) { o.Spec.Config.Servers[0].Port = "dns" },
			[]string{"a config.servers[].port cannot be a UDP port"}},
		{"TLS on a UDP port", func(o *v1beta1.NginxOperator) { stream(o, 2).TLS = &v1beta1.StreamTLS{SecretName: "x"} },
			[]string{"serverNames, tls and proxyProtocol are for TCP ports"}},
		{"names on a UDP port", func(o *v1beta1.NginxOperator) { stream(o, 2).ServerNames = []string{"dns.example.com"} },
			[]string{"serverNames, tls and proxyProtocol are for TCP ports"}},
		{"the PROXY protocol over UDP", func(o *v1beta1.NginxOperator) { stream(o, 2).ProxyProtocol = true },
			[]string{"serverNames, tls and proxyProtocol are for TCP ports"}},
		{"expected responses over TCP", func(o *v1beta1.NginxOperator) { stream(o, 1).ExpectedResponses = ptr.To[int32](1) },
			[]string{"expectedResponses counts the datagrams a backend answers with: it is for streams on UDP ports"}},
		{"two streams without names on a port", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.Streams = append(o.Spec.Config.Streams, v1beta1.Stream{Port: "db", Backends: []v1beta1.Backend{{Service: "db", Port: 5433}}})
		}, []string{"a port can have only one stream without serverNames"}},
		{"a stream without names beside servers", func(o *v1beta1.NginxOperator) { stream(o, 0).ServerNames = nil },
			[]string{"a stream without serverNames takes every connection of its port: it cannot share the port with servers"}},
		{"a plain-text server beside streams", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.Servers = append(o.Spec.Config.Servers, v1beta1.Server{Port: "db", ServerNames: []string{"x.example.com"}})
			stream(o, 1).ServerNames = []string{"db.example.com"}
		}, []string{"servers that share a port with streams must use TLS"}},
		{"a name two streams of a port take", func(o *v1beta1.NginxOperator) {
			o.Spec.Config.Streams = append(o.Spec.Config.Streams, v1beta1.Stream{Port: "https", ServerNames: []string{"db.example.com"}, Backends: []v1beta1.Backend{{Service: "db2", Port: 5432}}})
		}, []string{"spec.config.streams[3].serverNames[0]", "already spec.config.streams[0].serverNames[0]'s"}},
		{"a name a stream and a server of a port take", func(o *v1beta1.NginxOperator) { stream(o, 0).ServerNames = []string{"www.example.com"} },
			[]string{"spec.config.servers[1].serverNames[0]", "its connections go to the stream, never to this server"}},
		{"a catch-all name", func(o *v1beta1.NginxOperator) { stream(o, 0).ServerNames = []string{"_"} },
			[]string{"spec.config.streams[0].serverNames[0]", "should match"}},
		{"an unknown balancing method", func(o *v1beta1.NginxOperator) { stream(o, 1).LoadBalancingMethod = "ip_hash" },
			[]string{"spec.config.streams[1].loadBalancingMethod", "Unsupported value"}},
		{"a connect timeout beyond the kernel's", func(o *v1beta1.NginxOperator) { stream(o, 1).ConnectTimeoutSeconds = 76 },
			[]string{"spec.config.streams[1].connectTimeoutSeconds"}},
		{"an idle timeout over a day", func(o *v1beta1.NginxOperator) { stream(o, 1).IdleTimeoutSeconds = 86401 },
			[]string{"spec.config.streams[1].idleTimeoutSeconds"}},
		{"the PROXY protocol from TLS terminated behind the router", func(o *v1beta1.NginxOperator) {
			*stream(o, 0) = v1beta1.Stream{Port: "https", ServerNames: []string{"mq.example.com"}, TLS: &v1beta1.StreamTLS{SecretName: "mq"}, ProxyProtocol: true,
				Backends: []v1beta1.Backend{{Service: "mq", Port: 5672}}}
		}, []string{"proxyProtocol cannot be combined with tls and serverNames"}},
		{"h2c on a UDP port", func(o *v1beta1.NginxOperator) { o.Spec.Ports[3].H2C = true }, []string{"h2c is HTTP/2 over TCP"}},
		{"two UDP ports on one number", func(o *v1beta1.NginxOperator) {
			o.Spec.Ports = append(o.Spec.Ports, v1beta1.Port{Name: "dns2", ContainerPort: 5353, Protocol: corev1.ProtocolUDP})
		}, []string{"containerPort values must be unique among the ports of one protocol"}},
		{"a first UDP port for the default server", func(o *v1beta1.NginxOperator) {
			o.Spec.Config = v1beta1.NginxConfig{}
			o.Spec.Ports = []v1beta1.Port{{Name: "dns", ContainerPort: 5353, Protocol: corev1.ProtocolUDP}}
		}, []string{"without servers or streams, nginx's default HTTP server listens on the first port: it must be a TCP port"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, withStreams(tc.mutate), tc.want...) })
	}
}

// What the refusals above leave: a valid instance of streams is admitted
// with the defaults the docs promise, and a TCP and a UDP port may share a
// number, as DNS's 53 does.
func TestStreamsDefaultToTheDocumentedTimeouts(t *testing.T) {
	obj := valid()
	withStreams(func(o *v1beta1.NginxOperator) {
		o.Spec.Ports = append(o.Spec.Ports, v1beta1.Port{Name: "dns-tcp", ContainerPort: 5353, ServicePort: 53},
			v1beta1.Port{Name: "dns-udp", ContainerPort: 5354, ServicePort: 53, Protocol: corev1.ProtocolUDP})
	})(obj)
	out, errs := validation.NginxOperator(context.Background(), obj)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := v1beta1.Stream{Port: "db", Backends: []v1beta1.Backend{{Service: "db", Port: 5432, Weight: ptr.To[int32](1)}},
		ConnectTimeoutSeconds: 5, IdleTimeoutSeconds: 600}
	if diff := cmp.Diff(want, out.Spec.Config.Streams[1]); diff != "" {
		t.Errorf("a stream's defaults (-want +got):\n%s", diff)
	}
	if got := out.Spec.Ports[1].Protocol; got != corev1.ProtocolTCP {
		t.Errorf("a port's protocol defaults to %q, want TCP", got)
	}
}
