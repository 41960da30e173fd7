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

func TestEqualAgreesWithCmp(t *testing.T) {
	base := []Directive{B("http", nil, B("server", nil, D("listen", "80")), D("gzip", "on"))}
	tests := []struct {
		name  string
		y     []Directive
		equal bool
	}{
		{"identical", []Directive{B("http", nil, B("server", nil, D("listen", "80")), D("gzip", "on"))}, true},
		{"nil and empty Args", []Directive{{Name: "http", Args: []string{}, Block: base[0].Block}}, true},
		{"different nested argument", []Directive{B("http", nil, B("server", nil, D("listen", "81")), D("gzip", "on"))}, false},
		{"different nested name", []Directive{B("http", nil, B("server", nil, D("listen", "80")), D("gunzip", "on"))}, false},
		{"extra argument", []Directive{B("http", []string{""}, B("server", nil, D("listen", "80")), D("gzip", "on"))}, false},
		{"missing directive", []Directive{B("http", nil, B("server", nil), D("gzip", "on"))}, false},
		{"empty block instead of simple directive", []Directive{B("http", nil, B("server", nil, B("listen", []string{"80"})), D("gzip", "on"))}, false},
		{"no top level", nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := cmp.Equal(base, tt.y, equateEmptyArgs); got != tt.equal {
				t.Errorf("cmp.Equal = %v, want %v", got, tt.equal)
			}
			if got := Equal(base, tt.y); got != tt.equal {
				t.Errorf("Equal = %v, want %v", got, tt.equal)
			}
		})
	}
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
				B("map", []string{"$a", "$b"}, D(name, c), D("default", a)),
			),
		}
		text, err := Render(dirs)

		args := []string{a, b, c}
		// The name is also a map key, refused only for what Quote refuses.
		mustRefuse := !nameRE.MatchString(name) || hasRefusedByte(name) || len(name) > maxToken
		for _, s := range args {
			mustRefuse = mustRefuse || hasRefusedByte(s) || len(s) > maxToken
		}
		if mustRefuse && err == nil {
			t.Fatalf("Render(%q, %q, %q, %q) accepted what it must refuse:\n%s", name, a, b, c, text)
		}
		if err != nil {
			// Refusing is only allowed for a documented reason. Render stops
			// at the first problem, which may be in any of the inputs.
			justified := errors.Is(err, errBadName) && !nameRE.MatchString(name)
			for _, s := range append(args, name) {
				justified = justified ||
					errors.Is(err, errControlChar) && hasRefusedByte(s) ||
					errors.Is(err, errTooLong) && 2*len(s)+2 > maxToken
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
		if !Equal(dirs, back) {
			diff := cmp.Diff(dirs, back, equateEmptyArgs)
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
		if !Equal(dirs, back) {
			diff := cmp.Diff(dirs, back, equateEmptyArgs)
			t.Fatalf("Parse(Render(Parse(data))) != Parse(data) (-want +got):\n%s\nrendered:\n%s", diff, text)
		}
	})
}
