package chaos

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// idleWindow is how long the main test measures the idle request rate; the
// smaller tests measure half as long, to keep the package within minutes.
const idleWindow = 20 * time.Second

// maxIdleRate bounds the operator's requests per second, leader election
// apart, while nothing changes: a level-triggered operator at rest only
// renews its lease and, once a minute, checks its webhook certificate.
const maxIdleRate = 1.0

// idleFigures are the operator's requests during an idle window.
type idleFigures struct {
	window      time.Duration
	leases      int            // leader-election requests (coordination.k8s.io/leases)
	other       int            // everything else
	otherByKind map[string]int // "verb group/resource" -> count, for a failure report
	// logged: the log holds a request (of anyone) received a second after
	// the window, so every request of the window has been logged.
	logged bool
}

func (f idleFigures) rate() float64 { return float64(f.other) / f.window.Seconds() }

// maxLeaseRequests is what leader election may cost in window: each retry
// period the leader renews (an update, with a get when its fast path does
// not apply) and every standby reads the lease; with slack for a lease
// handed over in the window.
func maxLeaseRequests(replicas int, window time.Duration) int {
	periods := int(window / retryPeriod)
	return (2+replicas-1)*periods + 10
}

// measureIdle counts, in the apiserver's audit log, the requests the
// operator's ServiceAccount makes during window while the test makes
// none. A replica that exits during the window (a lost lease) restarts and
// re-lists everything, which is no hot loop: the window is measured again,
// up to three times.
func measureIdle(t *testing.T, c *framework.Cluster, r *replicas, window time.Duration) idleFigures {
	t.Helper()
	var f idleFigures
	for attempt := 1; attempt <= 3; attempt++ {
		restarts := r.unplannedRestarts()
		offset := fileSize(c.AuditLog())
		start := time.Now()
		// The window in which nothing may happen: the idle operator's
		// requests are counted over it.
		time.Sleep(window)
		end := time.Now()
		// Requests received before end may be logged a moment later: read
		// the log until it has moved on past the window (the control
		// plane's components send requests all the time).
		var err error
		if !framework.WaitFor(context.Background(), time.Minute, func(context.Context) bool {
			f, err = countRequests(c.AuditLog(), offset, operatorUser, start, end)
			return err != nil || f.logged
		}) {
			t.Fatal("the audit log logged nothing after the idle window")
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.unplannedRestarts() == restarts {
			return f
		}
		t.Logf("a replica restarted during idle window %d; measuring again", attempt)
	}
	t.Fatalf("replicas kept restarting during %d idle windows", 3)
	return f
}

// checkIdle asserts the figures and logs them.
func checkIdle(t *testing.T, f idleFigures, replicas int) {
	t.Helper()
	t.Logf("idle for %s: %d requests besides leader election (%.2f/s, limit %.1f/s), %d leader-election requests (%.1f/s, limit %d in all for %d replicas renewing every %s)",
		f.window, f.other, f.rate(), maxIdleRate, f.leases, float64(f.leases)/f.window.Seconds(), maxLeaseRequests(replicas, f.window), replicas, retryPeriod)
	if f.rate() >= maxIdleRate {
		t.Errorf("hot loop: %.2f requests/s while idle (limit %.1f/s): %s", f.rate(), maxIdleRate, byKind(f.otherByKind))
	}
	if f.leases > maxLeaseRequests(replicas, f.window) {
		t.Errorf("leader election made %d requests in %s, more than %d", f.leases, f.window, maxLeaseRequests(replicas, f.window))
	}
}

func byKind(m map[string]int) string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// countRequests reads the audit log from offset (from its start if it was
// rotated since) and counts user's requests received in [start, end).
func countRequests(path string, offset int64, user string, start, end time.Time) (idleFigures, error) {
	f := idleFigures{window: end.Sub(start), otherByKind: map[string]int{}}
	file, err := os.Open(path)
	if err != nil {
		return f, err
	}
	defer file.Close()
	if fileSize(path) < offset {
		offset = 0
	}
	if _, err := file.Seek(offset, io.SeekStart); err != nil {
		return f, err
	}
	sc := bufio.NewScanner(file)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var ev struct {
			Verb     string    `json:"verb"`
			Received time.Time `json:"requestReceivedTimestamp"`
			User     struct {
				Username string `json:"username"`
			} `json:"user"`
			ObjectRef *struct {
				APIGroup string `json:"apiGroup"`
				Resource string `json:"resource"`
			} `json:"objectRef"`
			RequestURI string `json:"requestURI"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			continue // a line cut by an apiserver killed mid-write
		}
		if !ev.Received.Before(end.Add(time.Second)) {
			f.logged = true
		}
		if ev.User.Username != user || ev.Received.Before(start) || !ev.Received.Before(end) {
			continue
		}
		if ev.ObjectRef != nil && ev.ObjectRef.APIGroup == "coordination.k8s.io" && ev.ObjectRef.Resource == "leases" {
			f.leases++
			continue
		}
		f.other++
		kind := ev.RequestURI
		if ev.ObjectRef != nil {
			kind = ev.ObjectRef.APIGroup + "/" + ev.ObjectRef.Resource
		}
		f.otherByKind[ev.Verb+" "+kind]++
	}
	return f, sc.Err()
}
