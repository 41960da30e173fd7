package main

import "testing"

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
