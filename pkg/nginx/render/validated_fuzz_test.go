package render

import (
	"context"
	"crypto/sha256"
	"flag"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/randfill"
	"sigs.k8s.io/yaml"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// FuzzValidatedSpecRendersAConfigNginxAccepts is a differential test of
// admission against the real nginx: every spec that validation.NginxOperator
// accepts (the CRD's schema and CEL rules, exactly as admission applies them,
// plus the Go rules) and that Render does not refuse must give a
// configuration that `nginx -t` accepts, and whose text parses back to the
// very directive tree Directives built. A spec that passes admission but that
// nginx refuses would leave a rolled pod crash-looping.
//
// The fuzz input does not fill a spec at random (nearly every such spec is
// refused, and the property would be checked on almost nothing): it starts
// from a valid spec and picks edits (a port, a server, a server name, a
// location, a header, a global setting) and their values from tables of
// realistic and hostile strings and numbers. About two inputs in five pass
// admission (TestValidatedSpecFuzzInputsAreNotVacuous holds that up).
//
// Run it with -run '^$': the package's TestMain would otherwise start a
// cluster (it does not when fuzzing).
func FuzzValidatedSpecRendersAConfigNginxAccepts(f *testing.F) {
	nginxBin := tools.Nginx(f)
	dir := f.TempDir()
	check := &nginxChecker{bin: nginxBin, dir: dir, results: map[[sha256.Size]byte]string{}}

	seeds := [][]byte{
		nil, // the base spec as it is
		[]byte("base spec, a few edits"),
		[]byte("\x00\x00\x00\x00\x00\x00\x00\x01\x05\x00\x00\x00\x00\x00\x00\x00"),
		[]byte("\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0"),
		[]byte("server { listen 80; } location ~ ^/(?<x>.*)$ { return 200 $x; }\r\n"),
		[]byte(strings.Repeat("0123456789abcdef", 16)),
	}
	for _, s := range seeds {
		f.Add(s)
	}
	var mu sync.Mutex
	outcomes := map[outcome]int{}
	f.Cleanup(func() {
		if fuzzing() {
			return
		}
		// The seeds must reach both ends: admission refusing, and a config
		// going through nginx -t. Counted only when every seed ran.
		mu.Lock()
		defer mu.Unlock()
		total := 0
		for _, n := range outcomes {
			total += n
		}
		f.Logf("seed outcomes: %v", outcomes)
		if total >= len(seeds) && (outcomes[refusedByValidation] == 0 || outcomes[checkedByNginx] == 0) {
			f.Errorf("the seeds must include specs refused by validation and specs checked by nginx -t; got %v", outcomes)
		}
	})
	f.Fuzz(func(t *testing.T, data []byte) {
		obj := specFromFuzz(randfill.NewFromGoFuzz(data))
		o := validatedRendersAcceptedConfig(t, obj, check)
		mu.Lock()
		outcomes[o]++
		mu.Unlock()
	})
}

type outcome string

const (
	refusedByValidation outcome = "refused by validation"
	refusedByRender     outcome = "refused by Render"
	checkedByNginx      outcome = "accepted by nginx -t"
)

// validatedRendersAcceptedConfig is the property, for one object.
func validatedRendersAcceptedConfig(t *testing.T, obj *v1beta1.NginxOperator, check *nginxChecker) outcome {
	t.Helper()
	// What the controller renders is the object as the apiserver stores it:
	// with the CRD's defaults.
	admitted, errs := validation.NginxOperator(context.Background(), obj)
	if len(errs) > 0 {
		return refusedByValidation
	}
	spec := admitted.Spec
	opts := Options{
		Paths:     testPaths(t, check.dir, &spec),
		Namespace: obj.Namespace,
		Services:  localEndpoints(&spec),
		IPv6:      slices.Contains(spec.Service.IPFamilies, corev1.IPv6Protocol),
	}
	text, err := Config(&spec, opts)
	if err != nil {
		// The emitter refused an argument it cannot quote (the controller
		// reports it as InvalidConfig and does not retry).
		return refusedByRender
	}
	want, _ := Directives(&spec, opts)
	got, err := conf.Parse(text)
	if err != nil {
		t.Fatalf("the rendered config does not parse: %v\nspec: %s\nconfig:\n%s", err, specYAML(spec), text)
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("the rendered config parses to other directives than Directives built (-want +got):\n%s\nspec: %s\nconfig:\n%s", diff, specYAML(spec), text)
	}
	if msg := check.run(t, text); msg != "" {
		t.Fatalf("validation and Render accepted a spec that nginx -t refuses:\n%s\nspec: %s\nconfig:\n%s", msg, specYAML(spec), text)
	}
	return checkedByNginx
}

// nginxChecker runs nginx -t on configs under one directory, remembering the
// verdict on each distinct config (the fuzzer repeats itself a lot).
type nginxChecker struct {
	bin, dir string
	mu       sync.Mutex
	results  map[[sha256.Size]byte]string
}

// run returns "" if nginx -t accepts text, or nginx's output.
func (c *nginxChecker) run(t *testing.T, text []byte) string {
	t.Helper()
	key := sha256.Sum256(text)
	c.mu.Lock()
	defer c.mu.Unlock()
	if msg, ok := c.results[key]; ok {
		return msg
	}
	file := filepath.Join(c.dir, "nginx.conf")
	if err := os.WriteFile(file, text, 0o644); err != nil {
		t.Fatal(err)
	}
	var msg string
	if err := tools.NginxTest(c.bin, c.dir, file); err != nil {
		msg = err.Error()
	}
	if len(c.results) < 100000 {
		c.results[key] = msg
	}
	return msg
}

func specYAML(spec v1beta1.NginxOperatorSpec) string {
	b, err := yaml.Marshal(spec) // YAML: readable, and pastes into a CR
	if err != nil {
		return err.Error()
	}
	return "\n" + string(b)
}

// fuzzing is true in a `go test -fuzz` run and in its workers.
func fuzzing() bool {
	for _, name := range []string{"test.fuzz", "test.fuzzworker"} {
		if fl := flag.Lookup(name); fl != nil && fl.Value.String() != "" && fl.Value.String() != "false" {
			return true
		}
	}
	return false
}

// TestValidatedSpecFuzzInputsAreNotVacuous keeps the fuzz target honest: of
// many random inputs, a good share must pass admission (so nginx -t checks
// something) and a good share must be refused (so the tables stay hostile).
func TestValidatedSpecFuzzInputsAreNotVacuous(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const n = 300
	accepted := 0
	for range n {
		data := make([]byte, 8+rng.Intn(256))
		rng.Read(data)
		if _, errs := validation.NginxOperator(context.Background(), specFromFuzz(randfill.NewFromGoFuzz(data))); len(errs) == 0 {
			accepted++
		}
	}
	t.Logf("%d of %d random fuzz inputs pass validation", accepted, n)
	if accepted < n/5 || accepted > n*9/10 {
		t.Errorf("%d of %d random fuzz inputs pass validation, want between 20%% and 90%%: retune specFromFuzz", accepted, n)
	}
}

// The tables the fuzz input picks values from. Each field has values the
// schema should accept, boundaries included (good), and values it should
// refuse (bad); on top come strings that attack nginx's syntax (quotes,
// ; { } #, CR/LF, $variables, NUL, non-ASCII), for any string field.
type values struct{ good, bad []string }

var (
	hostile = []string{
		"", " ", ";", "{", "}", "#", "'", `"`, `\`, "$host", "${host}", "$", "$1",
		"a;b", "a b", "a\tb", "a\nb", "a\r\nb", "a\x00b", "a\x7fb", "é", "∑ü",
		`a"b`, `a\"b`, `a\\`, "x; } server { listen 80", "include /etc/passwd;", "~", "=", "@x", "^~",
		"'a'", "a{b}", "a#b", "\u2028", "\xff\xfe",
	}
	hostNames = values{
		good: []string{
			"example.com", "_", "*.example.com", "a", "localhost", "xn--bcher-kva.example", "a-b.c-d", "1.2.3.4",
			"www.example.com", "*.a", "0", hostOfLength(30), hostOfLength(40), hostOfLength(47), hostOfLength(48),
			hostOfLength(55), hostOfLength(63), hostOfLength(64), hostOfLength(100), hostOfLength(253),
			"*." + hostOfLength(60), strings.Repeat("a", 63) + ".com", strings.Repeat("a", 64) + ".com",
		},
		bad: []string{"example.com.", "*", "a.*", "-a.com", "a_b.com", "A.com", "a..b", "a.b-", hostOfLength(254), "*.*.a"},
	}
	paths = values{
		good: []string{
			"/", "/a", "/api/", "/old", "/a'b", "/a(b)", "/%20", "/~user", "/a:b@c", "/*", "/a+b", "/a,b", "/=",
			"/a//b", "/..", "/a!b", "/&", "/a=b", "/%", "/%zz", "/static/", "/a/b/c/", "//", "/'", "/a)",
			"/" + strings.Repeat("p", 511),
		},
		bad: []string{"/a{", "/a b", "/a;b", "/$uri", "a", "~ ^/x", "@named", "= /x", "/\\", "/a#", "/" + strings.Repeat("p", 512)},
	}
	urls = values{
		good: []string{
			"https://example.com/", "http://a", "https://example.com/a?b=c&d=e#f", "https://[::1]:8443/",
			"https://a/;b", "https://a/'(x)'", "https://a/%00", "https://a/#", "https://a:99999/",
			"https://a/[x]!*+,=@~", "https://user:pw@a/", "https://a/" + strings.Repeat("u", 2037), "http://;",
		},
		bad: []string{"https://a/$host", "javascript:alert(1)", "https://a/\r\nX: y", "https://a/{x}", "https://a/ b",
			"http://", "https://a/" + strings.Repeat("u", 2038), "https://a/\"x"},
	}
	headerNames = values{
		good: []string{"X-A", "X-Frame-Options", "Set-Cookie", "Cache-Control", "!", "a.b", "X_Under", "~", "'", "#", strings.Repeat("h", 128)},
		bad:  []string{"X A", "X:A", "", "X{", strings.Repeat("h", 129)},
	}
	headerValues = values{
		good: []string{
			"", "v", "max-age=60; includeSubDomains", "a{b}c", `"quoted"`, `a\b`, "'", "#", "é", " leading", "trailing ",
			"; add_header X 1", "{", "}", "nginx-operator; {not a directive}", strings.Repeat("v", 1024),
			`\"`, `\\"`, "a\\", "%s%n", "\xff",
		},
		bad: []string{"$host", "a\r\nb", "\t", "a\x00", strings.Repeat("v", 1025)},
	}
	serviceNames = values{
		good: []string{"api", "a", "my-svc", strings.Repeat("s", 63)},
		bad:  []string{"API", "a.b", "1a", "a-", strings.Repeat("s", 64)},
	}
	secretNames = values{
		good: []string{"web-tls", "a.b", "x", "tls.crt", "0", strings.Repeat("s", 253)},
		bad:  []string{"../x", "a/b", "A", ".", strings.Repeat("s", 254)},
	}
	portNames = values{
		good: []string{"http", "https", "metrics", "a", "web-1", "alt", strings.Repeat("p", 15)},
		bad:  []string{"HTTP", "a-", "1a", strings.Repeat("p", 16)},
	}
	bodySizes = values{
		good: []string{"0", "1", "1m", "512k", "1g", "1G", "10M", "999999999", "999999999k", "999999999m", "999999999g", "08", "000000000"},
		bad:  []string{"1000000000", "1t", "-1", "1 m", "1mm", "0x10", "1.5m"},
	}
	cidrs = values{
		good: []string{"10.0.0.0/8", "0.0.0.0/0", "192.168.1.1/32", "fd00::/8", "::/0", "2001:db8::1/128"},
		bad:  []string{"10.0.0.1", "10.0.0.0/33", "10.0.0.0/8 1", "default", "::/129"},
	}
	expiry = values{
		good: []string{"1h", "30s", "7d", "4w", "6M", "1y", "max", "epoch", "99999999y"},
		bad:  []string{"off", "-1", "1x", "1h 2m", "@15h", "modified 1h", "3600"},
	}
	realms = values{
		good: []string{"Restricted", "Team A", "a", "Off", "{x}", "a;b", "#", "é", strings.Repeat("r", 128)},
		bad:  []string{"off", `a"b`, `a\b`, "$remote_user", "a\nb", strings.Repeat("r", 129)},
	}
	tlsProtocols = values{good: []string{"TLSv1.2", "TLSv1.3"}, bad: []string{"TLSv1.1", "TLSv1", "SSLv3", "tlsv1.2"}}
	ciphers      = values{
		good: []string{"ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305", "DHE-RSA-AES256-GCM-SHA384"},
		bad:  []string{"ALL", "HIGH:!aNULL", "AES128-SHA", "NULL-SHA"},
	}
	mimeTypes = values{
		good: []string{"text/css", "application/json", "image/svg+xml", "text/html", "application/vnd.api+json", "a/b"},
		bad:  []string{"*", "text/*", "text", "TEXT/CSS", "a/b c"},
	}
	prefixes = values{
		good: append([]string{"", "/", "/v2", "/v2/"}, paths.good...),
		bad:  paths.bad,
	}
	numbers = []int32{
		0, 1, 2, 15, 16, 17, 59, 60, 80, 200, 301, 302, 303, 307, 308, 404, 999, 1000, 1023, 1024, 3600, 3601,
		8080, 8443, 9113, 18080, 18081, 65535, 65536, -1, 1<<31 - 1, -1 << 31,
	}
	methodNames = values{
		good: []string{"round_robin", "least_conn", "ip_hash", "hash", "hash consistent", "random", "random two", "random two least_conn"},
		bad:  []string{"least_time header", "random two least_time=header", "hash  consistent", "sticky", "LEAST_CONN", "least_conn; include /etc/passwd"},
	}
	hashSources = values{
		good: []string{"Header", "Cookie", "QueryParameter", "RequestURI", "ClientIP"},
		bad:  []string{"header", "Variable", "URI"},
	}
	keyNames = values{
		good: []string{"X-User", "session", "user_id", "a", "0", "x-Forwarded-For", strings.Repeat("k", 64), strings.Repeat("k", 128)},
		bad:  []string{"my key", "a.b", "a$b", strings.Repeat("k", 129)},
	}
	retryConditions = values{
		good: []string{"error", "timeout", "invalid_header", "http_500", "http_502", "http_503", "http_504", "http_403", "http_404", "http_429"},
		bad:  []string{"non_idempotent", "off", "http_501", "updating", "HTTP_502"},
	}
	sameSites         = values{good: []string{"Strict", "Lax", "None"}, bad: []string{"none", "lax", "Off"}}
	backendProtocols  = values{good: []string{"HTTP", "HTTPS", "GRPC", "GRPCS"}, bad: []string{"grpc", "H2C", "FCGI", "AUTO_HTTP"}}
	goodPorts         = []int32{1024, 8000, 8080, 8081, 8443, 9000, 9112, 9114, 18079, 18082, 65535}
	goodUpstreamPorts = []int32{1, 80, 443, 8080, 65535}
)

// hostOfLength is a valid DNS name of exactly n characters (labels of at
// most 63).
func hostOfLength(n int) string {
	s := ""
	for len(s) < n {
		if s != "" {
			s += "."
		}
		label := min(n-len(s), 63)
		if n-len(s)-label == 1 {
			label-- // leave room for "." and a label of one character
		}
		s += strings.Repeat("a", label)
	}
	return s
}

// picker draws choices from a randfill.Filler fed by the fuzz input.
type picker struct{ f *randfill.Filler }

func (p picker) intn(n int) int {
	var u uint16
	p.f.Fill(&u)
	return int(u) % n
}

func (p picker) chance(percent int) bool { return p.intn(100) < percent }

// str is usually a good value of v, otherwise a bad one, a hostile string or
// (rarely) any string.
func (p picker) str(v values) string {
	switch {
	case p.chance(75):
		return v.good[p.intn(len(v.good))]
	case p.chance(60):
		return v.bad[p.intn(len(v.bad))]
	case p.chance(80):
		return hostile[p.intn(len(hostile))]
	default:
		var s string
		p.f.Fill(&s)
		return s
	}
}

// num is usually one of good (the valid values and their boundaries for the
// field at hand), otherwise any interesting number, or (rarely) any int32.
func (p picker) num(good ...int32) int32 {
	switch {
	case p.chance(70):
		return good[p.intn(len(good))]
	case p.chance(90):
		return numbers[p.intn(len(numbers))]
	default:
		var n int32
		p.f.Fill(&n)
		return n
	}
}

// specFromFuzz is a valid base instance edited as the fuzz input says.
func specFromFuzz(f *randfill.Filler) *v1beta1.NginxOperator {
	p := picker{f}
	spec := v1beta1.NginxOperatorSpec{
		Replicas: ptr.To[int32](2),
		Ports:    []v1beta1.Port{{Name: "http", ContainerPort: 8080}, {Name: "https", ContainerPort: 8443}},
		Config: v1beta1.NginxConfig{Servers: []v1beta1.Server{
			{Port: "http", ServerNames: []string{"example.com"}, Locations: []v1beta1.Location{
				{Path: "/", Static: &v1beta1.StaticLocation{}},
				{Path: "/api/", Proxy: &v1beta1.ProxyLocation{Service: "api", Port: 80}},
			}},
			{Port: "https", TLS: &v1beta1.TLS{SecretName: "web-tls"}, Locations: []v1beta1.Location{
				{Path: "/old", Exact: true, Redirect: &v1beta1.RedirectLocation{URL: "https://example.com/new", Code: 301}},
			}},
		}},
	}
	servers := func() []v1beta1.Server { return spec.Config.Servers }
	anyServer := func() *v1beta1.Server {
		if len(servers()) == 0 {
			spec.Config.Servers = append(spec.Config.Servers, v1beta1.Server{Port: spec.Ports[0].Name})
		}
		return &spec.Config.Servers[p.intn(len(servers()))]
	}
	anyLocation := func() *v1beta1.Location {
		s := anyServer()
		if len(s.Locations) == 0 {
			s.Locations = append(s.Locations, v1beta1.Location{Path: "/", Static: &v1beta1.StaticLocation{}})
		}
		return &s.Locations[p.intn(len(s.Locations))]
	}
	handler := func(l *v1beta1.Location) {
		l.Static, l.Proxy, l.Redirect = nil, nil, nil
		switch p.intn(7) {
		case 0, 1:
			l.Static = &v1beta1.StaticLocation{Autoindex: p.chance(50)}
		case 2, 3:
			l.Proxy = &v1beta1.ProxyLocation{Service: p.str(serviceNames), Port: p.num(goodUpstreamPorts...)}
			if p.chance(50) {
				l.Proxy.ReadTimeoutSeconds = p.num(1, 60, 3600)
			}
		case 4, 5:
			l.Redirect = &v1beta1.RedirectLocation{URL: p.str(urls)}
			if p.chance(70) {
				l.Redirect.Code = p.num(301, 302, 303, 307, 308)
			}
		default: // none or two handlers: refused by CEL
			if p.chance(50) {
				l.Static, l.Redirect = &v1beta1.StaticLocation{}, &v1beta1.RedirectLocation{URL: "https://a/"}
			}
		}
	}

	anyProxy := func() *v1beta1.Location {
		l := anyLocation()
		if l.Proxy == nil {
			l.Static, l.Redirect = nil, nil
			l.Proxy = &v1beta1.ProxyLocation{Service: p.str(serviceNames), Port: p.num(goodUpstreamPorts...)}
		}
		return l
	}
	pathModifier := func() *v1beta1.PathModifier {
		if p.chance(50) {
			return &v1beta1.PathModifier{Type: "ReplaceFullPath", ReplaceFullPath: ptr.To(p.str(paths))}
		}
		return &v1beta1.PathModifier{Type: "ReplacePrefixMatch", ReplacePrefixMatch: ptr.To(p.str(prefixes))}
	}
	headerList := func() []v1beta1.Header {
		var out []v1beta1.Header
		for n := p.intn(3); n > 0; n-- {
			out = append(out, v1beta1.Header{Name: p.str(headerNames), Value: p.str(headerValues)})
		}
		return out
	}
	headerModifier := func() *v1beta1.HeaderModifier {
		m := &v1beta1.HeaderModifier{Set: headerList(), Add: headerList()}
		if p.chance(50) {
			m.Remove = []string{p.str(headerNames)}
		}
		return m
	}

	access := func() (*v1beta1.IPAccess, *v1beta1.HTTPBasicAuth, *v1beta1.RateLimit) {
		var ip *v1beta1.IPAccess
		var auth *v1beta1.HTTPBasicAuth
		var limit *v1beta1.RateLimit
		if p.chance(50) {
			ip = &v1beta1.IPAccess{}
			for n := p.intn(3); n > 0; n-- {
				ip.Allow = append(ip.Allow, p.str(cidrs))
			}
			for n := p.intn(3); n > 0; n-- {
				ip.Deny = append(ip.Deny, p.str(cidrs))
			}
		}
		if p.chance(50) {
			auth = &v1beta1.HTTPBasicAuth{Disabled: p.chance(20), Realm: p.str(realms)}
			if p.chance(90) {
				auth.SecretName = p.str(secretNames)
			}
			if p.chance(30) {
				auth.Key = p.str(secretNames)
			}
		}
		if p.chance(50) {
			limit = &v1beta1.RateLimit{Burst: p.num(0, 1, 100000), ZoneSizeMiB: p.num(1, 64)}
			if p.chance(60) {
				limit.RequestsPerSecond = p.num(1, 100000)
			}
			if p.chance(50) {
				limit.RequestsPerMinute = p.num(1, 100000)
			}
		}
		return ip, auth, limit
	}

	for edits := p.intn(10); edits > 0; edits-- {
		switch p.intn(29) {
		case 0:
			spec.Ports = append(spec.Ports, v1beta1.Port{Name: p.str(portNames), ContainerPort: p.num(goodPorts...)})
		case 1:
			spec.Ports[p.intn(len(spec.Ports))].ContainerPort = p.num(goodPorts...)
		case 2:
			spec.Config.WorkerConnections = p.num(16, 512, 1024, 65535)
		case 3:
			spec.Config.ClientMaxBodySize = p.str(bodySizes)
		case 4:
			spec.Config.KeepaliveTimeoutSeconds = p.num(0, 1, 65, 3600)
		case 5:
			s := v1beta1.Server{Port: spec.Ports[p.intn(len(spec.Ports))].Name, DefaultServer: p.chance(30)}
			if p.chance(10) {
				s.Port = p.str(portNames)
			}
			if p.chance(30) {
				s.TLS = &v1beta1.TLS{SecretName: p.str(secretNames)}
			}
			spec.Config.Servers = append(spec.Config.Servers, s)
		case 6, 7:
			s := anyServer()
			s.ServerNames = append(s.ServerNames, p.str(hostNames))
		case 8, 9:
			s := anyServer()
			l := v1beta1.Location{Path: p.str(paths), Exact: p.chance(30)}
			handler(&l)
			s.Locations = append(s.Locations, l)
		case 10:
			handler(anyLocation())
		case 11, 12:
			l := anyLocation()
			l.Headers = append(l.Headers, v1beta1.Header{Name: p.str(headerNames), Value: p.str(headerValues)})
		case 13:
			s := anyServer()
			switch {
			case p.chance(40):
				s.DefaultServer = !s.DefaultServer
			case p.chance(50):
				s.TLS = &v1beta1.TLS{SecretName: p.str(secretNames)}
			default:
				s.TLS = nil
			}
		case 14:
			spec.Metrics.Enabled = !spec.Metrics.Enabled
		case 16: // weighted backends, timeouts, buffering
			px := anyProxy().Proxy
			if p.chance(50) {
				px.Service, px.Port = "", 0
				for n := 1 + p.intn(3); n > 0; n-- {
					px.Backends = append(px.Backends, v1beta1.Backend{Service: p.str(serviceNames), Port: p.num(goodUpstreamPorts...), Weight: ptr.To(p.num(0, 1, 10, 1000))})
				}
			}
			px.ConnectTimeoutSeconds, px.SendTimeoutSeconds = p.num(1, 5, 75), p.num(1, 60, 3600)
			if p.chance(50) {
				px.Buffering = &v1beta1.ProxyBuffering{Disabled: p.chance(50), HeaderBufferKiB: p.num(1, 4, 16), Buffers: p.num(3, 8, 256), BufferKiB: p.num(1, 4, 1024)}
			}
		case 17: // header filters
			l := anyProxy()
			l.RequestHeaders = headerModifier()
			if p.chance(50) {
				l.ResponseHeaders = headerModifier()
			}
		case 18: // a Gateway-style redirect
			l := anyLocation()
			l.Static, l.Proxy = nil, nil
			l.Redirect = &v1beta1.RedirectLocation{Code: p.num(301, 302, 303, 307, 308)}
			if p.chance(50) {
				l.Redirect.Scheme = []string{"http", "https", "ftp"}[p.intn(3)]
			}
			if p.chance(50) {
				l.Redirect.Hostname = p.str(hostNames)
			}
			if p.chance(30) {
				l.Redirect.Port = ptr.To(p.num(80, 443, 8443))
			}
			if p.chance(60) {
				l.Redirect.Path = pathModifier()
			}
		case 19: // a rewrite
			l := anyProxy()
			l.Proxy.URLRewrite = &v1beta1.URLRewrite{}
			if p.chance(50) {
				l.Proxy.URLRewrite.Hostname = p.str(hostNames)
			}
			if p.chance(70) {
				l.Proxy.URLRewrite.Path = pathModifier()
			}
		case 20: // static extras
			l := anyLocation()
			if l.Static != nil && p.chance(60) {
				l.Static.Fallback = p.str(paths)
			}
			if p.chance(50) {
				l.Expires = p.str(expiry)
			}
			if p.chance(50) {
				l.ClientMaxBodySize = p.str(bodySizes)
			}
		case 21: // error pages, HTTPS redirect
			srv := anyServer()
			if p.chance(60) {
				srv.ErrorPages = append(srv.ErrorPages, v1beta1.ErrorPage{Codes: []int32{p.num(404, 500, 502, 599)}, Path: p.str(paths)})
			} else {
				srv.Locations, srv.TLS = nil, nil
				srv.RedirectToHTTPS = &v1beta1.HTTPSRedirect{Code: p.num(301, 308)}
				if p.chance(50) {
					srv.RedirectToHTTPS.Port = ptr.To(p.num(443, 8443))
				}
			}
		case 22: // trusted proxies, backend TLS
			if p.chance(50) {
				spec.Config.TrustedProxies = append(spec.Config.TrustedProxies, p.str(cidrs))
			} else {
				px := anyProxy().Proxy
				px.TLS = &v1beta1.BackendTLS{}
				if p.chance(50) {
					px.TLS.Hostname = p.str(hostNames)
				}
				if p.chance(50) {
					px.TLS.CACertificate = &v1beta1.CACertificateRef{Kind: []string{"ConfigMap", "Secret"}[p.intn(2)], Name: p.str(secretNames)}
				}
			}
		case 23: // access control on a server or a location
			if p.chance(50) {
				srv := anyServer()
				srv.IPAccess, srv.BasicAuth, srv.RateLimit = access()
			} else {
				l := anyLocation()
				l.IPAccess, l.BasicAuth, l.RateLimit = access()
				l.DisableAccessLog = p.chance(50)
			}
		case 24: // TLS policy, HSTS, client certificates, HTTP/2
			spec.Config.DisableHTTP2 = p.chance(30)
			if p.chance(50) {
				spec.Config.TLS.Protocols = []string{p.str(tlsProtocols)}
			}
			if p.chance(50) {
				spec.Config.TLS.Ciphers = []string{p.str(ciphers)}
			}
			spec.Config.TLS.SessionCacheMiB = p.num(0, 1, 10, 512)
			if srv := anyServer(); srv.TLS != nil {
				srv.TLS.HSTS = &v1beta1.HSTS{MaxAgeSeconds: ptr.To(p.num(0, 600, 31536000, 63072000)), IncludeSubDomains: p.chance(50), Preload: p.chance(30)}
				if p.chance(50) {
					srv.TLS.ClientCertificates = &v1beta1.ClientCertificates{CACertificate: v1beta1.CACertificateRef{Kind: "Secret", Name: p.str(secretNames)}, VerifyDepth: p.num(1, 8)}
				}
			}
		case 25: // client address
			if p.chance(50) {
				spec.Config.TrustedProxies = append(spec.Config.TrustedProxies, p.str(cidrs))
			}
			spec.Config.RealIP = &v1beta1.RealIP{}
			if p.chance(50) {
				spec.Config.RealIP.ProxyProtocol = true
			}
			if p.chance(60) {
				spec.Config.RealIP.Header = p.str(headerNames)
			}
		case 26: // compression, logs, IPv6, workers
			spec.Config.Gzip = &v1beta1.Gzip{Level: p.num(1, 9), MinLengthBytes: p.num(0, 1024)}
			for n := p.intn(3); n > 0; n-- {
				spec.Config.Gzip.Types = append(spec.Config.Gzip.Types, p.str(mimeTypes))
			}
			spec.Config.AccessLog.Format = []string{"", "Combined", "JSON", "json"}[p.intn(4)]
			if p.chance(50) {
				spec.Service.IPFamilyPolicy = ptr.To(corev1.IPFamilyPolicyPreferDualStack)
				spec.Service.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol, corev1.IPv6Protocol}
			}
			if p.chance(50) {
				spec.Resources.Limits = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse([]string{"1m", "1", "1500m", "64"}[p.intn(4)])}
			}
		case 27: // balancing, affinity, retries, keepalive
			upstreamEdit(p, anyProxy().Proxy)
		case 28: // protocol: gRPC backends, h2c ports
			if p.chance(40) {
				spec.Ports[p.intn(len(spec.Ports))].H2C = p.chance(80)
			} else {
				px := anyProxy().Proxy
				px.BackendProtocol = p.str(backendProtocols)
			}
		case 15: // remove a server or a location
			if s := anyServer(); p.chance(50) && len(s.Locations) > 0 {
				i := p.intn(len(s.Locations))
				s.Locations = append(s.Locations[:i], s.Locations[i+1:]...)
			} else {
				i := p.intn(len(servers()))
				spec.Config.Servers = append(spec.Config.Servers[:i], spec.Config.Servers[i+1:]...)
			}
		}
	}
	return &v1beta1.NginxOperator{
		TypeMeta:   metav1.TypeMeta{APIVersion: v1beta1.GroupVersion.String(), Kind: "NginxOperator"},
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"},
		Spec:       spec,
	}
}

