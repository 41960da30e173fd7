//go:build !unit

package gateway_test

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
)

// TestTheNginxExternalAuthSchemaRefusesWhatAFilterCannotMean: the API
// server refuses, with a message naming the field, an NginxExternalAuth
// whose Service is in another namespace (a filter's is its route's) or
// that is disabled, and what a location's externalAuth refuses; it stores
// a valid one with its defaults.
func TestTheNginxExternalAuthSchemaRefusesWhatAFilterCannotMean(t *testing.T) {
	ctx, ns, _, c := inprocess.Setup(t, env)
	for _, tc := range []struct {
		name string
		spec v1beta1.ExternalAuth
		want string // "" for stored
	}{
		{"valid", v1beta1.ExternalAuth{Service: "oauth2-proxy", Port: 4180, Path: "/oauth2/auth"}, ""},
		{"another namespace", v1beta1.ExternalAuth{Service: "oauth2-proxy", Namespace: "auth", Port: 4180}, "the Service of an NginxExternalAuth is in its own namespace"},
		{"disabled", v1beta1.ExternalAuth{Disabled: true}, "an NginxExternalAuth cannot be disabled"},
		{"no port", v1beta1.ExternalAuth{Service: "oauth2-proxy"}, "service and port go together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := &v1beta1.NginxExternalAuth{ObjectMeta: metav1.ObjectMeta{Namespace: ns, GenerateName: "auth-"}, Spec: tc.spec}
			err := c.Create(ctx, obj)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want == "":
				var stored v1beta1.NginxExternalAuth
				if err := c.Get(ctx, client.ObjectKeyFromObject(obj), &stored); err != nil {
					t.Fatal(err)
				}
				if stored.Spec.TimeoutSeconds != 5 {
					t.Errorf("timeoutSeconds %d, want the default 5", stored.Spec.TimeoutSeconds)
				}
			case err == nil:
				t.Errorf("stored, want refused with %q", tc.want)
			case !strings.Contains(err.Error(), tc.want):
				t.Errorf("refused with %v, want %q", err, tc.want)
			}
		})
	}
}
