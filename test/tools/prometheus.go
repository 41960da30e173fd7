package tools

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Prometheus is a test's client of a real Prometheus' HTTP API, built on
// client_golang's: what the tests ask Prometheus (a query, its targets) is
// decoded in one place.
type Prometheus struct{ api promv1.API }

// NewPrometheus is a client of the Prometheus at address (http://host:port);
// rt, when not nil, carries the requests (a real node's network).
func NewPrometheus(t testing.TB, address string, rt http.RoundTripper) *Prometheus {
	t.Helper()
	c, err := api.NewClient(api.Config{Address: address, RoundTripper: rt})
	if err != nil {
		t.Fatal(err)
	}
	return &Prometheus{api: promv1.NewAPI(c)}
}

// Query is the instant vector of the PromQL expression q now.
func (p *Prometheus) Query(ctx context.Context, q string) (model.Vector, error) {
	v, _, _, err := p.api.Query(ctx, q, time.Now())
	if err != nil {
		return nil, err
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("%s: a %s, not an instant vector", q, v.Type())
	}
	return vec, nil
}

// ActiveTargets are the targets Prometheus scrapes now.
func (p *Prometheus) ActiveTargets(ctx context.Context) ([]promv1.ActiveTarget, error) {
	r, err := p.api.Targets(ctx)
	if err != nil {
		return nil, err
	}
	return r.Active, nil
}
