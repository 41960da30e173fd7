package hostile

// A corpus of hostile NginxOperator specs, each written as v1beta1 and as
// v1alpha1 (the hostile spec riding in the v1beta1-spec annotation, or in
// v1alpha1's own port, replicas and forceRedeploy), and followed as far as it
// gets: admission, the stored object, the renderer, the real `nginx -t`, and
// the directive tree nginx reads back. Admission is judged in process for
// every send (the shipped CRD and the conversion webhook's own handler) and
// by the real apiserver for a covering sample, which must agree.

import (
	"github.com/nginx-operator/nginx-operator/test/hostile/hostiletest"

	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/tools"

	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

const (
	minCases     = 300
	apiWorkers   = 4 // concurrent create/get/dry-run sequences
	nginxWorkers = 2 // concurrent `nginx -t`
)

// TestHostileSpecsAreRefusedOrRenderOnlyTheirIntendedDirectivesThroughBothVersions
// proves that no spec, whichever API version it is written through, gets a
// user value into nginx.conf as anything but the argument it was meant to be.
// Every send must end in one of:
//
//	a) refused by the apiserver (schema, CEL or the conversion webhook);
//	b) stored, and refused by the controller's validation or nginx.Render
//	   (the controller's InvalidConfig);
//	c) stored and rendered, and the real `nginx -t` (run as an unprivileged
//	   user, as in the pod) accepts the file, which parses back to exactly the
//	   tree render.Directives built, and means what the fields say: locations
//	   are plain URI prefixes or exact URIs, no user value expands nginx
//	   variables, redirects are redirects, servers listen on unprivileged
//	   ports the operator does not reserve.
//
// And a spec stored through v1alpha1 must be one the apiserver accepts as
// v1beta1 (a create of the stored spec): otherwise the v1alpha1 endpoint
// bypassed the v1beta1 schema and CEL rules.
//
// The apiserver's part of a send (a, the stored spec, and the re-check) is
// the in-process model's for every send, and the real apiserver's as well
// for the covering sample (coveringSample: every field's every verdict
// through both versions, and every 64th case): a send on which the two
// disagree fails the test, so the model cannot drift from the apiserver
// unseen. All of the sends through the apiserver took 14 minutes beside the
// other packages of make test, and more than the guard once the corpus grew.
func TestHostileSpecsAreRefusedOrRenderOnlyTheirIntendedDirectivesThroughBothVersions(t *testing.T) {
	nginxBin := tools.Nginx(t)
	cfg := env.Cluster(t).Config
	inprocess.InstallCRDs(t, cfg)
	ns, _ := env.Namespace(t)
	port, err := tools.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	e := inprocess.StartWebhook(t, cfg, ns, port, inprocess.Logger())
	start := time.Now()

	cases := corpus(t)
	if len(cases) < minCases {
		t.Fatalf("the corpus has %d distinct cases, want at least %d", len(cases), minCases)
	}
	// Not env: that is the control plane (main_test.go).
	ngx := newNginxEnv(t, e.Namespace)
	nginxBin = ngx.nginxFor(nginxBin)

	// 1. Admission, read-back and the v1alpha1 path's re-check, for every
	// send in process (the shipped CRD and the real conversion webhook's
	// handler), and for a covering sample through the real apiserver too:
	// where the two disagree, the model is wrong and the test fails.
	var sends []*send
	for _, c := range cases {
		sends = append(sends, &send{c: c, path: pathBeta}, &send{c: c, path: pathAlpha})
	}
	a, err := newAdmission()
	if err != nil {
		t.Fatal(err)
	}
	hostiletest.InParallel(nginxWorkers, len(sends), func(i int) { ngx.admitInProcess(context.Background(), a, sends[i]) })
	inProcessDone := time.Now()
	// A guard against a hung apiserver, not a bound on speed.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	sample := coveringSample(sends)
	t.Logf("%d sends admitted in process in %v (v1beta1: %d objects validated, %d verdicts reused; v1alpha1: %d and %d); %d of them go to the apiserver too",
		len(sends), inProcessDone.Sub(start).Round(time.Millisecond), a.beta.validated.Load(), a.beta.reused.Load(), a.alpha.validated.Load(), a.alpha.reused.Load(), len(sample))
	differ := map[int]string{}
	var mu sync.Mutex
	hostiletest.InParallel(apiWorkers, len(sample), func(j int) {
		i := sample[j]
		through := &send{c: sends[i].c, path: sends[i].path}
		ngx.admitThroughAPIServer(ctx, e.Admin, through)
		if d := disagreement(sends[i], through); d != "" {
			mu.Lock()
			differ[i] = d
			mu.Unlock()
		}
	})
	apiDone := time.Now()
	t.Logf("the apiserver judged the sample in %v", apiDone.Sub(inProcessDone).Round(time.Millisecond))
	if len(differ) > 0 {
		t.Errorf("the in-process admission and the apiserver disagree on %d of the %d sampled sends:\n%s", len(differ), len(sample), disagreementTable(sends, differ))
	}

	// 2. The controller's build: decoding, validation, rendering and the
	// children's dry-runs.
	hostiletest.InParallel(apiWorkers, len(sends), func(i int) { ngx.build(ctx, e.Admin, sends[i]) })
	buildDone := time.Now()

	// 3. The real nginx, once per distinct rendered file.
	byConfig := map[string][]*send{}
	var configs []string
	for _, s := range sends {
		if s.config == nil {
			continue
		}
		k := string(s.config)
		if _, ok := byConfig[k]; !ok {
			configs = append(configs, k)
		}
		byConfig[k] = append(byConfig[k], s)
	}
	hostiletest.InParallel(nginxWorkers, len(configs), func(i int) {
		said := ngx.nginxTest(nginxBin, []byte(configs[i]))
		for _, s := range byConfig[configs[i]] {
			s.nginxSaid, s.nginxRan = said, true
		}
	})
	t.Logf("%d cases, %d sends: admission in process %v, %d of them through the apiserver too %v; build of %d distinct stored specs (%d distinct children dry-run) %v; nginx -t on %d distinct files %v",
		len(cases), len(sends), inProcessDone.Sub(start).Round(time.Millisecond), len(sample), apiDone.Sub(inProcessDone).Round(time.Millisecond),
		count(&ngx.builds), count(&ngx.childVerdicts), buildDone.Sub(apiDone).Round(time.Millisecond), len(configs), time.Since(buildDone).Round(time.Millisecond))

	// The corpus means something only if the unmodified spec goes all the way
	// through on both paths.
	for _, s := range sends[:2] {
		if s.c.field != baselineField || s.outcome() != outcomeRendered || len(s.problems()) > 0 {
			t.Fatalf("the baseline spec through %s: outcome %q, problems %q, refused %q, render error %v",
				s.path, s.outcome(), s.problems(), s.refused, s.renderErr)
		}
	}

	t.Logf("outcomes:\n%s", summary(sends))
	// Accepted through v1alpha1 though refused through v1beta1, yet stored
	// as a valid v1beta1 spec: the conversion normalised the value (an
	// omitted zero, say). Listed so that a reader can judge them.
	var normalised []string
	for i := 0; i < len(sends); i += 2 {
		beta, alpha := sends[i], sends[i+1]
		if beta.outcome() == outcomeRefused && alpha.outcome() != outcomeRefused && len(alpha.problems()) == 0 {
			normalised = append(normalised, fmt.Sprintf("  %d %s = %s: %s", alpha.c.id, alpha.c.field, alpha.c.show, alpha.outcome()))
		}
	}
	if len(normalised) > 0 {
		t.Logf("refused as v1beta1, accepted as v1alpha1 and stored valid (normalised by the conversion):\n%s", strings.Join(normalised, "\n"))
	}
	var failing []*send
	for _, s := range sends {
		if len(s.problems()) > 0 {
			failing = append(failing, s)
		}
	}
	if len(failing) > 0 {
		t.Errorf("%d of %d sends end neither refused (by the apiserver or the renderer) nor rendered intact, accepted by nginx and meaning what their fields say:\n%s",
			len(failing), len(sends), failureTable(failing))
	}
}

// count is the number of entries in m.
func count(m *sync.Map) int {
	n := 0
	m.Range(func(any, any) bool { n++; return true })
	return n
}
