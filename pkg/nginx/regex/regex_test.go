package regex

import (
	"strings"
	"testing"
)

// accepted are patterns of the subset, from Gateway API's conformance
// tests and what users write.
var accepted = []string{
	`/v2/[a-z]+`, `^/api/v[0-9]+/.*$`, `/foo/[^/]+/bar`, `.*`, `(?i)/Images/.*\.(png|jpe?g)`,
	`/(a|b)/c`, `/x{2,5}`, `/x{3}`, `/x{3,}`, `[[:alpha:]_-]+`, `[\d\s]`, `[a-z0-9._~-]+`,
	`/\{id\}`, `/a\}`, `[\x00-\x1f]`, `\.html\z`, `\bword\b`, `(?:ab){1000}`, `(?s:a.b)`, `(?-i:A)`,
	`[\]\[]`, `[-a]`, `[a-]`, `a*?b+?c??`, `/path with space`, `#not-a-comment`, `/\/\-\_`,
	`[[:^digit:]]`, `(?m)^a$`, `\Aa`, `\t\n\r\f`, `x{0,1000}`,
	strings.Repeat(`(?:ab){1000}`, 2),
}

// refused are patterns Go's RE2 compiles but nginx's PCRE2 refuses or
// reads otherwise, or that name nginx variables, with a word of the
// message each must give.
var refused = []struct{ re, says string }{
	{`\x{100}`, `\x at`},
	{`[^\x00-\x{10FFFF}]`, `\x at`},
	{`[\d-z]`, `does not start at a single character`},
	{`[a-\d]`, `ends at a class`},
	{`[a-b-c]`, `does not start at a single character`},
	{`(?P<a>x)(?P<a>y)`, `named group`},
	{`/(?P<host>x)`, `named group`},
	{`(?<uri>/x)`, `named group`},
	{`(?P<args>.*)`, `named group`},
	{`(?P<arg_q>.*)`, `named group`},
	{`(?P<http_x_match>.*)`, `named group`},
	{strings.Repeat(`(?:ab){1000}`, 10), `too large`},
	{`(?:[ab][cd]){1000}`, `too large`},
	{`\pL`, `escape \p`},
	{`\p{Greek}`, `escape \p`},
	{`\Qa.b\E`, `escape \Q`},
	{`\v`, `escape \v`},
	{`\C`, `escape \C`},
	{`\Z`, `escape \Z`},
	{`(a)\1`, `escape \1`},
	{`\0`, `escape \0`},
	{`[\b]`, `escape \b`},
	{`a{,3}`, `not a repetition`},
	{`a{`, `not a repetition`},
	{`{a}`, `not a repetition`},
	{`a}`, `outside a repetition`},
	{`x{1001}`, `more than 1000`},
	{`^*`, `follows nothing`},
	{`\b+`, `follows nothing`},
	{`${2}`, `follows nothing`},
	{`(?=a)`, `lookarounds`},
	{`(?<=a)b`, `lookarounds`},
	{`(?U)a*`, `lookarounds`},
	{`(?x) a`, `lookarounds`},
	{`[]a]`, `starts with ]`},
	{`[a[b]`, `inside a class`},
	{`[[.a.]]`, `inside a class`},
	{"caf\xc3\xa9", `printable ASCII`},
	{"a\nb", `printable ASCII`},
	{`\`, `lone backslash`},
	{`(a`, `not a regular expression`},
	{`a)`, `not a regular expression`},
	{`[a`, `never closed`},
	{`a**`, `follows nothing`},
	{strings.Repeat("(", 101) + strings.Repeat(")", 101), `deeper than 100`},
	{``, `empty`},
}

func TestCheckAcceptsTheSubset(t *testing.T) {
	for _, re := range accepted {
		if err := Check(re); err != nil {
			t.Errorf("Check(%q) = %v, want nil", re, err)
		}
	}
}

func TestCheckRefusesWhatNginxReadsOtherwiseSayingWhy(t *testing.T) {
	for _, c := range refused {
		err := Check(c.re)
		if err == nil {
			t.Errorf("Check(%q) = nil, want an error saying %q", c.re, c.says)
			continue
		}
		if !strings.Contains(err.Error(), c.says) {
			t.Errorf("Check(%q) = %q, want it to say %q", c.re, err, c.says)
		}
	}
}

// FuzzCheck: Check never panics, and what it accepts RE2 compiles.
func FuzzCheck(f *testing.F) {
	for _, re := range accepted {
		f.Add(re)
	}
	for _, c := range refused {
		f.Add(c.re)
	}
	f.Fuzz(func(t *testing.T, re string) {
		if Check(re) == nil && !compilesInRE2(re) {
			t.Errorf("Check accepted %q, which RE2 does not compile", re)
		}
	})
}
