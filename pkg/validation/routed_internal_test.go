package validation

import (
	"context"
	"math/rand"
	"slices"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/randfill"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// TestCheckingPartsApartGivesTheWholeVerdict holds RoutedNginxOperator,
// which checks each server and location apart and the rest with
// stand-ins, to the
// verdict of checking the instance whole (the controller's schema, the Go
// rules): the same errors at the same paths, and the same defaulted
// instance, for instances whose servers and locations are filled at
// random (most of them break some rule, at every level) and for the
// valid one they start from. It runs each twice, the second time from the
// kept verdicts.
func TestCheckingPartsApartGivesTheWholeVerdict(t *testing.T) {
	ctx := context.Background()
	whole := func(obj *v1beta1.NginxOperator) (*v1beta1.NginxOperator, field.ErrorList) {
		return wholeNginxOperator(ctx, obj)
	}
	messages := func(errs field.ErrorList) []string {
		var out []string
		for _, e := range errs {
			out = append(out, e.Error())
		}
		slices.Sort(out)
		return out
	}
	refused, locatedChecked, locatedRefused := 0, 0, 0
	instances := 300
	if testing.Short() {
		instances = 60 // the unit tier keeps to its minute; the integration tier checks all
	}
	for i := range instances {
		obj := randomRouted(rand.New(rand.NewSource(int64(i))))
		wantOut, wantErrs := whole(obj.DeepCopy())
		for round := range 2 {
			gotOut, gotErrs := RoutedNginxOperator(ctx, obj.DeepCopy())
			if diff := cmp.Diff(messages(wantErrs), messages(gotErrs)); diff != "" {
				t.Fatalf("instance %d, round %d: other errors than the whole check's (-whole +apart):\n%s", i, round, diff)
			}
			if diff := cmp.Diff(wantOut, gotOut); diff != "" {
				t.Fatalf("instance %d, round %d: another defaulted instance than the whole check's (-whole +apart):\n%s", i, round, diff)
			}
		}
		// Locations checked one at a time (the Gateway's graph does, as
		// it makes them) are taken as they are: the rest of the check
		// gives the whole check's verdict, the servers' errors included.
		if located, ok := withCheckedLocations(ctx, obj); ok {
			locatedChecked++
			gotOut, gotErrs := RoutedNginxOperatorOfCheckedLocations(ctx, located)
			if diff := cmp.Diff(messages(wantErrs), messages(gotErrs)); diff != "" {
				t.Fatalf("instance %d of checked locations: other errors than the whole check's (-whole +apart):\n%s", i, diff)
			}
			if diff := cmp.Diff(wantOut, gotOut); diff != "" {
				t.Fatalf("instance %d of checked locations: another defaulted instance than the whole check's (-whole +apart):\n%s", i, diff)
			}
			if len(wantErrs) > 0 {
				locatedRefused++
			}
		}
		if len(wantErrs) > 0 {
			refused++
			continue
		}
		// Servers checked once keep their verdict: only how they fit the
		// rest of the instance is checked again, as the whole check does.
		again, errs := RoutedNginxOperatorOfCheckedServers(ctx, wantOut.DeepCopy())
		if diff := cmp.Diff(wantOut, again); len(errs) > 0 || diff != "" {
			t.Fatalf("instance %d: its checked servers checked again: %v (-before +after):\n%s", i, errs, diff)
		}
		portless := wantOut.DeepCopy()
		portless.Spec.Ports = portless.Spec.Ports[1:]
		_, wholeErrs := whole(portless.DeepCopy())
		if _, errs := RoutedNginxOperatorOfCheckedServers(ctx, portless); len(wholeErrs) == 0 || !slices.Equal(messages(wholeErrs), messages(errs)) {
			t.Fatalf("instance %d without port http: checked servers give %v, the whole check %v", i, messages(errs), messages(wholeErrs))
		}
	}
	if refused < instances/4 || refused > instances*9/10 {
		t.Errorf("%d of %d random instances refused: the corpus should hold both kinds plenty", refused, instances)
	}
	if locatedChecked < instances/4 || locatedRefused < instances/20 {
		t.Errorf("%d of %d random instances had only valid locations, %d of them refused for something else: too few to hold RoutedNginxOperatorOfCheckedLocations",
			locatedChecked, instances, locatedRefused)
	}
}

// withCheckedLocations is obj with each location as RoutedLocation
// returns it, and whether every one passed.
func withCheckedLocations(ctx context.Context, obj *v1beta1.NginxOperator) (*v1beta1.NginxOperator, bool) {
	out := obj.DeepCopy()
	for i := range out.Spec.Config.Servers {
		for j, l := range out.Spec.Config.Servers[i].Locations {
			checked, errs := RoutedLocation(ctx, l)
			if len(errs) > 0 {
				return nil, false
			}
			out.Spec.Config.Servers[i].Locations[j] = checked
		}
	}
	return out, true
}

// randomRouted is a valid instance of three servers with locations, with
// a few of its servers' and locations' fields filled at random.
func randomRouted(rng *rand.Rand) *v1beta1.NginxOperator {
	fill := randfill.New().NilChance(0.5).NumElements(0, 2).RandSource(rng)
	proxy := func(path string) v1beta1.Location {
		return v1beta1.Location{Path: path, PathType: v1beta1.PathPrefixElements,
			Proxy: &v1beta1.ProxyLocation{Backends: []v1beta1.Backend{{Service: "echo", Port: 8080, Weight: ptr.To[int32](1)}}}}
	}
	obj := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "web-gateway", Namespace: "team-a"},
		Spec: v1beta1.NginxOperatorSpec{Ports: []v1beta1.Port{{Name: "http", ContainerPort: 8080, H2C: rng.Intn(4) == 0}, {Name: "https", ContainerPort: 8443}}}}
	for i := range 3 {
		s := v1beta1.Server{Port: "http", ServerNames: []string{"s" + strconv.Itoa(i) + ".example.com"}}
		for j := range 3 {
			s.Locations = append(s.Locations, proxy("/r"+strconv.Itoa(j)))
		}
		obj.Spec.Config.Servers = append(obj.Spec.Config.Servers, s)
	}
	for range 1 + rng.Intn(3) {
		s := &obj.Spec.Config.Servers[rng.Intn(3)]
		switch rng.Intn(9) {
		case 0:
			fill.Fill(&s.TLS)
		case 1:
			fill.Fill(&s.RedirectToHTTPS)
		case 2:
			s.DefaultServer = true
		case 3:
			s.Port = []string{"https", "http", "none"}[rng.Intn(3)]
		case 5:
			s.TLS = &v1beta1.TLS{SecretName: "web-tls"}
		case 4:
			s.Locations = nil
		default:
			if len(s.Locations) == 0 {
				continue
			}
			l := &s.Locations[rng.Intn(len(s.Locations))]
			switch rng.Intn(6) {
			case 0:
				fill.Fill(l)
			case 1:
				fill.Fill(&l.Proxy)
			case 2:
				fill.Fill(&l.Match)
			case 3:
				fill.Fill(&l.RequestHeaders)
			case 4:
				fill.Fill(&l.Redirect)
			default:
				l.Path = s.Locations[0].Path
			}
		}
	}
	return obj
}
