package conf

import (
	"errors"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// nameRE is the documented rule for directive names, checked here with a
// regexp rather than validName's loop so the two can disagree.
var nameRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// hasRefusedByte is Quote's documented refusal rule, restated.
func hasRefusedByte(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == 0x7F || c < 0x20 && !strings.ContainsRune("\t\n\r", rune(c)) {
			return true
		}
	}
	return false
}

// FuzzRenderParseRoundTrip checks the package's security property: for a tree
// with valid names, Render either refuses it for a documented reason or
// produces text that parses back to exactly the same tree. The fuzzed strings
// land in arguments at several depths, as a block's argument and as a
// directive name.
func FuzzRenderParseRoundTrip(f *testing.F) {
	for _, s := range hostileArgs {
		f.Add("add_header", "X-Hostile", s, s)
	}
	f.Add("return", "200", "", "ok\n")
	f.Add("set", "$a", "${b}c", `^/(?<x>.*)$`)
	f.Add("a", "\t", "\r\n", "\\n\\\"")
	f.Add("Bad-Name", "x", "y", "z")
	f.Add("x;y", "x", "y", "z")
	f.Add("log_format", "\x00", "\x1b", "\x7f")
	f.Add("_", "\xff\xfe", "héllo", "'\"'")
	f.Add("root", strings.Repeat("a", maxToken), strings.Repeat(`"`, maxToken/2), "")

	f.Fuzz(func(t *testing.T, name, a, b, c string) {
		dirs := []Directive{
			D("worker_processes", a),
			B("http", nil,
				B("server", nil,
					D("listen", "127.0.0.1:8080"),
					D("add_header", a, b),
					D(name, b, c),
					B("location", []string{c},
						D("return", "200", a),
						B(name, []string{b}),
					),
					B("upstream", []string{a, b, c}),
				),
			),
		}
		text, err := Render(dirs)

		if !nameRE.MatchString(name) {
			if !errors.Is(err, errBadName) {
				t.Fatalf("Render with name %q: err = %v, want %v", name, err, errBadName)
			}
			return
		}
		for _, s := range []string{a, b, c} {
			if (hasRefusedByte(s) || len(s) > maxToken) && err == nil {
				t.Fatalf("Render accepted %q, which must be refused:\n%s", s, text)
			}
		}
		if err != nil {
			// Refusing is only allowed for a documented reason.
			justified := false
			for _, s := range []string{a, b, c} {
				switch {
				case errors.Is(err, errControlChar) && hasRefusedByte(s),
					errors.Is(err, errTooLong) && 2*len(s)+2 > maxToken:
					justified = true
				}
			}
			if !justified {
				t.Fatalf("Render(%q, %q, %q, %q) refused without cause: %v", name, a, b, c, err)
			}
			return
		}

		back, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(Render(x)): %v\nrendered:\n%s", err, text)
		}
		if diff := cmp.Diff(dirs, back, equateEmptyArgs); diff != "" {
			t.Fatalf("Parse(Render(x)) != x (-want +got):\n%s\nrendered:\n%s", diff, text)
		}
	})
}

// FuzzParseRender feeds Parse arbitrary text: it must not panic, and whatever
// it accepts and Render can express must come back unchanged from another
// Render and Parse, so the two agree on the grammar beyond the shapes the
// other tests build.
func FuzzParseRender(f *testing.F) {
	for _, name := range []string{"debian-nginx.conf", "debian-default-site.conf", "debian-mime.types"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		`d "a\"b\\c\td\ne\rf\'g\x" 'x' a\ b ${x}{ a#b a} "";`,
		`if ($a = "b") { return 404; }`,
		"http {\n server {\n  listen 80\n }\n",
		"d \"a\nb\" c\\\nd;\n}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dirs, err := Parse(data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "conf: line ") {
				t.Fatalf("Parse error without a line number: %v", err)
			}
			return
		}
		text, err := Render(dirs)
		if err != nil {
			return // e.g. names such as text/html, or control bytes in the input
		}
		back, err := Parse(text)
		if err != nil {
			t.Fatalf("Parse(Render(Parse(data))): %v\nrendered:\n%s", err, text)
		}
		if diff := cmp.Diff(dirs, back, equateEmptyArgs); diff != "" {
			t.Fatalf("Parse(Render(Parse(data))) != Parse(data) (-want +got):\n%s\nrendered:\n%s", diff, text)
		}
	})
}
