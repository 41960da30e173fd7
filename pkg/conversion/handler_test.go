package conversion

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1alpha1"
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

const bookObject = `{"apiVersion":"nginx.operator.dev/v1alpha1","kind":"NginxOperator","metadata":{"name":"web","namespace":"ns"},"spec":{"replicas":1,"port":8080}}`

func reviewBody(t *testing.T, desired string, objects ...string) []byte {
	t.Helper()
	review := apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"},
		Request:  &apiextensionsv1.ConversionRequest{UID: types.UID("uid-1"), DesiredAPIVersion: desired},
	}
	for _, o := range objects {
		review.Request.Objects = append(review.Request.Objects, runtime.RawExtension{Raw: []byte(o)})
	}
	b, err := json.Marshal(review)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// post sends body to a test server running NewHandler and decodes a 200
// answer as a ConversionReview.
func post(t *testing.T, srv *httptest.Server, contentType string, body []byte) (int, string, *apiextensionsv1.ConversionReview) {
	t.Helper()
	resp, err := srv.Client().Post(srv.URL+Path, contentType, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, buf.String(), nil
	}
	var review apiextensionsv1.ConversionReview
	if err := json.Unmarshal(buf.Bytes(), &review); err != nil {
		t.Fatalf("response is not a ConversionReview: %v\n%s", err, buf.String())
	}
	if review.APIVersion != "apiextensions.k8s.io/v1" || review.Kind != "ConversionReview" || review.Response == nil {
		t.Fatalf("response is not a v1 ConversionReview with a response: %s", buf.String())
	}
	if review.Response.UID != "uid-1" {
		t.Errorf("response UID %q, want the request's uid-1", review.Response.UID)
	}
	return resp.StatusCode, buf.String(), &review
}

