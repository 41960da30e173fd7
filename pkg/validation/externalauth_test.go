package validation_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
)

// External authentication refuses what nginx cannot do, at admission,
// with a message naming the fix.
func TestExternalAuthRefusesBadValuesWithMessagesUsersUnderstand(t *testing.T) {
	auth := func(o *v1beta1.NginxOperator, a v1beta1.ExternalAuth) { o.Spec.Config.Servers[0].ExternalAuth = &a }
	const at = "spec.config.servers[0].externalAuth"
	cases := []struct {
		name   string
		mutate func(*v1beta1.NginxOperator)
		want   []string
	}{
		{"no service", func(o *v1beta1.NginxOperator) { auth(o, v1beta1.ExternalAuth{Path: "/check"}) },
			[]string{at, "set service and port; with disabled: true, none of service, namespace, path and tls"}},
		{"disabled with a service", func(o *v1beta1.NginxOperator) {
			auth(o, v1beta1.ExternalAuth{Service: "auth", Port: 80, Disabled: true})
		}, []string{at, "with disabled: true, none of service, namespace, path and tls"}},
		{"a service without its port", func(o *v1beta1.NginxOperator) { auth(o, v1beta1.ExternalAuth{Service: "auth"}) },
			[]string{at, "service and port go together"}},
		{"a path with a variable", func(o *v1beta1.NginxOperator) {
			auth(o, v1beta1.ExternalAuth{Service: "auth", Port: 80, Path: "/$host"})
		},
			[]string{at + ".path", "should match"}},
		{"a sign-in page with a fragment", func(o *v1beta1.NginxOperator) {
			auth(o, v1beta1.ExternalAuth{Service: "auth", Port: 80, SignIn: &v1beta1.ExternalAuthSignIn{URL: "https://login.example.com/#start"}})
		}, []string{at + ".signIn.url", "should match"}},
		{"a header of the answer nginx cannot name", func(o *v1beta1.NginxOperator) {
			auth(o, v1beta1.ExternalAuth{Service: "auth", Port: 80, ResponseHeaders: []string{"X_User"}})
		}, []string{at + ".responseHeaders[0]", "should match"}},
		{"a cache without a key", func(o *v1beta1.NginxOperator) {
			auth(o, v1beta1.ExternalAuth{Service: "auth", Port: 80, Cache: &v1beta1.ExternalAuthCache{Key: []v1beta1.RequestKey{}, DurationSeconds: 60}})
		}, []string{at + ".cache.key", "should have at least 1 items"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { wantRefused(t, tc.mutate, tc.want...) })
	}
}

// What externalAuth leaves unset gets the documented defaults.
func TestExternalAuthDefaults(t *testing.T) {
	obj := valid()
	obj.Spec.Config.Servers[0].ExternalAuth = &v1beta1.ExternalAuth{Service: "auth", Port: 4180,
		SignIn: &v1beta1.ExternalAuthSignIn{URL: "https://login.example.com/start"}}
	out, errs := validation.NginxOperator(context.Background(), obj)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	want := &v1beta1.ExternalAuth{Service: "auth", Port: 4180, TimeoutSeconds: 5,
		SignIn: &v1beta1.ExternalAuthSignIn{URL: "https://login.example.com/start", RedirectParameter: "rd"}}
	if diff := cmp.Diff(want, out.Spec.Config.Servers[0].ExternalAuth); diff != "" {
		t.Errorf("externalAuth's defaults (-want +got):\n%s", diff)
	}
}
