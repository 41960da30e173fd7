package nginx

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/serviceport"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
)

// TestMetricsAddExporterSidecarAndServicePortsOnlyWhenEnabled: with
// spec.metrics.enabled the pod gets the exporter (operator's image, scraping
// loopback stub_status, port "metrics", restricted) and the client Service
// exposes "metrics" and the reloader's "reloader", the two ports an
// NginxMonitor scrapes; without it the Service exposes neither (the reloader
// runs in every pod, but only instances that opted into metrics publish
// it). The headless Service never exposes them.
func TestMetricsAddExporterSidecarAndServicePortsOnlyWhenEnabled(t *testing.T) {
	in := Materials{Image: "nginx:1.27", ExporterImage: "exporter:1.4", ConfigHash: "abc"}
	monitoringPorts := map[string]bool{layout.MetricsPortName: true, layout.ReloaderPortName: true}

	off := testInstance("web")
	if pod := StatefulSet(off, in).Spec.Template.Spec; len(pod.Containers) != 1 {
		t.Errorf("metrics off: %d containers, want only nginx", len(pod.Containers))
	}
	for _, p := range Service(off, serviceport.Resolve(&off.Spec, serviceport.Standard)).Spec.Ports {
		if monitoringPorts[p.Name] || p.Port == layout.ReloaderPort || p.Port == layout.ExporterPort {
			t.Errorf("metrics off: the Service exposes %s (%d)", p.Name, p.Port)
		}
	}

	on := testInstance("web")
	on.Spec.Metrics.Enabled = true
	on.Spec.ImagePullPolicy = "IfNotPresent"
	pod := StatefulSet(on, in).Spec.Template.Spec
	if len(pod.Containers) != 2 || pod.Containers[1].Name != "exporter" {
		t.Fatalf("metrics on: containers %v, want nginx and exporter", pod.Containers)
	}
	exp := pod.Containers[1]
	if exp.Image != "exporter:1.4" || exp.ImagePullPolicy != "IfNotPresent" {
		t.Errorf("exporter image %q pull policy %q", exp.Image, exp.ImagePullPolicy)
	}
	if args := strings.Join(exp.Args, " "); !strings.Contains(args, "--nginx.scrape-uri=http://127.0.0.1:18081/stub_status") || !strings.Contains(args, "--web.listen-address=:9113") {
		t.Errorf("exporter args %q", args)
	}
	if len(exp.Ports) != 1 || exp.Ports[0].Name != "metrics" || exp.Ports[0].ContainerPort != layout.ExporterPort {
		t.Errorf("exporter ports %+v", exp.Ports)
	}
	sc := exp.SecurityContext
	if sc == nil || ptr.Deref(sc.AllowPrivilegeEscalation, true) || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) || !ptr.Deref(sc.RunAsNonRoot, false) {
		t.Errorf("exporter security context %+v is not restricted", sc)
	}
	want := []corev1.ServicePort{
		{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP},
		{Name: "metrics", Port: 9113, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP},
		{Name: "reloader", Port: 18082, TargetPort: intstr.FromString("reloader"), Protocol: corev1.ProtocolTCP},
	}
	if diff := cmp.Diff(want, Service(on, serviceport.Resolve(&on.Spec, serviceport.Standard)).Spec.Ports); diff != "" {
		t.Errorf("metrics on: client Service ports (-want +got):\n%s", diff)
	}
	// Each Service port's target is a port some container of the pod
	// declares under the Service port's name.
	declared := map[string]bool{}
	for _, c := range pod.Containers {
		for _, p := range c.Ports {
			declared[p.Name] = true
		}
	}
	for _, p := range Service(on, serviceport.Resolve(&on.Spec, serviceport.Standard)).Spec.Ports {
		if !declared[p.TargetPort.StrVal] || p.TargetPort.StrVal != p.Name {
			t.Errorf("Service port %s targets %q, which the pod does not declare (declared: %v)", p.Name, p.TargetPort.StrVal, declared)
		}
	}
	for _, inst := range []*v1beta1.NginxOperator{off, on} {
		for _, p := range HeadlessService(inst).Spec.Ports {
			if monitoringPorts[p.Name] {
				t.Errorf("metrics %v: the headless Service exposes %s", inst.Spec.Metrics.Enabled, p.Name)
			}
		}
	}
}

func TestPortNamedMetricsIsRefusedWhenMetricsAreEnabled(t *testing.T) {
	obj := &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"},
		Spec:       v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "metrics", ContainerPort: 8080}}, Metrics: v1beta1.MetricsSpec{Enabled: true}},
	}
	if _, errs := validation.NginxOperator(context.Background(), obj); !strings.Contains(errs.ToAggregate().Error(), "the port name metrics is the exporter's") {
		t.Errorf("validation: %v, want an error about the port name", errs)
	}
	obj.Spec.Metrics.Enabled = false
	if _, err := render.Config(&validationtest.NginxOperator(t, obj).Spec, render.Options{Paths: render.PodPaths()}); err != nil {
		t.Errorf("a port named metrics without metrics enabled: %v", err)
	}
}
