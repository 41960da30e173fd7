package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A module whose tests pass, fail, skip and leave a test unfinished.
const fixture = `package fixture

import (
	"os"
	"testing"
)

func TestPasses(t *testing.T) { t.Log("quiet when it passes") }

func TestFails(t *testing.T) { t.Error("the failure's own message") }

func TestSkipsAllowed(t *testing.T) { t.Skip("the reason given") }

func TestSkipsNotAllowed(t *testing.T) { t.Skip("a tier that vanished") }

func TestSubtests(t *testing.T) {
	t.Run("one", func(t *testing.T) { t.Skip("allowed by a pattern") })
	t.Run("two", func(t *testing.T) {})
}

func TestDies(t *testing.T) {
	if os.Getenv("FIXTURE_DIE") != "" {
		t.Log("last words")
		os.Exit(3)
	}
}
`

func writeFixture(t *testing.T, allow string) (dir, skips string) {
	t.Helper()
	dir = t.TempDir()
	for name, content := range map[string]string{
		"go.mod":          "module example.com/fixture\n\ngo 1.22\n",
		"fixture_test.go": fixture,
		"skips.txt":       allow,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir, filepath.Join(dir, "skips.txt")
}

// runIn runs the program's run in dir, as `go run ./hack/gotest` would.
func runIn(t *testing.T, dir, skips string, args ...string) (int, string) {
	t.Helper()
	return runWithEvents(t, dir, skips, "", args...)
}

// runWithEvents is runIn with the events copied to the file events.
func runWithEvents(t *testing.T, dir, skips, events string, args ...string) (int, string) {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chdir(wd) }()
	var out, errOut bytes.Buffer
	code := run(append([]string{"-count=1"}, args...), skips, events, &out, &errOut)
	return code, out.String() + errOut.String()
}

