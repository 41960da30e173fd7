package chaos

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
)

// panicLine matches what a panic leaves in an operator's log, recovered or
// not: the Go runtime's "panic: " and "fatal error: " and the goroutine
// header of the trace that follows them, client-go's and
// controller-runtime's "Observed a panic" (a reconciler's panic they
// recovered) with the error it turns the panic into, and net/http's "http:
// panic serving" (a webhook handler's).
var panicLine = regexp.MustCompile(`^panic: |^fatal error: |^goroutine \d+ \[running\]:|Observed a panic|panic: .*\[recovered\]|http: panic serving`)

// panicsIn returns the first panic in the log at path with the lines that
// follow it, and how many lines matched; "" when there is none.
func panicsIn(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	var excerpt []string
	matches := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 4*1024*1024)
	for sc.Scan() {
		line := sc.Text()
		if panicLine.MatchString(line) {
			matches++
		}
		if matches > 0 && len(excerpt) < 20 {
			excerpt = append(excerpt, truncate(line, 2000))
		}
	}
	if matches == 0 {
		return ""
	}
	return fmt.Sprintf("%d line(s) of the log tell of a panic; the first and what follows it:\n%s", matches, strings.Join(excerpt, "\n"))
}

// logTail is the last n lines of the log at path.
func logTail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	lines = lines[max(0, len(lines)-n):]
	for i := range lines {
		lines[i] = truncate(lines[i], 2000)
	}
	return strings.Join(lines, "\n")
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func TestPanicLinesAreTheOnesPanicsLeave(t *testing.T) {
	for line, want := range map[string]bool{
		"panic: runtime error: invalid memory address or nil pointer dereference": true,
		"fatal error: concurrent map writes":                                      true,
		"goroutine 214 [running]:":                                                true,
		`ts=2026-01-01T00:00:00Z level=error logger=controller msg="Observed a panic" panic="boom" stacktrace="goroutine 7 [running]:\n..."`: true,
		`2026/01/01 00:00:00 http: panic serving 127.0.0.1:4242: boom`:                                                                       true,
		`level=info msg="reconciled" instance=team-a/panic-room`:                                                                             false,
		`level=error msg="Reconciler error" err="panic: boom [recovered]"`:                                                                   true,
		"goroutine 12 [select]:": false,
	} {
		if got := panicLine.MatchString(line); got != want {
			t.Errorf("panicLine matches %q: %v, want %v", line, got, want)
		}
	}
}
