package conf

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// liveHeader and liveBody are what the real-nginx test serves. They avoid '$',
// which nginx would read as a variable in add_header and return, and the
// header avoids CR and LF, which cannot appear in an HTTP header.
const (
	liveHeader = `x; } server { listen 8080; } # "dq" 'sq' \back\slash \n\t {braces} ünï ✓` + "\t<-tab"
	liveBody   = "x; } server { listen 8080; }\n# \"dq\" 'sq' \\back\\slash \\n {braces}\r\n\ttab ünï ✓\n"
)

// hostileArgs are argument values that would change the structure of the
// configuration if pasted into it unquoted, the way templated configs did in
// ingress-nginx's annotation-injection CVEs.
var hostileArgs = []string{
	liveHeader,
	liveBody,
	`x; } server { listen 80`,
	`x; include /etc/passwd;`,
	`}`,
	`{`,
	`;`,
	`"`,
	`'`,
	`\`,
	`#`,
	`x # comment eats the rest; }`,
	`";} evil {"`,
	`';} evil {'`,
	`\";} evil {\"`,
	`x\`,
	`\\";`,
	`a" b`,
	"x;\n} server {\nlisten 80;\n",
	"x\r\n}\r\n",
	"line1\\nline2",
	`${host}; }`,
	`$host }`,
	`x${;}`,
	`"a")`,
	`) {`,
	`   `,
}

// TestHostileArgumentsStayOneArgument renders each hostile value as an
// argument of a nested directive and checks that it reads back as exactly one
// argument, with the surrounding structure intact.
func TestHostileArgumentsStayOneArgument(t *testing.T) {
	for _, arg := range hostileArgs {
		t.Run(arg, func(t *testing.T) {
			dirs := []Directive{
				B("http", nil,
					B("server", nil,
						D("add_header", "X-Hostile", arg),
						B("location", []string{arg},
							D("return", "200", arg),
						),
						D("listen", "8080"),
					),
				),
			}
			roundTrip(t, dirs)
		})
	}
}

// TestHostileArgumentsAreHostile guards the test above against going soft:
// each value, pasted unquoted into the same place, must actually break the
// structure (a parse error, or a different tree).
func TestHostileArgumentsAreHostile(t *testing.T) {
	for _, arg := range hostileArgs {
		t.Run(arg, func(t *testing.T) {
			naive := "server {\n    add_header X-Hostile " + arg + ";\n    listen 8080;\n}\n"
			want := []Directive{B("server", nil, D("add_header", "X-Hostile", arg), D("listen", "8080"))}
			got, err := Parse([]byte(naive))
			if err == nil && cmp.Equal(want, got, equateEmptyArgs) {
				t.Fatalf("%q pasted unquoted parses as intended; it is not hostile", arg)
			}
		})
	}
}

// TestRenderedStructureIsOnlyFromTheTree counts what nginx would see as
// statements: however hostile the arguments, the rendered text has exactly one
// line per directive and one closing brace per block.
func TestRenderedStructureIsOnlyFromTheTree(t *testing.T) {
	var block []Directive
	for _, arg := range hostileArgs {
		block = append(block, D("add_header", arg, arg))
	}
	text, err := Render([]Directive{B("server", nil, block...)})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	if want := len(hostileArgs) + 2; len(lines) != want {
		t.Fatalf("rendered %d lines, want %d:\n%s", len(lines), want, text)
	}
	for i, l := range lines[1 : len(lines)-1] {
		if !strings.HasPrefix(l, "    add_header ") || !strings.HasSuffix(l, ";") {
			t.Errorf("line %d is not one add_header directive: %q", i+2, l)
		}
	}
	if lines[len(lines)-1] != "}" {
		t.Errorf("last line = %q, want }", lines[len(lines)-1])
	}
}
