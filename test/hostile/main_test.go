// Package hostile is the end-to-end test of the operator's defences against
// hostile specs: a corpus written through both API versions, admitted as the
// apiserver with the conversion webhook admits it (in process for every send,
// by a real apiserver for a covering sample that must agree), followed
// through the controller's validation, the renderer and the real nginx
// (corpus_test.go says what must hold).
//
// The files, by concern:
//
//	corpus_test.go     the test: what every send must end in, and its run
//	fields_test.go     the corpus: base spec, hostile values, fields, structures
//	send_test.go       one send: admitted, built, and its outcome
//	admission_test.go  the apiserver's create and read, in process
//	agreement_test.go  the sample the real apiserver judges too
//	nginx_test.go      the pod's files, the render, the real `nginx -t`
//	meaning_test.go    what the parsed directive tree must mean
//	report_test.go     the outcome counts and the failure table
package hostile

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// env is the local control plane, started by the first test that needs it.
var env = framework.NewEnv(framework.Options{})

func TestMain(m *testing.M) {
	// The corpus's admission is mostly the CEL rules' evaluation, which
	// allocates for every field it reads: collecting garbage four times
	// less often takes a fifth off its time (2,000 sends: 39 s to 31 s).
	debug.SetGCPercent(400)
	os.Exit(env.Main(m))
}
