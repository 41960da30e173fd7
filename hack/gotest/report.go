package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
)

// event is one line of `go test -json` (go doc test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	Elapsed    float64 // seconds, on a test's or a package's pass, fail and skip
	ImportPath string  // build-output and build-fail events
}

// skip is one skipped test and what it said.
type skip struct {
	pkg, test, reason string
}

// failure is one failed (or unfinished) test and the first line it
// printed that names a file and line.
type failure struct {
	pkg, test, first string
}

// report turns go test's events into plain go test's output and counts
// the tests.
type report struct {
	out io.Writer
	// buffered holds each running test's output until it ends: printed
	// when it fails (or never ends), dropped when it passes or skips.
	buffered       map[string][]string
	order          []string // keys of buffered, in the order the tests started
	passed, failed int
	skipped        []skip
	// failures names each failed test with its first message, repeated
	// at the end of the summary: a CI log that keeps only its tail still
	// says what failed and where to look above.
	failures           []failure
	failedPkgs, okPkgs int
	// elapsed is each package's run time (its test binary's, not its
	// build's), to name the slowest: the ones that decide how long a
	// tier takes.
	elapsed map[string]float64
	// testElapsed is each top-level test's, by key(pkg, test).
	testElapsed map[string]float64
	sawEvents   bool
}

func newReport(out io.Writer) *report {
	return &report{out: out, buffered: map[string][]string{}, elapsed: map[string]float64{}, testElapsed: map[string]float64{}}
}

func key(pkg, test string) string { return pkg + "\x00" + test }

// read consumes the event stream; a line that is not an event (go test
// prints some before the JSON starts) is printed as it is.
func (r *report) read(in io.Reader) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1024*1024), 64*1024*1024)
	for sc.Scan() {
		line := sc.Bytes()
		var ev event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil {
			fmt.Fprintln(r.out, string(line))
			continue
		}
		r.sawEvents = true
		r.handle(ev)
	}
	return sc.Err()
}

func (r *report) handle(ev event) {
	switch {
	case ev.Action == "build-output":
		fmt.Fprint(r.out, ev.Output)
	case ev.Test == "":
		r.handlePackage(ev)
	default:
		r.handleTest(ev)
	}
}

// handlePackage prints a package's own output (its result line, what
// TestMain printed) and, when the package failed, the output of any test
// that never ended (a panic or a timeout killed the test binary).
func (r *report) handlePackage(ev event) {
	switch ev.Action {
	case "output":
		fmt.Fprint(r.out, ev.Output)
	case "fail":
		r.failedPkgs++
		r.elapsed[ev.Package] = ev.Elapsed
		r.flushUnfinished(ev.Package)
	case "pass":
		r.okPkgs++
		r.elapsed[ev.Package] = ev.Elapsed
		r.flushUnfinished(ev.Package)
	}
}

func (r *report) handleTest(ev event) {
	k := key(ev.Package, ev.Test)
	switch ev.Action {
	case "run":
		if _, ok := r.buffered[k]; !ok {
			r.order = append(r.order, k)
		}
		r.buffered[k] = nil
	case "output":
		if _, ok := r.buffered[k]; !ok {
			r.order = append(r.order, k)
		}
		r.buffered[k] = append(r.buffered[k], ev.Output)
	case "pass":
		r.passed++
		r.timeTest(ev)
		delete(r.buffered, k)
	case "skip":
		r.skipped = append(r.skipped, skip{pkg: ev.Package, test: ev.Test, reason: skipReason(r.buffered[k])})
		delete(r.buffered, k)
	case "fail":
		r.failed++
		r.timeTest(ev)
		r.failures = append(r.failures, failure{pkg: ev.Package, test: ev.Test, first: firstMessage(r.buffered[k])})
		r.print(headerFirst(r.buffered[k], ev.Test))
		delete(r.buffered, k)
	}
}

// print writes a failed test's output as plain go test does: without the
// === RUN, PAUSE, CONT and NAME lines that -json (verbose) adds.
func (r *report) print(lines []string) {
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "=== ") {
			continue
		}
		fmt.Fprint(r.out, l)
	}
}

// headerFirst moves test's "--- FAIL: test" line, which -json streams after
// the test's logs, before them, where plain go test prints it.
func headerFirst(lines []string, test string) []string {
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " "), "--- FAIL: "+test+" ") {
			return append(append([]string{l}, lines[:i]...), lines[i+1:]...)
		}
	}
	return lines
}

// flushUnfinished prints the output of pkg's tests that neither passed,
// failed nor skipped: they were running when the test binary died, so what
// they printed explains the failure.
func (r *report) flushUnfinished(pkg string) {
	var rest []string
	for _, k := range r.order {
		lines, ok := r.buffered[k]
		if !ok {
			continue
		}
		if p, test, _ := strings.Cut(k, "\x00"); p == pkg {
			fmt.Fprintf(r.out, "--- %s did not finish; its output:\n", test)
			r.failures = append(r.failures, failure{pkg: p, test: test, first: "did not finish: " + firstMessage(lines)})
			r.print(lines)
			delete(r.buffered, k)
			continue
		}
		rest = append(rest, k)
	}
	r.order = rest
}

// skipReason is what a skipped test printed, without go test's headers.
func skipReason(lines []string) string {
	var out []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		out = append(out, t)
	}
	return strings.Join(out, " | ")
}

