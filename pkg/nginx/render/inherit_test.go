package render

import (
	stdcmp "cmp"
	"context"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/randfill"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
)

// TestInheritingChangesNoLocationsSettings holds inheritShared to its
// promise: every block that passes requests on applies the same value of
// every inheritable directive, whether the locations state it or inherit
// it, for the golden specs, a Gateway's shape with many routes, and the
// valid specs the fuzz tables make. It also checks the saving is real
// where locations share settings.
func TestInheritingChangesNoLocationsSettings(t *testing.T) {
	check := func(t *testing.T, spec *v1beta1.NginxOperatorSpec, opts Options) (before, after int) {
		t.Helper()
		r := &renderer{opts: opts.withDefaults()}
		stated := r.main(spec)
		inherited := inheritShared(stated)
		want, got := applied(stated), applied(inherited)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("a block applies other settings once they are inherited (-stated +inherited):\n%s", diff)
		}
		b, err := conf.Render(stated)
		if err != nil {
			t.Fatal(err)
		}
		a, err := conf.Render(inherited)
		if err != nil {
			t.Fatal(err)
		}
		return len(b), len(a)
	}
	for name, spec := range specs {
		t.Run(name, func(t *testing.T) { check(t, validationtest.Spec(t, spec), Options{Paths: PodPaths()}) })
	}
	t.Run("a Gateway's routes", func(t *testing.T) {
		spec, opts := manyRoutes(t, 60)
		before, after := check(t, spec, opts)
		t.Logf("60 routes to one Service: %d bytes stated in every location, %d inherited", before, after)
		if after > before/4 {
			t.Errorf("60 routes to one Service: %d bytes with the settings inherited and the upstream shared, want at most a quarter of %d", after, before)
		}
	})
	t.Run("valid specs of the fuzz tables", func(t *testing.T) {
		rng := rand.New(rand.NewSource(7))
		checked := 0
		for range 400 {
			data := make([]byte, 8+rng.Intn(256))
			rng.Read(data)
			admitted, errs := validation.NginxOperator(context.Background(), specFromFuzz(randfill.NewFromGoFuzz(data)))
			if len(errs) > 0 {
				continue
			}
			check(t, &admitted.Spec, Options{Paths: PodPaths(), Namespace: "team-a", Services: localEndpoints(&admitted.Spec)})
			checked++
		}
		if checked < 80 {
			t.Fatalf("only %d valid specs checked", checked)
		}
	})
}

// manyRoutes is a Gateway's instance with n path routes to one Service of
// ten endpoints, as the translator builds it.
func manyRoutes(t testing.TB, n int) (*v1beta1.NginxOperatorSpec, Options) {
	var locations []v1beta1.Location
	for i := range n {
		locations = append(locations, v1beta1.Location{Path: "/route-" + strconv.Itoa(i), PathType: v1beta1.PathPrefixElements,
			Proxy: &v1beta1.ProxyLocation{Backends: []v1beta1.Backend{{Service: "echo", Port: 8080, Weight: ptr.To[int32](1)}}}})
	}
	locations = append(locations, v1beta1.Location{Path: "/", PathType: v1beta1.PathPrefixElements, Respond: &v1beta1.RespondLocation{Status: 404}})
	spec := validationtest.Spec(t, v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{{Port: "http", DefaultServer: true, Locations: locations}}}})
	var endpoints []string
	for i := range 10 {
		endpoints = append(endpoints, fmt.Sprintf("10.244.0.%d:8080", i))
	}
	return spec, Options{Paths: PodPaths(), Namespace: "team-a", Services: map[string]Service{
		ServiceKey("", "echo"): {Address: "10.96.0.1", AtEndpoints: true, Endpoints: map[int32][]string{8080: endpoints}},
	}}
}

// applied is, for every block below http that passes requests on, the
// value of each inheritable directive of its module it applies: its own,
// or the nearest enclosing block's (nginx's inheritance), or "default".
func applied(main []conf.Directive) map[string]string {
	out := map[string]string{}
	var walk func(path string, ds []conf.Directive, enclosing map[string]string)
	walk = func(path string, ds []conf.Directive, enclosing map[string]string) {
		here := map[string]string{}
		for _, name := range inheritable {
			here[name] = enclosing[name]
			if value := named(ds, name); len(value) > 0 {
				here[name] = directivesKey(value)
			}
		}
		for _, name := range inheritable {
			if len(named(ds, passOf(name))) > 0 {
				out[path+" "+name] = stdcmp.Or(here[name], "default")
			}
		}
		blocks := 0 // numbered among the blocks: inheriting adds simple directives only
		for _, d := range ds {
			if d.Block != nil {
				walk(path+"/"+strconv.Itoa(blocks)+":"+d.Name+" "+strings.Join(d.Args, " "), d.Block, here)
				blocks++
			}
		}
	}
	walk("", main, map[string]string{})
	return out
}

// TestInheritingStatesOnlyWhatNoBlockWouldPickUpUnasked covers the cases
// the renderer does not make today but inheritShared must still get
// right: a block that passes requests on without stating the directive
// (it would inherit the shared value instead of nginx's default), a server
// that states it (its locations inherit from the server, not from http),
// and a value only one location has.
func TestInheritingStatesOnlyWhatNoBlockWouldPickUpUnasked(t *testing.T) {
	timeout := conf.D("proxy_read_timeout", "60s")
	proxy := func(extra ...conf.Directive) conf.Directive {
		return conf.B("location", []string{"/"}, append([]conf.Directive{conf.D("proxy_pass", "http://a")}, extra...)...)
	}
	main := func(servers ...conf.Directive) []conf.Directive {
		return []conf.Directive{conf.B("http", nil, append([]conf.Directive{conf.D("sendfile", "on")}, servers...)...)}
	}
	for _, tc := range []struct {
		name    string
		main    []conf.Directive
		inherit bool
	}{
		{"two locations alike", main(conf.B("server", nil, proxy(timeout), proxy(timeout))), true},
		{"across servers", main(conf.B("server", nil, proxy(timeout)), conf.B("server", nil, proxy(timeout))), true},
		{"a location that passes without it", main(conf.B("server", nil, proxy(timeout), proxy(timeout), proxy())), false},
		{"a nested block that passes without it", main(conf.B("server", nil, proxy(timeout),
			conf.B("location", []string{"/a"}, conf.B("if", []string{"($x)"}, conf.D("proxy_pass", "http://a"))))), false},
		{"inside a location that states it", main(conf.B("server", nil, proxy(timeout),
			conf.B("location", []string{"/a"}, timeout, conf.B("if", []string{"($x)"}, conf.D("proxy_pass", "http://a"))))), true},
		{"a server that states it", main(conf.B("server", nil, conf.D("proxy_read_timeout", "5s"), proxy(timeout), proxy(timeout))), false},
		{"one location", main(conf.B("server", nil, proxy(timeout), proxy(conf.D("proxy_read_timeout", "5s")))), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := inheritShared(tc.main)
			if diff := cmp.Diff(applied(tc.main), applied(got)); diff != "" {
				t.Fatalf("a block applies other settings (-before +after):\n%s", diff)
			}
			if inherited := len(named(got[0].Block, "proxy_read_timeout")) > 0; inherited != tc.inherit {
				t.Errorf("proxy_read_timeout stated in http: %v, want %v", inherited, tc.inherit)
			}
		})
	}
}
