package conversion

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// bigBeta has a config of about servers*locations KiB of header values, each
// from value(i, j).
func bigBeta(servers, locations int, value func(i, j int) string) *v1beta1.NginxOperator {
	b := richBeta()
	b.Spec.Config.Servers = nil
	for i := range servers {
		s := v1beta1.Server{Port: "web", ServerNames: []string{fmt.Sprintf("s%d.example.com", i)}}
		for j := range locations {
			s.Locations = append(s.Locations, v1beta1.Location{Path: fmt.Sprintf("/p%d", j), Static: &v1beta1.StaticLocation{},
				Headers: []v1beta1.Header{{Name: "X-Note", Value: value(i, j)}}})
		}
		b.Spec.Config.Servers = append(b.Spec.Config.Servers, s)
	}
	return b
}

func randomText(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)[:n]
}

func TestSpecsBeyondTheAnnotationLimitAreCompressedAndStillRoundTrip(t *testing.T) {
	repetitive := func(i, j int) string { return strings.Repeat(fmt.Sprintf("server %d location %d; ", i, j), 40) }
	for _, tc := range []struct {
		name           string
		in             *v1beta1.NginxOperator
		wantCompressed bool
	}{
		{"a small spec stays readable JSON", richBeta(), false},
		{"a 300 KiB config", bigBeta(32, 10, repetitive), true},
		{"a 100 KiB config next to a 200 KiB last-applied-configuration", func() *v1beta1.NginxOperator {
			b := bigBeta(10, 10, repetitive)
			b.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": randomText(200 << 10)}
			return b
		}(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := checkBeta(t, tc.in)
			ann := a.Annotations[AnnotationSpec]
			if got := strings.HasPrefix(ann, compressedPrefix); got != tc.wantCompressed {
				t.Errorf("compressed %v, want %v (annotation of %d bytes)", got, tc.wantCompressed, len(ann))
			}
			if err := apivalidation.ValidateAnnotationsSize(a.Annotations); err != nil {
				t.Errorf("the apiserver would refuse the v1alpha1 object: %v", err)
			}
			again, err := ToV1alpha1(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(a, again); diff != "" {
				t.Errorf("converting twice gives different annotations: (-first +second)\n%s", diff)
			}
		})
	}
}

func TestASpecTooLargeEvenCompressedIsAnErrorNotALoss(t *testing.T) {
	b := bigBeta(32, 12, func(int, int) string { return randomText(1024) })
	_, err := ToV1alpha1(b)
	if err == nil || !strings.Contains(err.Error(), "read it as v1beta1") || !strings.Contains(err.Error(), "team-a/web") {
		t.Errorf("error %v, want one that names the object and says to use v1beta1", err)
	}
}

func TestPreservedJSONRefusesBrokenOrExplosiveCompressedValues(t *testing.T) {
	bomb, err := compress(make([]byte, maxPreservedBytes+1))
	if err != nil {
		t.Fatal(err)
	}
	ok, err := compress([]byte(`{"paused":true}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, value, want string
	}{
		{"plain JSON", `{"paused":true}`, ""},
		{"compressed JSON", ok, ""},
		{"not base64", compressedPrefix + "%%%", "illegal base64"},
		{"not gzip", compressedPrefix + base64.StdEncoding.EncodeToString([]byte("plain")), "compressed value"},
		{"truncated gzip", ok[:len(ok)-8], "compressed value"},
		{"a gzip bomb", bomb, "expands beyond"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := preservedJSON(tc.value)
			if tc.want == "" {
				if err != nil || string(got) != `{"paused":true}` {
					t.Errorf("got %q, %v", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to mention %q", err, tc.want)
			}
		})
	}
	if len(bomb) > 64<<10 {
		t.Fatalf("the bomb is %d bytes: not a test of expansion", len(bomb))
	}
}
