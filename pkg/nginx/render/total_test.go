package render

import (
	"fmt"
	"math/rand"
	"testing"

	"sigs.k8s.io/randfill"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// FuzzRenderIsTotal feeds the renderer specs no validation has seen, filled
// at random from the fuzz input (nil pointers, empty and missing fields,
// any string and number), with any resolution of their Services: Config
// may refuse them, but never panics. The Gateway API translator builds
// specs no CRD schema checked; a panic there would stop every instance's
// reconciles, not just the one at fault.
func FuzzRenderIsTotal(f *testing.F) {
	for _, seed := range []string{"", "\x00", "\xff\xff\xff\xff", "redirect path rewrite hash", "0123456789abcdefghijklmnopqrstuvwxyz"} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		renderRandom(t, randfill.NewFromGoFuzz(data))
	})
}

// TestRenderIsTotalOnUnvalidatedSpecs runs FuzzRenderIsTotal's property on
// a few thousand random specs in every test run, so that a renderer that
// dereferences what only validation promises fails without a fuzzing run.
// Each spec is also checked to reach the renderer's parts (servers with
// locations), so the property is not vacuous.
func TestRenderIsTotalOnUnvalidatedSpecs(t *testing.T) {
	const specs = 3000
	located := 0
	for i := range specs {
		fill := randfill.New().NilChance(0.3).NumElements(0, 3).RandSource(rand.NewSource(int64(i)))
		if renderRandom(t, fill) {
			located++
		}
	}
	if located < specs/10 {
		t.Fatalf("only %d of %d random specs had a location: the property was checked on too little", located, specs)
	}
}

// renderRandom renders a spec and Services filled by fill, failing t on a
// panic, and tells whether the spec had a location.
func renderRandom(t *testing.T, fill *randfill.Filler) (located bool) {
	var spec v1beta1.NginxOperatorSpec
	var services map[string]Service
	fill.Fill(&spec)
	fill.Fill(&services)
	for _, s := range spec.Config.Servers {
		located = located || len(s.Locations) > 0
	}
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("the renderer panicked: %v\nspec: %s", p, fmt.Sprintf("%+v", spec))
		}
	}()
	_, _ = Config(&spec, Options{Paths: PodPaths(), Namespace: "team-a", Services: services})
	return located
}
