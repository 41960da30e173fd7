package gatewayapi

// A corpus of hostile routes, each created through the real apiserver in
// the hostile tenant's namespace, beside a baseline of other tenants'
// routes, and followed as far as it gets: admission, the stored route, the
// Gateway's instance, the render, the real `nginx -t`, and what the
// rendered file gives the other tenants.

import (
	"github.com/nginx-operator/nginx-operator/test/hostile/hostiletest"

	"context"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/tools"
)

const (
	minCases     = 1000
	apiWorkers   = 4 // concurrent create-and-read sequences, each with its translation and render
	nginxWorkers = 2 // concurrent `nginx -t`
)

// TestNoTenantsRouteBreaksTheSharedGateway proves that one Gateway, shared
// by tenants in their own namespaces, keeps serving every tenant whatever
// one of them writes in a route. Every case is one hostile route: of a
// field of a route kind set to a hostile value (or of a structure), in the
// hostile tenant's namespace, beside the baseline (an HTTPRoute matching a
// header by regular expression, X-Match and a query parameter, a
// GRPCRoute, a TCPRoute, a UDPRoute and a TLSRoute, each in its tenant's
// namespace). Either the apiserver refuses it (Gateway API's schema and
// CEL rules: fine), or, stored, the Gateway's instance made of it and the
// baseline (instanceOf) must:
//
//  1. render, and the real `nginx -t` (as an unprivileged user, as in the
//     pod) accept the file: a route may never leave the whole instance
//     refused or unrenderable;
//  2. serve every baseline route as it did alone: each of its locations
//     and streams in the instance, its status entry Accepted and its
//     references resolved;
//  3. serve the hostile route, or leave it out and tell it why (Accepted
//     False, or ResolvedRefs False, with a message), never silently;
//  4. hold no value of the hostile route that defines or changes an nginx
//     variable another tenant's server reads: no named group in a regular
//     expression the route supplied, no '$' of its values where nginx
//     expands variables.
func TestNoTenantsRouteBreaksTheSharedGateway(t *testing.T) {
	nginxBin := tools.Nginx(t)
	cfg := env.Cluster(t).Config
	// A guard against a hung apiserver, not a bound on speed.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	start := time.Now()
	tn := setUpTenancy(ctx, t, cfg)
	ngx := newNginxEnv(t, tn.ns[roleGateway], tn.cert, tn.key)
	nginxBin = ngx.nginxFor(nginxBin)
	h := &harness{tn: tn, ngx: ngx}

	// The baseline alone must be served whole, or no case can be judged.
	alone := &send{c: &routeCase{id: -1, field: "(the baseline alone)", show: "-"}}
	h.instance(ctx, alone, tn.inputs(nil))
	if alone.config != nil {
		alone.nginxSaid, alone.nginxRan = ngx.nginxTest(nginxBin, alone.config), true
	}
	b, err := newBaseline(tn, alone)
	if err != nil {
		t.Fatal(err)
	}
	h.baseline = b

	cases := corpus(t, tn.ns)
	if len(cases) < minCases {
		t.Fatalf("the corpus has %d distinct cases, want at least %d", len(cases), minCases)
	}
	sends := make([]*send, len(cases))
	for i, c := range cases {
		sends[i] = &send{c: c}
	}
	setUp := time.Now()
	hostiletest.InParallel(apiWorkers, len(sends), func(i int) { h.send(ctx, sends[i]) })
	apiDone := time.Now()

	// The real nginx, once per distinct rendered file.
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
	t.Logf("%d cases: set-up %v; apiserver, translation and render %v; nginx -t on %d distinct files %v",
		len(cases), setUp.Sub(start).Round(time.Millisecond), apiDone.Sub(setUp).Round(time.Millisecond), len(configs),
		time.Since(apiDone).Round(time.Millisecond))

	// The hostile route of each kind as it is must be served: otherwise
	// its kind's cases prove nothing.
	for _, s := range sends {
		if s.c.field == baseField && (s.outcome() != outcomeServed || len(s.problems()) > 0) {
			t.Errorf("the hostile %s as it is: outcome %q, problems %q, refused %q", s.c.kind, s.outcome(), s.problems(), s.refused)
		}
	}

	t.Logf("outcomes:\n%s", summary(sends))
	var failing []*send
	for _, s := range sends {
		if len(s.problems()) > 0 {
			failing = append(failing, s)
		}
	}
	if len(failing) > 0 {
		t.Logf("failing cases by field:\n%s", byField(sends))
		t.Errorf("%d of %d cases end neither refused, nor left out and told why, nor served, with nginx accepting the instance, "+
			"every other tenant served as before and no value of the route reaching an nginx variable:\n%s",
			len(failing), len(sends), failureTable(failing))
	}
}
