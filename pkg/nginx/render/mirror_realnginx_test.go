package render

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// copies counts the requests a mirrored Service gets, and keeps the last
// one's path and X-Team header.
type copies struct {
	mu         sync.Mutex
	n          int
	path, team string
}

func startCopies(t *testing.T) (*copies, int32) {
	c := &copies{}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.mu.Lock()
		c.n, c.path, c.team = c.n+1, r.URL.RequestURI(), r.Header.Get("X-Team")
		c.mu.Unlock()
		w.WriteHeader(http.StatusTeapot) // thrown away by nginx
	}))
	t.Cleanup(s.Close)
	return c, portOf(t, s.URL)
}

func (c *copies) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// TestRealNginxMirrorsEveryRequestOrItsShare: every request to the
// location is answered by its Service while a full mirror gets a copy of
// each, with the request's path and query and the location's request
// headers, and a 30% mirror about 30% of them (within five standard
// deviations of the binomial); a mirror of 0% gets none.
func TestRealNginxMirrorsEveryRequestOrItsShare(t *testing.T) {
	eps := startEndpoints(t, 1)
	all, allPort := startCopies(t)
	share, sharePort := startCopies(t)
	none, nonePort := startCopies(t)
	c := startBalancing(t, v1beta1.Location{Path: "/",
		RequestHeaders: &v1beta1.HeaderModifier{Set: []v1beta1.Header{{Name: "X-Team", Value: "blue"}}},
		Proxy: &v1beta1.ProxyLocation{Backends: eps.backends(t), Mirrors: []v1beta1.Mirror{
			{Service: "all", Port: allPort},
			{Service: "share", Port: sharePort, Fraction: &v1beta1.Fraction{Numerator: 3, Denominator: 10}},
			{Service: "none", Port: nonePort, Percent: ptr.To[int32](0)},
		}}})
	c.do(http.MethodGet, "/warm-up", "")
	const requests = 400
	for i := range requests {
		if status, server, _ := c.do(http.MethodGet, "/app?i=x", ""); status != http.StatusOK || server != eps.names[0] {
			t.Fatalf("request %d: %d from %q, want 200 from the location's Service", i, status, server)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for all.count() < requests+1 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := all.count(); n != requests+1 || all.path != "/app?i=x" || all.team != "blue" {
		t.Errorf("the full mirror got %d copies, the last of %q with X-Team %q; want %d of /app?i=x with blue", n, all.path, all.team, requests+1)
	}
	// 401 draws at 30%: mean 120.3, standard deviation 9.2; five of them
	// either way (a false failure about once in two million runs) still
	// tell 30% from 10% or 50%.
	if n := share.count(); n < 74 || n > 166 {
		t.Errorf("the 3/10 mirror got %d copies of 401 requests, want 74 to 166", n)
	}
	if n := none.count(); n != 0 {
		t.Errorf("the 0%% mirror got %d copies, want none", n)
	}
}
