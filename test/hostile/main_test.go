// Package hostile is the end-to-end test of the operator's defences against
// hostile specs: a corpus sent through both API versions to a real apiserver
// with the conversion webhook, followed through the controller's validation,
// the renderer and the real nginx (corpus_test.go says what must hold).
package hostile

import (
	"os"
	"testing"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// env is the local control plane, started by the first test that needs it.
var env = framework.NewEnv(framework.Options{})

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }
