package conversion_test

import (
	"os"
	"testing"

	logf "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/nginx-operator/nginx-operator/pkg/logging"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// env is the local control plane of the integration tests, started by the
// first test that needs it.
var env = framework.NewEnv(framework.Options{})

// testLog collects everything the operator and the webhook log; a failing
// integration test prints its part of it.
var testLog tools.Buffer

func TestMain(m *testing.M) {
	kit, err := logging.New(&testLog, "logfmt", "debug")
	if err != nil {
		panic(err)
	}
	logf.SetLogger(logging.ToLogr(kit, logging.Verbosity("debug")))
	os.Exit(env.Main(m))
}
