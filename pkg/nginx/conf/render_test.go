package conf

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// equateEmptyArgs lets nil and empty Args compare equal (Parse never returns
// empty Args) while keeping nil and empty Block distinct, since that is the
// difference between "name;" and "name {}".
var equateEmptyArgs = cmp.FilterPath(func(p cmp.Path) bool {
	f, ok := p.Last().(cmp.StructField)
	return ok && f.Name() == "Args"
}, cmpopts.EquateEmpty())

// parseOne parses text that must hold exactly one simple directive.
func parseOne(t *testing.T, text string) Directive {
	t.Helper()
	dirs, err := Parse([]byte(text))
	if err != nil {
		t.Fatalf("Parse(%q): %v", text, err)
	}
	if len(dirs) != 1 {
		t.Fatalf("Parse(%q) = %d directives, want 1: %#v", text, len(dirs), dirs)
	}
	return dirs[0]
}

func TestQuote(t *testing.T) {
	tests := []struct {
		name string
		arg  string
		want string
	}{
		{"word stays bare", "on", "on"},
		{"path stays bare", "/var/log/nginx/access.log", "/var/log/nginx/access.log"},
		{"regex stays bare", `^/api/(.*)$`, `^/api/(.*)$`},
		{"variable stays bare", "$host", "$host"},
		{"address with brackets stays bare", "[::]:80", "[::]:80"},
		{"empty string is quoted", "", `""`},
		{"space is quoted", "a b", `"a b"`},
		{"semicolon is quoted", "a;b", `"a;b"`},
		{"opening brace is quoted", "{", `"{"`},
		{"closing brace is quoted", "a}", `"a}"`},
		{"braced variable is quoted", "${host}", `"${host}"`},
		{"hash is quoted", "#x", `"#x"`},
		{"single quote needs no escape", "it's", `"it's"`},
		{"double quote is escaped", `say "hi"`, `"say \"hi\""`},
		{"backslash is escaped", `C:\new\table`, `"C:\\new\\table"`},
		{"tab LF CR become escapes", "a\tb\nc\rd", `"a\tb\nc\rd"`},
		{"UTF-8 passes through quoted", "héllo", `"héllo"`},
		{"invalid UTF-8 passes through quoted", "\xff\xfe", "\"\xff\xfe\""},
		{"longest bare token", strings.Repeat("a", maxToken), strings.Repeat("a", maxToken)},
		{"longest escaped token", strings.Repeat(`"`, (maxToken-2)/2), `"` + strings.Repeat(`\"`, (maxToken-2)/2) + `"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Quote(tt.arg)
			if err != nil {
				t.Fatalf("Quote(%q): %v", tt.arg, err)
			}
			if got != tt.want {
				t.Errorf("Quote(%q) = %s, want %s", tt.arg, got, tt.want)
			}
			// The token must read back as the argument, and as one argument.
			d := parseOne(t, "d "+got+";")
			if diff := cmp.Diff(D("d", tt.arg), d); diff != "" {
				t.Errorf("token %s does not read back (-want +got):\n%s", got, diff)
			}
		})
	}
}

func TestQuoteRefuses(t *testing.T) {
	tests := []struct {
		name string
		arg  string
		want error
	}{
		{"NUL", "a\x00b", errControlChar},
		{"SOH", "\x01", errControlChar},
		{"vertical tab", "\v", errControlChar},
		{"form feed", "\f", errControlChar},
		{"escape sequence", "\x1b[31mred", errControlChar},
		{"unit separator", "\x1f", errControlChar},
		{"DEL", "a\x7f", errControlChar},
		{"bare token one byte too long", strings.Repeat("a", maxToken+1), errTooLong},
		{"escaping pushes token over the limit", strings.Repeat(`\`, (maxToken-2)/2+1), errTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Quote(tt.arg)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Quote(%.20q) = %.20q, %v; want error %v", tt.arg, got, err, tt.want)
			}
		})
	}
}

func TestRenderGolden(t *testing.T) {
	dirs := []Directive{
		D("worker_processes", "auto"),
		D("pid", "/run/nginx.pid"),
		B("events", nil),
		B("http", nil,
			D("include", "mime.types"),
			D("log_format", "main", `$remote_addr [$time_local] "$request"`),
			B("map", []string{"$http_upgrade", "$connection_upgrade"},
				D("default", "upgrade"),
				D("", ""),
				D(`~^\Q/a b\E(/.*)$`, "/x$1"),
			),
			B("geo", []string{"$remote_addr", "$trusted"}, D("10.0.0.0/8", "1")),
			B("server", nil,
				D("listen", "80", "default_server"),
				D("server_name", "example.com", "*.example.com"),
				D("add_header", "X-Empty", ""),
				B("location", []string{"~", `^/api/(.*)$`},
					D("return", "200", "ok\n"),
				),
			),
		),
		D("include", "extra.conf"),
	}
	want := `worker_processes auto;
pid /run/nginx.pid;

events {}

http {
    include mime.types;
    log_format main "$remote_addr [$time_local] \"$request\"";
    map $http_upgrade $connection_upgrade {
        default upgrade;
        "" "";
        "~^\\Q/a b\\E(/.*)$" /x$1;
    }
    geo $remote_addr $trusted {
        10.0.0.0/8 1;
    }
    server {
        listen 80 default_server;
        server_name example.com *.example.com;
        add_header X-Empty "";
        location ~ ^/api/(.*)$ {
            return 200 "ok\n";
        }
    }
}

include extra.conf;
`
	got, err := Render(dirs)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("Render (-want +got):\n%s", diff)
	}
	back, err := Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(dirs, back, equateEmptyArgs); diff != "" {
		t.Errorf("Parse(Render(x)) != x (-want +got):\n%s", diff)
	}
}

func TestRenderRefuses(t *testing.T) {
	tests := []struct {
		name    string
		dirs    []Directive
		wantErr error
		wantMsg string
	}{
		{"empty name", []Directive{D("")}, errBadName, `conf: "": invalid directive name`},
		{"upper-case name", []Directive{D("Listen", "80")}, errBadName, `"Listen"`},
		{"name starting with a digit", []Directive{D("1listen")}, errBadName, `"1listen"`},
		{"name with a dash", []Directive{D("add-header")}, errBadName, `"add-header"`},
		{"name smuggling a directive", []Directive{D("x; include /etc/passwd; y")}, errBadName, `"x; include /etc/passwd; y"`},
		{"bad name deep inside blocks", []Directive{B("http", nil, B("server", nil, D("a b")))},
			errBadName, `conf: http > server > "a b": invalid directive name`},
		{"control character in a nested argument",
			[]Directive{B("http", nil, B("server", nil, D("add_header", "X", "a\x00b")))},
			errControlChar, "conf: http > server > add_header: argument 2: control character 0x00 at byte 1"},
		{"control character in a block's argument",
			[]Directive{B("location", []string{"/\x1b"})},
			errControlChar, "conf: location: argument 1:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Render(tt.dirs)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("Render = %q, %v; want error %v", got, err, tt.wantErr)
			}
			if got != nil {
				t.Errorf("Render returned text along with its error: %q", got)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not contain %q", err, tt.wantMsg)
			}
		})
	}
}

func TestRenderEmptyAndSimpleBlockAreDistinct(t *testing.T) {
	got, err := Render([]Directive{D("a"), B("a", nil), B("a", nil, D("b"))})
	if err != nil {
		t.Fatal(err)
	}
	want := "a;\n\na {}\n\na {\n    b;\n}\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("Render (-want +got):\n%s", diff)
	}
}
