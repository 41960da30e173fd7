package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

func TestDispatch(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		wantStdout string
		wantStderr string
	}{
		{[]string{"version"}, 0, "nginx-operator v", ""},
		{[]string{"help"}, 0, "Commands:", ""},
		{[]string{"frobnicate"}, 2, "", `unknown command "frobnicate"`},
		{[]string{"run", "--log-format=xml"}, 2, "", `unknown log format "xml"`},
		{[]string{"--namespaces=a", "--deny-namespaces=b"}, 2, "", "cannot be combined"},
		{[]string{"run", "extra"}, 2, "", "unexpected arguments"},
	} {
		var stdout, stderr bytes.Buffer
		code := dispatch(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stdout.String(), tc.wantStdout) || !strings.Contains(stderr.String(), tc.wantStderr) {
			t.Errorf("%v: code %d stdout %q stderr %q; want code %d, stdout containing %q, stderr containing %q",
				tc.args, code, stdout.String(), stderr.String(), tc.code, tc.wantStdout, tc.wantStderr)
		}
	}
}

func TestCRDsPrintsTheFiveCRDsAsYAMLDocuments(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := dispatch([]string{"crds"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	objs, err := framework.DecodeYAML(stdout.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range objs {
		if o.GetKind() != "CustomResourceDefinition" {
			t.Errorf("unexpected %s %s", o.GetKind(), o.GetName())
		}
		names = append(names, o.GetName())
	}
	want := "nginxbackups.nginx.operator.dev nginxexternalauths.nginx.operator.dev nginxgatewayparameters.nginx.operator.dev nginxmonitors.nginx.operator.dev nginxoperators.nginx.operator.dev"
	if strings.Join(names, " ") != want {
		t.Errorf("CRDs = %v, want %s", names, want)
	}
}
