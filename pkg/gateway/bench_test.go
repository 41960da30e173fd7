package gateway

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// BenchmarkARouteChangeAtAThousandRoutes is the operator's CPU work for one
// route change of a Gateway with 1,000 routes (a path each, or a hostname
// each), stage by stage: the translation (which checks each location,
// its verdict kept from the change before), the check of the rest of the
// instance its routes make (checkInstance's), and
// nginx.conf's rendering. The controllers' reads and writes come on top.
func BenchmarkARouteChangeAtAThousandRoutes(b *testing.B) {
	for _, shape := range []string{"paths", "hostnames"} {
		listener := httpListener("http", 80, "")
		if shape == "hostnames" {
			listener = httpListener("http", 80, "*.example.com")
		}
		in := graph.Inputs{Gateway: gateway(listener), Services: services("web")}
		for i := range 1000 {
			var hosts []string
			rule := gatewayv1.HTTPRouteRule{BackendRefs: toService("web")}
			if shape == "hostnames" {
				hosts = []string{fmt.Sprintf("r%d.example.com", i)}
			} else {
				rule.Matches = prefix(fmt.Sprintf("/r%04d", i))
			}
			in.HTTPRoutes = append(in.HTTPRoutes, httpRoute(fmt.Sprintf("r%04d", i), i, hosts, rule))
		}
		ctx := context.Background()
		instance := func(tr Translation) *v1beta1.NginxOperator {
			return &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web-gateway", Namespace: ns}, Spec: tr.Spec}
		}
		tr := Translate(b.Context(), in)
		admitted, errs := validation.RoutedNginxOperatorOfCheckedLocations(ctx, instance(tr)) // the verdicts of the change before
		if len(errs) > 0 {
			b.Fatal(errs.ToAggregate())
		}
		opts := render.Options{Paths: render.PodPaths(), Namespace: ns}
		b.Run(shape+"/translate", func(b *testing.B) {
			for b.Loop() {
				tr = Translate(b.Context(), in)
			}
		})
		b.Run(shape+"/check", func(b *testing.B) {
			for b.Loop() {
				admitted, _ = validation.RoutedNginxOperatorOfCheckedLocations(ctx, instance(tr))
			}
		})
		b.Run(shape+"/render", func(b *testing.B) {
			for b.Loop() {
				if _, err := render.Config(&admitted.Spec, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
