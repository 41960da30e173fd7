package conf

import (
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []Directive
	}{
		{"empty input", "", nil},
		{"only comments and blank lines", "# a\n\n   # b\n", nil},
		{"comment after a directive", "user www-data; # who\ngzip on;", []Directive{D("user", "www-data"), D("gzip", "on")}},
		{"hash inside a bare token is not a comment", "return 200 a#b;", []Directive{D("return", "200", "a#b")}},
		{"directive without arguments", "ip_hash;", []Directive{D("ip_hash")}},
		{"nested blocks", "http {\n server {\n  listen 80;\n }\n}\n",
			[]Directive{B("http", nil, B("server", nil, D("listen", "80")))}},
		{"empty block stays a block", "events {}", []Directive{B("events", nil)}},
		{"tokens need no space before ; { }", "server{listen 80;}", []Directive{B("server", nil, D("listen", "80"))}},
		{"tabs and CRLF are whitespace", "a\t1;\r\nb\r\n2;\r\n", []Directive{D("a", "1"), D("b", "2")}},
		{"double quotes protect ; { } # and spaces", `add_header X "a; } b { #c";`,
			[]Directive{D("add_header", "X", "a; } b { #c")}},
		{"single quotes protect double quotes", `return 200 'say "hi"';`, []Directive{D("return", "200", `say "hi"`)}},
		{"empty quoted argument", `add_header X "" '';`, []Directive{D("add_header", "X", "", "")}},
		{"escapes inside double quotes", `d "a\"b\\c\td\ne\rf\'g\x";`,
			[]Directive{D("d", "a\"b\\c\td\ne\rf'g\\x")}},
		{"escapes inside single quotes", `d 'it\'s\n';`, []Directive{D("d", "it's\n")}},
		{"raw newline inside quotes is kept", "d \"a\nb\";", []Directive{D("d", "a\nb")}},
		{"escapes in a bare token", `d a\"b\tc;`, []Directive{D("d", "a\"b\tc")}},
		{"backslash keeps space and semicolon in a bare token, with the backslash", `d a\ b\;c;`,
			[]Directive{D("d", `a\ b\;c`)}},
		{"quote inside a bare token is ordinary", `d a"b c'd;`, []Directive{D("d", `a"b`, `c'd`)}},
		{"closing brace inside a bare token is ordinary", "d a};", []Directive{D("d", "a}")}},
		{"brace after $ stays in a bare token", "return 200 ${host}x;", []Directive{D("return", "200", "${host}x")}},
		{"brace after $ at the end of a bare token", "d a${;", []Directive{D("d", "a${")}},
		{"variables pass through", `log_format m "$remote_addr $status";`,
			[]Directive{D("log_format", "m", "$remote_addr $status")}},
		{"parenthesis right after a quote starts a token", `if ($a = "b") { return 404; }`,
			[]Directive{B("if", []string{"($a", "=", "b", ")"}, D("return", "404"))}},
		{"quoted name", `"listen" 80;`, []Directive{D("listen", "80")}},
		{"types block entries", "types {\n text/html html htm;\n}",
			[]Directive{B("types", nil, D("text/html", "html", "htm"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.text))
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.text, err)
			}
			if diff := cmp.Diff(tt.want, got, equateEmptyArgs); diff != "" {
				t.Errorf("Parse(%q) (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name string
		text string
		want string // the whole message, line number included
	}{
		{"unclosed block", "http {\n  server {\n    listen 80;\n  }\n",
			`conf: line 5: unexpected end of file, expecting "}" to close "http" opened on line 1`},
		{"stray closing brace at top level", "user nginx;\n}\n", `conf: line 2: unexpected "}"`},
		{"one closing brace too many", "http {\n  server {\n  }\n}\n}\n", `conf: line 5: unexpected "}"`},
		{"missing semicolon before a closing brace", "server {\n    listen 80\n}\n",
			`conf: line 3: unexpected "}": is ";" missing after "listen" on line 2?`},
		{"missing semicolon at end of file", "gzip on;\nuser nginx\n",
			`conf: line 3: unexpected end of file, expecting ";" or "}" after "user" on line 2`},
		{"missing semicolon inside a bare token at end of file", "gzip on;\nuser nginx",
			`conf: line 2: unexpected end of file, expecting ";" or "}"`},
		{"unterminated double quote", "gzip on;\nadd_header X \"abc;\n}\n",
			`conf: line 2: unterminated "-quoted string: unexpected end of file`},
		{"unterminated single quote", "\n\nd 'abc\\';", `conf: line 3: unterminated '-quoted string: unexpected end of file`},
		{"semicolon without a directive", "gzip on;\n;\n", `conf: line 2: unexpected ";"`},
		{"block without a name", "\n{ }", `conf: line 2: unexpected "{"`},
		{"garbage right after a quoted string", "d \"a\"b;", `conf: line 1: unexpected "b" after a quoted string`},
		{"comment right after a quoted string", "d \"a\"#c\n;", `conf: line 1: unexpected "#" after a quoted string`},
		{"closing brace right after a quoted string", "s {\nd \"a\"}", `conf: line 2: unexpected "}" after a quoted string`},
		{"backslash at end of file", `d a\`, `conf: line 1: unexpected end of file, expecting ";" or "}"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.text))
			if err == nil {
				t.Fatalf("Parse(%q) = %#v, want error %q", tt.text, got, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("Parse(%q) error:\n got %q\nwant %q", tt.text, err, tt.want)
			}
			if got != nil {
				t.Errorf("Parse returned directives along with its error: %#v", got)
			}
		})
	}
}

