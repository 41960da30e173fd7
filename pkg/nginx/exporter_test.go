package nginx

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
)

// TestMetricsAddExporterSidecarAndServicePortOnlyWhenEnabled: with
// spec.metrics.enabled the pod gets the exporter (operator's image, scraping
// loopback stub_status, port "metrics", restricted) and the client Service
// exposes "metrics"; without it neither exists.
func TestMetricsAddExporterSidecarAndServicePortOnlyWhenEnabled(t *testing.T) {
	in := Inputs{Image: "nginx:1.27", ExporterImage: "exporter:1.4", ConfigHash: "abc"}

	off := testInstance("web")
	if pod := StatefulSet(off, in).Spec.Template.Spec; len(pod.Containers) != 1 {
		t.Errorf("metrics off: %d containers, want only nginx", len(pod.Containers))
	}
	for _, p := range Service(off).Spec.Ports {
		if p.Name == MetricsPortName {
			t.Error("metrics off: the Service exposes the metrics port")
		}
	}
	for _, p := range HeadlessService(off).Spec.Ports {
		if p.Name == MetricsPortName {
			t.Error("the headless Service exposes the metrics port")
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
	if len(exp.Ports) != 1 || exp.Ports[0].Name != "metrics" || exp.Ports[0].ContainerPort != v1beta1.ExporterPort {
		t.Errorf("exporter ports %+v", exp.Ports)
	}
	sc := exp.SecurityContext
	if sc == nil || ptr.Deref(sc.AllowPrivilegeEscalation, true) || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) || !ptr.Deref(sc.RunAsNonRoot, false) {
		t.Errorf("exporter security context %+v is not restricted", sc)
	}
	found := false
	for _, p := range Service(on).Spec.Ports {
		if p.Name == MetricsPortName && p.Port == v1beta1.ExporterPort && p.TargetPort.StrVal == MetricsPortName {
			found = true
		}
	}
	if !found {
		t.Errorf("metrics on: Service ports %+v lack metrics", Service(on).Spec.Ports)
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
	if _, err := Render(&validationtest.NginxOperator(t, obj).Spec, RenderOptions{Paths: PodPaths()}); err != nil {
		t.Errorf("a port named metrics without metrics enabled: %v", err)
	}
}
