package reloader

import (
	"strings"
	"testing"
)

// The reloader (nginx -t refusing a configuration) and the operator (a
// pod's termination message) quote nginx the same way: its last error line,
// from the level on.
func TestErrorLineQuotesTheLastErrorLineFromItsLevel(t *testing.T) {
	long := "nginx: [emerg] " + strings.Repeat("x", 2000)
	for _, tc := range []struct{ log, want string }{
		{"", ""},
		{"Killed\n", ""},
		{"2026/11/23 18:40:00 [warn] 1#1: a warning\n", ""},
		{"nginx: [emerg] unknown directive \"x\" in /etc/nginx/conf/nginx.conf:3\n", `[emerg] unknown directive "x" in /etc/nginx/conf/nginx.conf:3`},
		{"2026/11/23 18:40:00 [emerg] 1#1: bind() to 0.0.0.0:8080 failed (98: Address in use)\n2026/11/23 18:40:00 [emerg] 1#1: still could not bind()\n", "[emerg] 1#1: still could not bind()"},
		{"2026/11/23 18:40:00 [crit] 1#1: open() failed\n[notice] exiting\n", "[crit] 1#1: open() failed"},
		{long, long[len("nginx: "):]},
	} {
		if got := ErrorLine(tc.log); got != tc.want {
			t.Errorf("ErrorLine(%q) = %q, want %q", tc.log, got, tc.want)
		}
	}
}
