// Package conformance runs Gateway API's conformance suite
// (sigs.k8s.io/gateway-api/conformance, the version go.mod requires, used
// as a module: its tests, manifests and report as they are) against the
// operator, for the profiles in Profiles (GATEWAY-HTTP, GATEWAY-GRPC,
// GATEWAY-TLS, GATEWAY-TCP and GATEWAY-UDP),
// on a local cluster whose node runs pods for real
// (test/framework/realcluster):
//
//  1. the node imports the operator's images and the suite's backends:
//     echo-basic, built from the suite's module (EchoBasicPackage) under
//     every name its manifests use, and CoreDNS, the node's own binary
//     under the manifests' name (Setup starts it with the other backends
//     and waits for it; the UDPRoute tests use it);
//  2. Gateway API's standard channel CRDs are installed from the
//     sigs.k8s.io/gateway-api module (GATEWAY-HTTP's and GATEWAY-GRPC's
//     features are all in the standard channel; the experimental ones,
//     such as HTTPRouteRetry, are not claimed), then bundle.yaml, as a
//     user would;
//  3. the GatewayClass "nginx" (controllerName
//     nginx.operator.dev/gateway-controller) is created and the test
//     waits until the operator accepts it; the suite then takes the
//     features to test from its status.supportedFeatures, so what the
//     class claims is what is tested (when it claims nothing, the
//     profiles' core features are tested, and the test fails saying so);
//  4. the suite runs the tests of the supported features, its clients
//     connecting from the node's network namespace (a Gateway's address
//     is a ClusterIP; see Clients), and its report is written.
//
// The test fails when a core test of either profile, or an extended test
// of a feature the class claims, does not pass, naming them and what the
// cluster shows of the GatewayClass, the Gateways and their NginxOperators.
//
// `make test` runs it with the other end-to-end packages (about six
// minutes), so a change that breaks a core test fails the build. `make
// conformance` runs it alone and rewrites the report in
// conformance/reports/<Gateway API version>/nginx-operator:
//
//	make conformance
//	# which is:
//	CONFORMANCE_REPORT_DIR=conformance/reports/v1.6.3/nginx-operator \
//		go test -count=1 -timeout 40m -v ./test/conformance/
//
// Without CONFORMANCE_REPORT_DIR the report is only logged. The report's
// implementation version is CONFORMANCE_VERSION, or else what `git describe
// --tags --always --dirty` says (the Makefile's VERSION, which hack/images
// stamps into the operator's image). The suite's own flags work after
// -args, such as -run-test=HTTPRouteSimpleSameNamespace (one test; the
// features then come from the class's status as a list), -skip-tests,
// -debug (every request and response logged) or -supported-features.
package conformance