// summarize prints the counts and every skip, and returns whether a skip
// is missing from the allow-list.
func (r *report) summarize(allowed []allowance, allowList, module string) (unallowed bool) {
	sort.Slice(r.skipped, func(i, j int) bool {
		if r.skipped[i].pkg != r.skipped[j].pkg {
			return r.skipped[i].pkg < r.skipped[j].pkg
		}
		return r.skipped[i].test < r.skipped[j].test
	})
	var bad []skip
	used := make([]bool, len(allowed))
	for _, s := range r.skipped {
		i := match(allowed, module, s)
		if i < 0 {
			bad = append(bad, s)
			continue
		}
		used[i] = true
	}
	fmt.Fprintf(r.out, "\ntests: %d passed, %d failed, %d skipped (%d on the allow-list %s); packages: %d ok, %d failed\n",
		r.passed, r.failed, len(r.skipped), len(r.skipped)-len(bad), allowList, r.okPkgs, r.failedPkgs)
	r.printSlowest(slowestShown)
	r.printFailures()
	for _, s := range r.skipped {
		fmt.Fprintf(r.out, "  skipped %s %s: %s\n", s.pkg, s.test, s.reason)
	}
	for i, a := range allowed {
		if !used[i] {
			fmt.Fprintf(r.out, "  (allowed, did not skip here: %s %s)\n", a.pkg, a.test)
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(r.out, "FAIL: %d skipped test(s) not on the allow-list %s: make them run (install what they need, or fail where it is required), or add them there with the reason the skip is right:\n", len(bad), allowList)
		for _, s := range bad {
			fmt.Fprintf(r.out, "  %s %s\n", s.pkg, s.test)
		}
	}
	if !r.sawEvents {
		fmt.Fprintln(os.Stderr, "gotest: go test printed no test events")
	}
	return len(bad) > 0
}

// messageLine is a line of a test's log: file.go:line: message.
var messageLine = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: \S`)

// firstMessage is the first log line of lines (trimmed, at most 200
// bytes), or "" when the test logged none.
func firstMessage(lines []string) string {
	for _, l := range lines {
		if messageLine.MatchString(l) {
			m := strings.TrimSpace(l)
			if len(m) > 200 {
				m = m[:200] + "…"
			}
			return m
		}
	}
	return ""
}

// printFailures names every failed test whose failure is its own: a
// parent that failed only because a subtest did is left out, the subtest
// named instead.
func (r *report) printFailures() {
	for _, f := range r.failures {
		if r.failedBelow(f) {
			continue
		}
		fmt.Fprintf(r.out, "  failed %s %s", f.pkg, f.test)
		if f.first != "" {
			fmt.Fprintf(r.out, ": %s", f.first)
		}
		fmt.Fprintln(r.out)
	}
}

// failedBelow reports whether a subtest of f failed too.
func (r *report) failedBelow(f failure) bool {
	for _, g := range r.failures {
		if g.pkg == f.pkg && strings.HasPrefix(g.test, f.test+"/") {
			return true
		}
	}
	return false
}

// timeTest records a top-level test's run time (a subtest's is part of it).
func (r *report) timeTest(ev event) {
	if !strings.Contains(ev.Test, "/") {
		r.testElapsed[key(ev.Package, ev.Test)] = ev.Elapsed
	}
}

// slowestShown is how many of the slowest packages the summary names.
const slowestShown = 8

// printSlowest names the n packages and the n top-level tests that ran
// longest, longest first, and what all packages took together.
func (r *report) printSlowest(n int) {
	if len(r.elapsed) == 0 {
		return
	}
	var total float64
	for _, e := range r.elapsed {
		total += e
	}
	fmt.Fprintf(r.out, "  slowest packages (of %d, %.0fs of test binaries' run time in all): %s\n", len(r.elapsed), total,
		longest(r.elapsed, n, func(p string) string { return p }))
	fmt.Fprintf(r.out, "  slowest tests: %s\n", longest(r.testElapsed, n, func(k string) string {
		pkg, test, _ := strings.Cut(k, "\x00")
		return path.Base(pkg) + " " + test
	}))
}

// longest lists the n keys of elapsed with the largest values, longest
// first (ties by key), each named by name and followed by its seconds.
func longest(elapsed map[string]float64, n int, name func(string) string) string {
	keys := make([]string, 0, len(elapsed))
	for k := range elapsed {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if elapsed[keys[i]] != elapsed[keys[j]] {
			return elapsed[keys[i]] > elapsed[keys[j]]
		}
		return keys[i] < keys[j]
	})
	if len(keys) > n {
		keys = keys[:n]
	}
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %.0fs", name(k), elapsed[k])
	}
	return strings.Join(parts, ", ")
}

// allowance is one entry of the allow-list.
type allowance struct {
	pkg, test, reason string
}

// readAllowList reads the allow-list at file.
func readAllowList(file string) ([]allowance, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var out []allowance
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 3 {
			return nil, fmt.Errorf("%s:%d: want a package, a test and the reason the skip is right: %q", file, i+1, line)
		}
		if _, err := path.Match(f[1], ""); err != nil {
			return nil, fmt.Errorf("%s:%d: test pattern %q: %v", file, i+1, f[1], err)
		}
		out = append(out, allowance{pkg: f[0], test: f[1], reason: strings.Join(f[2:], " ")})
	}
	return out, nil
}

// match returns the index of the entry allowing s, or -1.
func match(allowed []allowance, module string, s skip) int {
	for i, a := range allowed {
		if importPath(module, a.pkg) != s.pkg {
			continue
		}
		if ok, _ := path.Match(a.test, s.test); ok {
			return i
		}
	}
	return -1
}

// importPath is the import path of pkg, written relative to the module
// (".", "./dir", "dir") or in full.
func importPath(module, pkg string) string {
	switch {
	case pkg == "." || pkg == module:
		return module
	case strings.HasPrefix(pkg, module+"/"):
		return pkg
	}
	return module + "/" + strings.TrimPrefix(pkg, "./")
}