func TestFailuresShowTheirOutputAndSkipsAreCountedAndChecked(t *testing.T) {
	dir, skips := writeFixture(t, "# comment\n. TestSkipsAllowed the reason is fine here\nexample.com/fixture TestSubtests/* patterns work\n")
	code, out := runIn(t, dir, skips, "./...")
	if code == 0 {
		t.Errorf("exit code 0 with a failing test:\n%s", out)
	}
	for _, want := range []string{
		"--- FAIL: TestFails (", "fixture_test.go:10: the failure's own message",
		"tests: 4 passed, 1 failed, 3 skipped (2 on the allow-list",
		"skipped example.com/fixture TestSkipsNotAllowed: fixture_test.go:14: a tier that vanished",
		"FAIL: 1 skipped test(s) not on the allow-list",
		"FAIL\texample.com/fixture",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Index(out, "--- FAIL: TestFails (") > strings.Index(out, "the failure's own message") {
		t.Errorf("the failure's header follows its message; plain go test prints it first:\n%s", out)
	}
	for _, unwanted := range []string{"quiet when it passes", "=== RUN"} {
		if strings.Contains(out, unwanted) {
			t.Errorf("output has %q, which plain go test prints only with -v:\n%s", unwanted, out)
		}
	}
}

func TestASkipOffTheAllowListFailsARunThatPasses(t *testing.T) {
	dir, skips := writeFixture(t, ". TestSkipsAllowed reason\n")
	code, out := runIn(t, dir, skips, "-run", "TestPasses|TestSkips", "./...")
	if code != 1 {
		t.Errorf("exit code %d, want 1 for a skip off the allow-list:\n%s", code, out)
	}
	dir, skips = writeFixture(t, ". TestSkips* both are fine\n")
	if code, out := runIn(t, dir, skips, "-run", "TestPasses|TestSkips", "./..."); code != 0 {
		t.Errorf("exit code %d, want 0 when every skip is allowed:\n%s", code, out)
	}
}

func TestATestBinaryThatDiesShowsTheOutputOfTheTestItRan(t *testing.T) {
	dir, skips := writeFixture(t, "")
	t.Setenv("FIXTURE_DIE", "1")
	code, out := runIn(t, dir, skips, "-run", "TestDies", "./...")
	if code == 0 || !strings.Contains(out, "last words") {
		t.Errorf("exit code %d; want a failure showing the dead test's output:\n%s", code, out)
	}
}

func TestAnAllowListEntryNeedsAReason(t *testing.T) {
	dir, skips := writeFixture(t, ". TestSkipsAllowed\n")
	if code, out := runIn(t, dir, skips, "./..."); code != 2 || !strings.Contains(out, "the reason the skip is right") {
		t.Errorf("exit code %d, want 2 and the complaint:\n%s", code, out)
	}
}

func TestTheSummaryNamesTheSlowestPackagesAndTestsLongestFirst(t *testing.T) {
	var out bytes.Buffer
	r := newReport(&out)
	events := `{"Action":"pass","Package":"example.com/quick","Elapsed":1.2}
{"Action":"pass","Package":"example.com/slow","Test":"TestX","Elapsed":99}
{"Action":"pass","Package":"example.com/slow","Test":"TestX/sub","Elapsed":98}
{"Action":"fail","Package":"example.com/slow","Elapsed":310.4}
{"Action":"pass","Package":"example.com/middle","Elapsed":42}
`
	if err := r.read(strings.NewReader(events)); err != nil {
		t.Fatal(err)
	}
	r.printSlowest(2)
	want := "  slowest packages (of 3, 354s of test binaries' run time in all): example.com/slow 310s, example.com/middle 42s\n" +
		"  slowest tests: slow TestX 99s\n"
	if got := out.String(); !strings.HasSuffix(got, want) {
		t.Errorf("summary:\n%q\nwant it to end with\n%q", got, want)
	}
}

func TestTheEventsFileKeepsEveryEvent(t *testing.T) {
	dir, skips := writeFixture(t, ". TestSubtests/one fine\n")
	events := filepath.Join(t.TempDir(), "events.json")
	if code, out := runWithEvents(t, dir, skips, events, "-run", "TestPasses|TestSubtests", "./..."); code != 0 {
		t.Fatalf("exit code %d:\n%s", code, out)
	}
	data, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"Test":"TestSubtests/two"`, `"Action":"pass"`, "quiet when it passes"} {
		if !strings.Contains(string(data), want) {
			t.Errorf("the events lack %s:\n%s", want, data)
		}
	}
}

func TestTheSummaryEndsByNamingEachFailureWithItsFirstMessage(t *testing.T) {
	var out bytes.Buffer
	r := newReport(&out)
	events := `{"Action":"run","Package":"example.com/p","Test":"TestParent"}
{"Action":"run","Package":"example.com/p","Test":"TestParent/child"}
{"Action":"output","Package":"example.com/p","Test":"TestParent/child","Output":"    p_test.go:12: 10 of 30 answered after 2 queries\n"}
{"Action":"output","Package":"example.com/p","Test":"TestParent/child","Output":"    p_test.go:13: a second message\n"}
{"Action":"fail","Package":"example.com/p","Test":"TestParent/child","Elapsed":1}
{"Action":"fail","Package":"example.com/p","Test":"TestParent","Elapsed":2}
{"Action":"run","Package":"example.com/p","Test":"TestAlone"}
{"Action":"output","Package":"example.com/p","Test":"TestAlone","Output":"--- FAIL: TestAlone (0.00s)\n"}
{"Action":"fail","Package":"example.com/p","Test":"TestAlone","Elapsed":0}
{"Action":"run","Package":"example.com/p","Test":"TestDied"}
{"Action":"output","Package":"example.com/p","Test":"TestDied","Output":"    p_test.go:40: last words\n"}
{"Action":"fail","Package":"example.com/p","Elapsed":3}
`
	if err := r.read(strings.NewReader(events)); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	r.summarize(nil, "skips.txt", "example.com")
	want := "  failed example.com/p TestParent/child: p_test.go:12: 10 of 30 answered after 2 queries\n" +
		"  failed example.com/p TestAlone\n" +
		"  failed example.com/p TestDied: did not finish: p_test.go:40: last words\n"
	if got := out.String(); !strings.HasSuffix(got, want) {
		t.Errorf("summary:\n%s\nwant it to end with\n%s", got, want)
	}
}