// TestParseDebianDefaults parses the files Debian's nginx-common 1.22 package
// installs (copied to testdata), tabs and commented-out blocks included.
func TestParseDebianDefaults(t *testing.T) {
	t.Run("nginx.conf", func(t *testing.T) {
		got := parseFile(t, "testdata/debian-nginx.conf")
		want := []Directive{
			D("user", "www-data"),
			D("worker_processes", "auto"),
			D("pid", "/run/nginx.pid"),
			D("error_log", "/var/log/nginx/error.log"),
			D("include", "/etc/nginx/modules-enabled/*.conf"),
			B("events", nil, D("worker_connections", "768")),
			B("http", nil,
				D("sendfile", "on"),
				D("tcp_nopush", "on"),
				D("types_hash_max_size", "2048"),
				D("include", "/etc/nginx/mime.types"),
				D("default_type", "application/octet-stream"),
				D("ssl_protocols", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"),
				D("ssl_prefer_server_ciphers", "on"),
				D("access_log", "/var/log/nginx/access.log"),
				D("gzip", "on"),
				D("include", "/etc/nginx/conf.d/*.conf"),
				D("include", "/etc/nginx/sites-enabled/*"),
			),
		}
		if diff := cmp.Diff(want, got, equateEmptyArgs); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		roundTrip(t, got)
	})
	t.Run("sites-available/default", func(t *testing.T) {
		got := parseFile(t, "testdata/debian-default-site.conf")
		want := []Directive{
			B("server", nil,
				D("listen", "80", "default_server"),
				D("listen", "[::]:80", "default_server"),
				D("root", "/var/www/html"),
				D("index", "index.html", "index.htm", "index.nginx-debian.html"),
				D("server_name", "_"),
				B("location", []string{"/"}, D("try_files", "$uri", "$uri/", "=404")),
			),
		}
		if diff := cmp.Diff(want, got, equateEmptyArgs); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		roundTrip(t, got)
	})
	t.Run("mime.types", func(t *testing.T) {
		got := parseFile(t, "testdata/debian-mime.types")
		if len(got) != 1 || got[0].Name != "types" || len(got[0].Block) < 50 {
			t.Fatalf("want one types block with many entries, got %d directives", len(got))
		}
		first := got[0].Block[:2]
		want := []Directive{D("text/html", "html", "htm", "shtml"), D("text/css", "css")}
		if diff := cmp.Diff(want, first); diff != "" {
			t.Errorf("first entries (-want +got):\n%s", diff)
		}
	})
}

func parseFile(t *testing.T, name string) []Directive {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return dirs
}

// roundTrip asserts that dirs survive Render and Parse unchanged.
func roundTrip(t *testing.T, dirs []Directive) []byte {
	t.Helper()
	text, err := Render(dirs)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	back, err := Parse(text)
	if err != nil {
		t.Fatalf("Parse(Render(x)): %v\n%s", err, text)
	}
	if diff := cmp.Diff(dirs, back, equateEmptyArgs); diff != "" {
		t.Fatalf("Parse(Render(x)) != x (-want +got):\n%s\nrendered:\n%s", diff, text)
	}
	return text
}

// TestParseCountsEscapedNewlines: nginx counts every LF, escaped or quoted,
// so line numbers after multi-line tokens must still match the file.
func TestParseCountsEscapedNewlines(t *testing.T) {
	text := "d \"a\nb\" c\\\nd;\n}"
	_, err := Parse([]byte(text))
	if err == nil || !strings.HasPrefix(err.Error(), "conf: line 4: ") {
		t.Fatalf("Parse(%q) error = %v, want one on line 4", text, err)
	}
}
