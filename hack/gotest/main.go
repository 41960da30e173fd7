// Command gotest runs `go test -json` with the arguments it is given and
// prints what plain `go test` prints (each package's result line, and the
// whole output of every test that failed), then the number of tests that
// passed, failed and were skipped, the packages and tests that ran
// longest, and, last, each failed test with its first message (a CI log
// cut to its tail still names them). It fails, besides when a test fails, when
// a test was skipped that the allow-list does not name: a tier whose tools
// went missing, or a check that skips itself, cannot vanish from `make test`
// unnoticed.
//
//	go run ./hack/gotest [-skips=hack/gotest/skips.txt] [go test flags] packages
//
// With GOTEST_EVENTS=file, every event go test printed is also written to
// file as it came (test2json's lines), for the times of every test and
// subtest that the summary does not name.
//
// The allow-list holds one skip a line: the package (its import path, or
// the path relative to the module as ./dir or dir), the test's full name
// (TestX or TestX/subtest; path.Match patterns allowed) and, after the
// two, why the skip is right where the list is used. Blank lines and lines
// starting with # are ignored. An entry without a reason is an error.
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

func main() {
	// Only a leading -skips=file is ours; every other argument goes to go
	// test as it is.
	skips, args := "hack/gotest/skips.txt", os.Args[1:]
	if len(args) > 0 && strings.HasPrefix(args[0], "-skips=") {
		skips, args = strings.TrimPrefix(args[0], "-skips="), args[1:]
	}
	os.Exit(run(args, skips, os.Getenv("GOTEST_EVENTS"), os.Stdout, os.Stderr))
}

// run runs go test -json args, reports to stdout, copies the events to the
// file eventsFile unless it is empty, and returns the exit code. (The
// variable is read by main alone: the tests of this package run it, and
// must not write the events file of the go test that runs them.)
func run(args []string, skipsFile, eventsFile string, stdout, stderr io.Writer) int {
	allowed, err := readAllowList(skipsFile)
	if err != nil {
		fmt.Fprintln(stderr, "gotest:", err)
		return 2
	}
	module, err := modulePath()
	if err != nil {
		fmt.Fprintln(stderr, "gotest:", err)
		return 2
	}
	cmd := exec.Command("go", append([]string{"test", "-json"}, args...)...)
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(stderr, "gotest:", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(stderr, "gotest:", err)
		return 2
	}
	var events io.Reader = out
	if eventsFile != "" {
		f, err := os.Create(eventsFile)
		if err != nil {
			fmt.Fprintln(stderr, "gotest:", err)
			return 2
		}
		defer f.Close()
		events = io.TeeReader(out, f)
	}
	r := newReport(stdout)
	readErr := r.read(events)
	waitErr := cmd.Wait()
	if readErr != nil {
		fmt.Fprintln(stderr, "gotest: reading go test's output:", readErr)
	}
	code := exitCode(waitErr)
	if r.summarize(allowed, skipsFile, module) && code == 0 {
		code = 1
	}
	if code == 0 && readErr != nil {
		code = 1
	}
	return code
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() > 0 {
		return ee.ExitCode()
	}
	return 1
}

// modulePath is the main module's path, to read the allow-list's relative
// package paths.
func modulePath() (string, error) {
	out, err := exec.Command("go", "list", "-m").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m: %w", err)
	}
	lines := strings.Fields(string(out))
	if len(lines) == 0 {
		return "", fmt.Errorf("go list -m printed no module")
	}
	return lines[0], nil
}