func TestHandlerConvertsEveryObjectOfAReview(t *testing.T) {
	srv := httptest.NewTLSServer(NewHandler())
	defer srv.Close()
	rich, err := json.Marshal(richBeta())
	if err != nil {
		t.Fatal(err)
	}
	richAlpha, err := ToV1alpha1(richBeta())
	if err != nil {
		t.Fatal(err)
	}
	richAlphaJSON, _ := json.Marshal(richAlpha)

	t.Run("v1alpha1 to v1beta1", func(t *testing.T) {
		_, _, review := post(t, srv, "application/json", reviewBody(t, "nginx.operator.dev/v1beta1", bookObject, string(richAlphaJSON)))
		if review.Response.Result.Status != metav1.StatusSuccess {
			t.Fatalf("result %+v, want Success", review.Response.Result)
		}
		if len(review.Response.ConvertedObjects) != 2 {
			t.Fatalf("%d converted objects, want 2", len(review.Response.ConvertedObjects))
		}
		var book, back v1beta1.NginxOperator
		if err := decodeStrict(review.Response.ConvertedObjects[0].Raw, &book); err != nil {
			t.Fatal(err)
		}
		if book.APIVersion != "nginx.operator.dev/v1beta1" || len(book.Spec.Ports) != 1 || book.Spec.Ports[0].ContainerPort != 8080 || book.Name != "web" {
			t.Errorf("book object converted to %s", review.Response.ConvertedObjects[0].Raw)
		}
		if err := decodeStrict(review.Response.ConvertedObjects[1].Raw, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(withStatusConditionsOnly(richBeta()), &back, cmpOpts...); diff != "" {
			t.Errorf("rich object did not come back (-want +got):\n%s", diff)
		}
	})
	t.Run("v1beta1 to v1alpha1", func(t *testing.T) {
		_, _, review := post(t, srv, "application/json; charset=utf-8", reviewBody(t, "nginx.operator.dev/v1alpha1", string(rich)))
		if review.Response.Result.Status != metav1.StatusSuccess || len(review.Response.ConvertedObjects) != 1 {
			t.Fatalf("response %+v", review.Response)
		}
		var got v1alpha1.NginxOperator
		if err := decodeStrict(review.Response.ConvertedObjects[0].Raw, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(richAlpha, &got, cmpOpts...); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("already in the desired version: returned as it came", func(t *testing.T) {
		_, _, review := post(t, srv, "application/json", reviewBody(t, "nginx.operator.dev/v1alpha1", bookObject))
		if review.Response.Result.Status != metav1.StatusSuccess || len(review.Response.ConvertedObjects) != 1 {
			t.Fatalf("response %+v", review.Response)
		}
		if got := string(review.Response.ConvertedObjects[0].Raw); got != bookObject {
			t.Errorf("got %s, want %s", got, bookObject)
		}
	})
	t.Run("an empty review", func(t *testing.T) {
		_, _, review := post(t, srv, "application/json", reviewBody(t, "nginx.operator.dev/v1beta1"))
		if review.Response.Result.Status != metav1.StatusSuccess || len(review.Response.ConvertedObjects) != 0 {
			t.Fatalf("response %+v", review.Response)
		}
	})
}

// withPreservedSpec is the book's object carrying spec, a v1beta1 spec as
// JSON, in the preservation annotation, as a hostile client could write it.
func withPreservedSpec(spec string) string {
	obj := map[string]any{
		"apiVersion": "nginx.operator.dev/v1alpha1", "kind": "NginxOperator",
		"metadata": map[string]any{"name": "web", "namespace": "ns", "annotations": map[string]string{AnnotationSpec: spec}},
		"spec":     map[string]any{"port": 8080},
	}
	b, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestHandlerFailsAReviewWithAnObjectItCannotConvert(t *testing.T) {
	srv := httptest.NewTLSServer(NewHandler())
	defer srv.Close()
	badAnnotation := `{"apiVersion":"nginx.operator.dev/v1alpha1","kind":"NginxOperator","metadata":{"name":"bad","namespace":"ns","annotations":{"nginx.operator.dev/v1beta1-spec":"{"}}}`
	for _, tc := range []struct {
		name, desired string
		objects       []string
		want          string
	}{
		{"an unknown desired version", "nginx.operator.dev/v2", []string{bookObject}, `"nginx.operator.dev/v2" is not`},
		{"a desired version of another group", "apps/v1", []string{bookObject}, `"apps/v1" is not`},
		{"another kind", "nginx.operator.dev/v1beta1", []string{`{"apiVersion":"nginx.operator.dev/v1alpha1","kind":"NginxMonitor"}`}, `kind "NginxMonitor" is not NginxOperator`},
		{"another group", "nginx.operator.dev/v1beta1", []string{`{"apiVersion":"example.com/v1alpha1","kind":"NginxOperator"}`}, "cannot convert apiVersion example.com/v1alpha1"},
		{"a bad preservation annotation, named with its object", "nginx.operator.dev/v1beta1", []string{bookObject, badAnnotation}, "object 1: NginxOperator ns/bad: annotation nginx.operator.dev/v1beta1-spec"},
		{"a field the version does not have", "nginx.operator.dev/v1beta1", []string{`{"apiVersion":"nginx.operator.dev/v1alpha1","kind":"NginxOperator","spec":{"ports":[]}}`}, `unknown field "spec.ports"`},
		{"an object that is not JSON", "nginx.operator.dev/v1beta1", []string{`"just a string"`}, "not a JSON object"},
		// What v1beta1 admission refuses cannot be stored through v1alpha1.
		{"a preserved spec with a regex location", "nginx.operator.dev/v1beta1", []string{withPreservedSpec(`{"config":{"servers":[{"port":"http","locations":[{"path":"~^/(?<x>.*)$","static":{}}]}]}}`)},
			"NginxOperator ns/web is not a valid nginx.operator.dev/v1beta1 NginxOperator: spec.config.servers[0].locations[0].path"},
		{"a preserved spec with a header that splits lines", "nginx.operator.dev/v1beta1", []string{withPreservedSpec(`{"config":{"servers":[{"port":"http","locations":[{"path":"/","static":{},"headers":[{"name":"X","value":"a\r\nb"}]}]}]}}`)},
			"spec.config.servers[0].locations[0].headers[0].value"},
		{"a preserved spec listening on the health port", "nginx.operator.dev/v1beta1", []string{withPreservedSpec(`{"ports":[{"name":"http"},{"name":"h","containerPort":18080}]}`)},
			"containerPort 18080, 18081, 18082 and 9113 are reserved"},
		{"a preserved spec whose server names an undeclared port", "nginx.operator.dev/v1beta1", []string{withPreservedSpec(`{"config":{"servers":[{"port":"other"}]}}`)},
			"every config.servers[].port must be the name of one of spec.ports"},
		{"a preserved pod annotation overriding the config hash", "nginx.operator.dev/v1beta1", []string{withPreservedSpec(`{"pod":{"annotations":{"nginx.operator.dev/config-hash":"x"}}}`)},
			"reserved for the operator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body, review := post(t, srv, "application/json", reviewBody(t, tc.desired, tc.objects...))
			if review == nil {
				t.Fatalf("HTTP %d %s, want a ConversionReview with a Failure result", code, body)
			}
			r := review.Response
			if r.Result.Status != metav1.StatusFailure || !strings.Contains(r.Result.Message, tc.want) {
				t.Errorf("result %+v, want Failure mentioning %q", r.Result, tc.want)
			}
			if len(r.ConvertedObjects) != 0 {
				t.Errorf("a failed review returned %d objects", len(r.ConvertedObjects))
			}
		})
	}
}

func TestHandlerRejectsRequestsThatAreNotConversionReviews(t *testing.T) {
	srv := httptest.NewTLSServer(NewHandler())
	defer srv.Close()
	noRequest, _ := json.Marshal(apiextensionsv1.ConversionReview{TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"}})
	v1beta1Review := strings.Replace(string(reviewBody(t, "nginx.operator.dev/v1beta1", bookObject)), "apiextensions.k8s.io/v1", "apiextensions.k8s.io/v1beta1", 1)
	for _, tc := range []struct {
		name, method, contentType, body string
		wantCode                        int
		want                            string
	}{
		{"GET", http.MethodGet, "", "", http.StatusMethodNotAllowed, "only POST"},
		{"a form", http.MethodPost, "application/x-www-form-urlencoded", "a=b", http.StatusUnsupportedMediaType, "not application/json"},
		{"no content type", http.MethodPost, "", "{}", http.StatusUnsupportedMediaType, "not application/json"},
		{"not JSON", http.MethodPost, "application/json", "{", http.StatusBadRequest, "not a ConversionReview"},
		{"another kind", http.MethodPost, "application/json", `{"apiVersion":"v1","kind":"Pod"}`, http.StatusBadRequest, "expected a apiextensions.k8s.io/v1, Kind=ConversionReview"},
		{"a v1beta1 review (only v1 is offered in the CRD)", http.MethodPost, "application/json", v1beta1Review, http.StatusBadRequest, "expected a"},
		{"no request", http.MethodPost, "application/json", string(noRequest), http.StatusBadRequest, "has no request"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(tc.method, srv.URL+Path, strings.NewReader(tc.body))
			if tc.contentType != "" {
				req.Header.Set("Content-Type", tc.contentType)
			}
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var buf bytes.Buffer
			buf.ReadFrom(resp.Body)
			if resp.StatusCode != tc.wantCode || !strings.Contains(buf.String(), tc.want) {
				t.Errorf("HTTP %d %q, want %d mentioning %q", resp.StatusCode, buf.String(), tc.wantCode, tc.want)
			}
		})
	}
}

// FuzzHandler posts arbitrary bodies: the handler answers every one, with a
// ConversionReview or an HTTP 4xx, and never panics.
func FuzzHandler(f *testing.F) {
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"1","desiredAPIVersion":"nginx.operator.dev/v1beta1","objects":[` + bookObject + `]}}`))
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"1","desiredAPIVersion":"nginx.operator.dev/v1alpha1","objects":[{"apiVersion":"nginx.operator.dev/v1beta1","kind":"NginxOperator","spec":{"ports":[null]}}]}}`))
	f.Add([]byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"objects":[null,1,"x",[]]}}`))
	f.Add([]byte(`null`))
	h := NewHandler()
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, Path, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK && (rec.Code < 400 || rec.Code > 499) {
			t.Errorf("HTTP %d for %q", rec.Code, body)
		}
	})
}
