package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseForward(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want serviceTarget
		err  bool
	}{
		{in: "team-a/www:8080", want: serviceTarget{namespace: "team-a", name: "www", port: 8080}},
		{in: "team-a/www", err: true},
		{in: "www:8080", err: true},
		{in: "/www:8080", err: true},
		{in: "team-a/:8080", err: true},
		{in: "team-a/www:http", err: true},
		{in: "team-a/www:0", err: true},
		{in: "team-a/www:65536", err: true},
	} {
		got, err := parseForward(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("parseForward(%q) = %+v, %v; want %+v, error %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

func TestParseForwards(t *testing.T) {
	www := serviceTarget{namespace: "team-a", name: "www", port: 80}
	gw := serviceTarget{namespace: "team-a", name: "web-gateway", port: 80}
	for _, tc := range []struct {
		name string
		in   string
		want []forwardPair
		err  bool
	}{
		{name: "one Service on -listen, as run.sh passed it before", in: "team-a/www:80",
			want: []forwardPair{{listen: "127.0.0.1:8880", target: www}}},
		{name: "-listen and a second address", in: "team-a/www:80,127.0.0.1:8881=team-a/web-gateway:80",
			want: []forwardPair{{listen: "127.0.0.1:8880", target: www}, {listen: "127.0.0.1:8881", target: gw}}},
		{name: "every address named, spaces after commas", in: "127.0.0.1:9000=team-a/www:80, [::1]:9001=team-a/web-gateway:80",
			want: []forwardPair{{listen: "127.0.0.1:9000", target: www}, {listen: "[::1]:9001", target: gw}}},
		{name: "the same Service on two addresses", in: "team-a/www:80,127.0.0.2:8880=team-a/www:80",
			want: []forwardPair{{listen: "127.0.0.1:8880", target: www}, {listen: "127.0.0.2:8880", target: www}}},
		{name: "two items on -listen", in: "team-a/www:80,team-a/web-gateway:80", err: true},
		{name: "an address named twice", in: "127.0.0.1:8880=team-a/web-gateway:80,team-a/www:80", err: true},
		{name: "no port to listen on", in: "127.0.0.1=team-a/www:80", err: true},
		{name: "a port name to listen on", in: "127.0.0.1:http=team-a/www:80", err: true},
		{name: "port 0 (which port would it be?)", in: "127.0.0.1:0=team-a/www:80", err: true},
		{name: "a bad target", in: "127.0.0.1:8881=team-a/www", err: true},
		{name: "an empty item", in: "team-a/www:80,", err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseForwards("127.0.0.1:8880", tc.in)
			if (err != nil) != tc.err {
				t.Fatalf("parseForwards(%q) error = %v; want an error: %v", tc.in, err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(forwardPair{}, serviceTarget{})); diff != "" {
				t.Errorf("parseForwards(%q) (-want +got):\n%s", tc.in, diff)
			}
		})
	}
}

func TestGatewayCRDsPresent(t *testing.T) {
	want := []string{"gateways.gateway.networking.k8s.io", "httproutes.gateway.networking.k8s.io"}
	for _, tc := range []struct {
		name string
		have map[string]string
		says []string // what the message says; none: install
	}{
		{name: "none: install them", have: map[string]string{}},
		{name: "all, of the pinned release", have: map[string]string{
			"gateways.gateway.networking.k8s.io": "v1.6.3", "httproutes.gateway.networking.k8s.io": "v1.6.3"},
			says: []string{"Gateway API v1.6.3's CRDs are installed already"}},
		{name: "all, of another release: left as they are", have: map[string]string{
			"gateways.gateway.networking.k8s.io": "v1.0.0", "httproutes.gateway.networking.k8s.io": "v1.0.0"},
			says: []string{"left as they are (v1.0.0: gateways, httproutes)", "pins v1.6.3"}},
		{name: "some, of the pinned release: left as they are", have: map[string]string{"gateways.gateway.networking.k8s.io": "v1.6.3"},
			says: []string{"left as they are (v1.6.3: gateways)"}},
		{name: "of two releases, one unknown", have: map[string]string{
			"gateways.gateway.networking.k8s.io": "", "httproutes.gateway.networking.k8s.io": "v1.6.3"},
			says: []string{"(unknown version: gateways; v1.6.3: httproutes)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := gatewayCRDsPresent("v1.6.3", want, tc.have)
			if len(tc.says) == 0 && got != "" {
				t.Fatalf("gatewayCRDsPresent = %q; want \"\" (install)", got)
			}
			for _, w := range tc.says {
				if !strings.Contains(got, w) {
					t.Errorf("gatewayCRDsPresent = %q; want it to say %q", got, w)
				}
			}
		})
	}
}
