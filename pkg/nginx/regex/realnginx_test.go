package regex

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

func compilesInRE2(re string) bool {
	_, err := regexp.Compile(re)
	return err == nil
}

// nginxCompiles reports whether the real nginx loads a configuration that
// uses each of res where a route's regular expressions go: a regex
// location and a map entry. The error quotes nginx.
func nginxCompiles(t *testing.T, nginx string, res []string) error {
	t.Helper()
	prefix := t.TempDir()
	if err := os.Mkdir(filepath.Join(prefix, "logs"), 0o755); err != nil {
		t.Fatal(err)
	}
	var maps, locations []conf.Directive
	for i, re := range res {
		whole := "^(?:" + re + `)\z`
		maps = append(maps, conf.B("map", []string{"$uri", "$m" + strconv.Itoa(i)}, conf.D("~"+whole, "1")))
		locations = append(locations, conf.B("location", []string{"~", whole}, conf.D("return", "200")))
	}
	http := append(maps, conf.D("access_log", "off"))
	for _, temp := range []string{"client_body_temp_path", "proxy_temp_path", "fastcgi_temp_path", "uwsgi_temp_path", "scgi_temp_path"} {
		http = append(http, conf.D(temp, filepath.Join(prefix, temp)))
	}
	http = append(http, conf.B("server", nil, append([]conf.Directive{conf.D("listen", "127.0.0.1:1")}, locations...)...))
	config, err := conf.Render([]conf.Directive{conf.D("pid", filepath.Join(prefix, "nginx.pid")), conf.B("events", nil), conf.B("http", nil, http...)})
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(prefix, "nginx.conf")
	if err := os.WriteFile(file, config, 0o644); err != nil {
		t.Fatal(err)
	}
	return tools.NginxTest(nginx, prefix, file)
}

// TestNginxCompilesEveryPatternCheckAccepts: the table's patterns, and
// thousands drawn from a grammar that mixes the subset with what lies
// outside it, all that Check accepts load in the real nginx together.
// One refused pattern would make nginx refuse the whole file, as it would
// a shared Gateway's.
func TestNginxCompilesEveryPatternCheckAccepts(t *testing.T) {
	nginx := tools.Nginx(t)
	res := append([]string(nil), accepted...)
	rnd := rand.New(rand.NewPCG(1, 2))
	drawn, kept := 0, 0
	for drawn < 20000 && kept < 3000 {
		drawn++
		re := randomPattern(rnd, 3)
		if Check(re) == nil {
			res = append(res, re)
			kept++
		}
	}
	t.Logf("%d of %d drawn patterns accepted", kept, drawn)
	if kept < 1000 {
		t.Fatalf("the grammar drew only %d accepted patterns", kept)
	}
	if err := nginxCompiles(t, nginx, res); err != nil {
		// Name the first pattern nginx refuses.
		for _, re := range res {
			if err := nginxCompiles(t, nginx, []string{re}); err != nil {
				t.Fatalf("Check accepts %q, which nginx refuses: %v", re, err)
			}
		}
		t.Fatal(err)
	}
}

// TestNginxRefusesWhatCheckRefusesForIt: the refused patterns that RE2
// compiles and that Check refuses because of PCRE2 make the real nginx
// refuse the whole configuration; were PCRE2 to take them, the subset
// could grow.
func TestNginxRefusesWhatCheckRefusesForIt(t *testing.T) {
	nginx := tools.Nginx(t)
	for _, re := range []string{`\x{100}`, `[^\x00-\x{10FFFF}]`, `[\d-z]`, `(?P<a>x)(?P<a>y)`, strings.Repeat(`(?:ab){1000}`, 10)} {
		if !compilesInRE2(re) {
			t.Errorf("RE2 does not compile %q: it is no case of a difference", re)
		}
		switch err := nginxCompiles(t, nginx, []string{re}); {
		case err == nil:
			t.Errorf("nginx compiles %q", re)
		case !strings.Contains(err.Error(), "pcre2_compile() failed"):
			t.Errorf("nginx refuses %q, but not for its regular expression: %v", re, err)
		}
	}
}

// pieces of the grammar: in the subset, and outside it.
var pieces = []string{
	"a", "Z", "0", "/", "-", "_", ".", " ", "#", "~", "%", "@", "!", "&", "=", ",", ":",
	`\.`, `\/`, `\-`, `\{`, `\}`, `\[`, `\]`, `\(`, `\)`, `\*`, `\\`, `\$`, `\^`, `\|`, `\?`,
	`\d`, `\D`, `\s`, `\S`, `\w`, `\W`, `\b`, `\B`, `\A`, `\z`, `\t`, `\n`, `\x41`, `\x00`, `\xff`,
	"[a-z]", "[^/]", "[[:alpha:]]", `[\d_-]`, `[\x00-\x7f]`, "[.]", "[a-]", `[\]]`,
	"^", "$", "|",
	// outside
	`\x{41}`, `\pL`, `\Q`, `\E`, `\v`, `\C`, `\1`, `\0`, `[\d-z]`, "{", "}", "{,2}", "(?P<n>", "(?<n>", "(?=", "(?U)", "[]", "[[", "é",
}

var quantifiers = []string{"", "", "", "*", "+", "?", "*?", "+?", "{2}", "{1,3}", "{2,}", "{0,1000}"}

// randomPattern draws a pattern of up to depth nested groups.
func randomPattern(rnd *rand.Rand, depth int) string {
	var b strings.Builder
	for range 1 + rnd.IntN(5) {
		if depth > 0 && rnd.IntN(4) == 0 {
			open := []string{"(", "(?:", "(?i)", "(?i:", "(?s:"}[rnd.IntN(5)]
			b.WriteString(open)
			b.WriteString(randomPattern(rnd, depth-1))
			if open != "(?i)" {
				b.WriteString(")")
			}
		} else {
			b.WriteString(pieces[rnd.IntN(len(pieces))])
		}
		b.WriteString(quantifiers[rnd.IntN(len(quantifiers))])
	}
	return b.String()
}
