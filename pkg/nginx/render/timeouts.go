package render

import (
	"strconv"
	"time"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// unboundedWait is the wait nginx is given where a Gateway API timeout of
// "0s" turns it off: nginx's timeouts cannot be turned off, and Gateway API
// then asks for the longest one can set. A day is far beyond any request
// and within what nginx's timers hold.
const unboundedWait = 24 * time.Hour

// waits are how long a proxy location's tries wait, as nginx time values:
// to connect, between two writes of the request, between two reads of the
// response, and since the first try before no other starts ("0": no bound).
type waits struct{ connect, send, read, tries string }

// waitsOf are p's waits: its *Seconds timeouts, with timeouts over them.
// Unless retry says otherwise, no other try starts once one read timeout
// has passed since the first (see retry).
func waitsOf(p *v1beta1.ProxyLocation) waits {
	connect := time.Duration(p.ConnectTimeoutSeconds) * time.Second
	send := time.Duration(p.SendTimeoutSeconds) * time.Second
	read := time.Duration(p.ReadTimeoutSeconds) * time.Second
	tries := read
	if p.Retry != nil {
		tries = time.Duration(p.Retry.TimeoutSeconds) * time.Second
	}
	if t := p.Timeouts; t != nil {
		request, hasRequest := gatewayDuration(t.Request)
		perTry, hasPerTry := gatewayDuration(t.BackendRequest)
		if !hasPerTry {
			perTry, hasPerTry = request, hasRequest
		}
		if perTry == 0 {
			perTry = unboundedWait
		}
		if hasRequest && request > 0 {
			perTry = min(perTry, request)
		}
		if hasPerTry {
			connect, send, read = min(connect, perTry), perTry, perTry
			if p.Retry == nil {
				tries = perTry
			}
		}
		if hasRequest {
			tries = request // "0s": no bound
		}
	}
	return waits{nginxTime(connect), nginxTime(send), nginxTime(read), nginxTime(tries)}
}

// gatewayDuration reads a duration in Gateway API's format (the CRD's
// pattern: numbers with h, m, s or ms, which Go reads alike); false when
// unset or, which the CRD prevents, unreadable.
func gatewayDuration(s string) (time.Duration, bool) {
	if s == "" {
		return 0, false
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, false
	}
	return d, true
}

// nginxTime is d as an nginx time value: whole seconds as such (what the
// configuration always said), anything finer in milliseconds.
func nginxTime(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}
