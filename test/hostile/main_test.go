// Package hostile is the end-to-end test of the operator's defences against
// hostile specs: a corpus sent through both API versions to a real apiserver
// with the conversion webhook, followed through the controller's validation,
// the renderer and the real nginx (corpus_test.go says what must hold).
//
// The files, by concern:
//
//	corpus_test.go   the test: what every send must end in, and its run
//	fields_test.go   the corpus: base spec, hostile values, fields, structures
//	send_test.go     one send through the apiserver, and its outcome
//	nginx_test.go    the pod's files, the render, the real `nginx -t`
//	meaning_test.go  what the parsed directive tree must mean
//	report_test.go   the outcome counts and the failure table
package hostile

import (
	"os"
	"testing"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// env is the local control plane, started by the first test that needs it.
var env = framework.NewEnv(framework.Options{})

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }
