package clientchecks

import (
	"net/http"
	"strings"
	"testing"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/echo"
)

// What /members/ is signed in at.
const signInURL = "https://login.test/start?app=shop"

// authLocations of AppHost: /members/ asks API's authentication service,
// sends who the client is on to API, redirects a client without
// credentials to sign in and keeps answers a minute per Authorization;
// /members-down/ asks a Service that does not answer.
func authLocations(o Options) []v1beta1.Location {
	api := func() *v1beta1.ProxyLocation { return &v1beta1.ProxyLocation{Service: API, Port: o.APIPort} }
	return []v1beta1.Location{
		{Path: "/members/", Proxy: api(), ExternalAuth: &v1beta1.ExternalAuth{
			Service: API, Port: o.APIPort, Path: echo.AuthPath,
			ResponseHeaders: []string{"X-Auth-User", "X-Auth-Checks", "X-Auth-Original-URL"},
			SignIn:          &v1beta1.ExternalAuthSignIn{URL: signInURL},
			Cache:           &v1beta1.ExternalAuthCache{Key: []v1beta1.RequestKey{{Source: "Header", Name: "Authorization"}}, DurationSeconds: 60},
		}},
		{Path: "/members-down/", Proxy: api(), ExternalAuth: &v1beta1.ExternalAuth{Service: AuthDown, Port: 81}},
	}
}

// externalAuth: a client without credentials is sent to sign in with its
// URL, percent-encoded; one with them reaches the Service with the
// service's answer headers in place of its own, and the same credentials
// again get the kept answer; forbidden ones get 403. An authentication
// service that does not answer gives 500 and nothing else fails.
func externalAuth(t *testing.T, tg *Target) {
	c := tg.client(Untrusted)
	const uri = "/members/caf%C3%A9?q=a+b&x=1"
	url, origin := tg.url("http", AppHost, uri), tg.url("http", AppHost, "")
	resp, _ := get(t, c, url)
	escaped := "/members/caf%25C3%25A9?q=a%2Bb%26x=1"
	if want := signInURL + "&rd=" + origin + escaped; resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != want {
		t.Errorf("without credentials: %s to %q, want 302 to %q", resp.Status, resp.Header.Get("Location"), want)
	}
	// Sixteen characters are encoded, and the URL is cut before a
	// seventeenth: no URL can add a parameter to the sign-in page's.
	resp, _ = get(t, c, tg.url("http", AppHost, "/members/t?"+strings.Repeat("a&", 20)))
	if want := signInURL + "&rd=" + origin + "/members/t?" + strings.Repeat("a%26", 16) + "a"; resp.Header.Get("Location") != want {
		t.Errorf("a URL with 20 '&': redirected to %q, want %q", resp.Header.Get("Location"), want)
	}
	var checks []string
	for range 2 {
		resp, body := get(t, c, url, "Authorization", echo.AuthorizedBearer, "X-Auth-User", "mallory")
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("with credentials: %s, want 200", resp.Status)
		}
		h := seen(t, body).Headers
		if h.Get("X-Auth-User") != echo.AuthorizedUser || h.Get("X-Auth-Original-URL") != origin+uri {
			t.Errorf("the Service saw X-Auth-User %q and X-Auth-Original-URL %q, want %q and %q", h.Values("X-Auth-User"), h.Get("X-Auth-Original-URL"), echo.AuthorizedUser, origin+uri)
		}
		checks = append(checks, h.Get("X-Auth-Checks"))
	}
	if checks[0] == "" || checks[0] != checks[1] {
		t.Errorf("the service's count of checks %v: the second request should have had the kept answer", checks)
	}
	if resp, _ := get(t, c, url, "Authorization", echo.ForbiddenBearer); resp.StatusCode != http.StatusForbidden {
		t.Errorf("with forbidden credentials: %s, want 403", resp.Status)
	}
	if resp, _ := get(t, c, tg.url("http", AppHost, "/members-down/"), "Authorization", echo.AuthorizedBearer); resp.StatusCode != http.StatusInternalServerError {
		t.Errorf("an authentication service down: %s, want 500", resp.Status)
	}
	for _, path := range []string{"/members/", "/api/"} {
		if resp, _ := get(t, c, tg.url("http", AppHost, path), "Authorization", echo.AuthorizedBearer); resp.StatusCode != http.StatusOK {
			t.Errorf("%s beside it: %s, want 200", path, resp.Status)
		}
	}
}
