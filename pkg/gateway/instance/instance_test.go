package instance

import (
	"math/rand"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/randfill"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// Every setting of NginxGatewayParameters reaches the instance's spec
// field of the same name (config: the settings beside the servers), as
// the parameters state it.
func TestEveryParameterReachesTheInstance(t *testing.T) {
	for seed := range 20 {
		var p v1beta1.NginxGatewayParametersSpec
		randfill.New().NilChance(0).NumElements(1, 2).RandSource(rand.NewSource(int64(seed))).Fill(&p)
		spec := v1beta1.NginxOperatorSpec{Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http"}}}}
		applyParameters(&spec, &p)
		params, inst := reflect.ValueOf(p), reflect.ValueOf(spec)
		for i := range params.NumField() {
			name := params.Type().Field(i).Name
			got := inst.FieldByName(name)
			if name == "Config" {
				got = inst.FieldByName("Config").FieldByName("NginxSettings")
			}
			if !got.IsValid() {
				t.Fatalf("the instance's spec has no field %s", name)
			}
			want := params.Field(i)
			if want.Kind() == reflect.Pointer && got.Kind() != reflect.Pointer {
				want = want.Elem()
			}
			if !equality.Semantic.DeepEqual(want.Interface(), got.Interface()) {
				t.Errorf("seed %d: %s is %+v in the parameters, %+v in the instance", seed, name, want.Interface(), got.Interface())
			}
		}
		if len(spec.Config.Servers) != 1 {
			t.Errorf("seed %d: parameters changed the servers: %+v", seed, spec.Config.Servers)
		}
	}
}

// A Gateway's parameters replace its class's field by field, whole: what
// the Gateway's leave unset stays the class's.
func TestAGatewaysParametersReplaceItsClassesFieldByField(t *testing.T) {
	class := &v1beta1.NginxGatewayParametersSpec{
		Replicas: ptr.To[int32](3), Image: "registry.example/nginx:1.27",
		Pod:    &v1beta1.PodSettings{NodeSelector: map[string]string{"pool": "edge"}, PriorityClassName: "high"},
		Config: &v1beta1.NginxSettings{ClientMaxBodySize: "8m"},
	}
	gw := &v1beta1.NginxGatewayParametersSpec{
		Replicas: ptr.To[int32](2),
		Pod:      &v1beta1.PodSettings{NodeSelector: map[string]string{"pool": "team-a"}},
		Service:  &v1beta1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
	}
	want := &v1beta1.NginxGatewayParametersSpec{
		Replicas: ptr.To[int32](2), Image: "registry.example/nginx:1.27",
		Pod:     &v1beta1.PodSettings{NodeSelector: map[string]string{"pool": "team-a"}},
		Config:  &v1beta1.NginxSettings{ClientMaxBodySize: "8m"},
		Service: &v1beta1.ServiceSpec{Type: corev1.ServiceTypeLoadBalancer},
	}
	if diff := cmp.Diff(want, Overlaid(Overlaid(nil, class), gw)); diff != "" {
		t.Errorf("the Gateway's over the class's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(class, Overlaid(nil, class)); diff != "" {
		t.Errorf("the class's alone (-want +got):\n%s", diff)
	}
	if class.Replicas == nil || *class.Replicas != 3 {
		t.Error("overlaying changed the class's parameters")
	}
}
