// Package gatewayapi is the end-to-end test of a shared Gateway no tenant
// can break: a corpus of hostile Gateway API routes, each created through a
// real apiserver (Gateway API's CRDs installed, their schema and CEL rules
// judging it), read back, translated with the other tenants' routes into
// the Gateway's NginxOperator the way the controllers do, rendered, and
// checked by the real `nginx -t` (corpus_test.go says what must hold).
//
// Where test/hostile writes NginxOperator specs, this package writes what a
// tenant of a Gateway writes: HTTPRoutes, GRPCRoutes, TLSRoutes, TCPRoutes
// and UDPRoutes, in namespaces of their own, beside a baseline of other
// tenants' routes that must keep being served whatever the hostile route
// holds.
//
// The files, by concern:
//
//	corpus_test.go    the test: what every case must end in, and its run
//	tenants_test.go   the shared Gateway, its tenants' namespaces and
//	                  baseline routes, and the Inputs the controller reads
//	fields_test.go    the corpus: hostile values, the hostile route of each
//	                  kind, the fields they are set in
//	send_test.go      one case through the apiserver, and its outcome
//	instance_test.go  instanceOf: the Gateway's instance as the controllers
//	                  make it (the translation, the Gateway controller's
//	                  check of the instance, the nginx controller's)
//	nginx_test.go     the pod's files, the render, the real `nginx -t`
//	tenancy_test.go   what the other tenants keep, what the hostile route
//	                  is told, and the variables its values may not touch
//	report_test.go    the outcome counts and the failure table
//
// Like test/hostile it is an end-to-end package (the Makefile's E2E_DIRS):
// `go test -short` skips it, as env.Cluster does.
package gatewayapi

import (
	"os"
	"testing"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// env is the local control plane, started by the first test that needs it.
var env = framework.NewEnv(framework.Options{})

func TestMain(m *testing.M) { os.Exit(env.Main(m)) }