// upstreamEdit sets px's balancing, affinity, retry or keepalive fields
// from the tables above.
func upstreamEdit(p picker, px *v1beta1.ProxyLocation) {
	switch p.intn(4) {
	case 0:
		px.LoadBalancingMethod = p.str(methodNames)
		if p.chance(70) {
			px.HashKey = &v1beta1.HashKey{Source: p.str(hashSources)}
			if p.chance(70) {
				px.HashKey.Name = p.str(keyNames)
			}
		}
	case 1:
		px.SessionAffinity = &v1beta1.SessionAffinity{Cookie: v1beta1.SessionCookie{Secure: p.chance(50)}}
		c := &px.SessionAffinity.Cookie
		if p.chance(50) {
			c.Name = p.str(keyNames)
		}
		if p.chance(50) {
			c.Path = p.str(paths)
		}
		if p.chance(50) {
			c.SameSite = p.str(sameSites)
		}
		if p.chance(50) {
			c.MaxAgeSeconds = ptr.To(p.num(1, 3600, 31536000))
		}
	case 2:
		px.Retry = &v1beta1.ProxyRetry{Tries: p.num(1, 3, 100), TimeoutSeconds: p.num(0, 10, 3600), NonIdempotent: p.chance(30)}
		for n := p.intn(4); n > 0; n-- {
			px.Retry.Conditions = append(px.Retry.Conditions, p.str(retryConditions))
		}
	default:
		px.KeepAlive = &v1beta1.UpstreamKeepAlive{Requests: p.num(1, 1000, 1000000), TimeSeconds: p.num(1, 3600, 86400), TimeoutSeconds: p.num(1, 60, 3600)}
		if p.chance(70) {
			px.KeepAlive.Connections = ptr.To(p.num(0, 1, 32, 65535))
		}
	}
}
