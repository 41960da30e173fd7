// Command certmanager runs cert-manager's own controllers, from cert-manager's
// Go module, for the tests that show what the operator does with a real
// cert-manager: the controllers of Issuers and ClusterIssuers, of
// Certificates, the approver, the self-signed and CA issuers, and (with
// -enable-gateway-api) the gateway-shim that makes Certificates for annotated
// Gateways. cert-manager's release binary is a module of its own that the Go
// module proxy does not serve; this small main starts the same registered
// controllers with the same informers. It leaves out the webhook (the tests
// write valid objects), the cainjector, ACME and leader election.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/cert-manager/cert-manager/pkg/controller"
	gateways "github.com/cert-manager/cert-manager/pkg/controller/certificate-shim/gateways"
	"github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/approver"
	cacr "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/ca"
	selfsignedcr "github.com/cert-manager/cert-manager/pkg/controller/certificaterequests/selfsigned"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/issuing"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/keymanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/readiness"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/requestmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/revisionmanager"
	"github.com/cert-manager/cert-manager/pkg/controller/certificates/trigger"
	"github.com/cert-manager/cert-manager/pkg/controller/clusterissuers"
	"github.com/cert-manager/cert-manager/pkg/controller/issuers"
	_ "github.com/cert-manager/cert-manager/pkg/issuer/ca"         // registers the CA issuer's setup
	_ "github.com/cert-manager/cert-manager/pkg/issuer/selfsigned" // registers the self-signed issuer's setup
	"k8s.io/apimachinery/pkg/util/sets"
)

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig of the cluster")
	clusterResourceNamespace := flag.String("cluster-resource-namespace", "cert-manager",
		"namespace of the Secrets that ClusterIssuers name")
	enableGatewayAPI := flag.Bool("enable-gateway-api", false,
		"run the gateway-shim, which makes Certificates for Gateways annotated with cert-manager.io/issuer or cert-manager.io/cluster-issuer")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *kubeconfig, *clusterResourceNamespace, *enableGatewayAPI); err != nil {
		fmt.Fprintln(os.Stderr, "certmanager:", err)
		os.Exit(1)
	}
}

// controllers are the registered cert-manager controllers this command runs.
func controllers(gatewayAPI bool) sets.Set[string] {
	names := sets.New(
		issuers.ControllerName, clusterissuers.ControllerName,
		trigger.ControllerName, keymanager.ControllerName, requestmanager.ControllerName,
		issuing.ControllerName, readiness.ControllerName, revisionmanager.ControllerName,
		approver.ControllerName, selfsignedcr.CRControllerName, cacr.CRControllerName,
	)
	if gatewayAPI {
		names.Insert(gateways.ControllerName)
	}
	return names
}

func run(ctx context.Context, kubeconfig, clusterResourceNamespace string, gatewayAPI bool) error {
	factory, err := controller.NewContextFactory(ctx, controller.ContextOptions{
		Kubeconfig:         kubeconfig,
		KubernetesAPIQPS:   50,
		KubernetesAPIBurst: 100,
		IssuerOptions:      controller.IssuerOptions{ClusterResourceNamespace: clusterResourceNamespace},
		// cert-manager's own defaults for a failed request's back-off.
		CertificateOptions: controller.CertificateOptions{
			CertificateRequestMinimumBackoffDuration: time.Hour,
			CertificateRequestMaximumBackoffDuration: 32 * time.Hour,
		},
		ConfigOptions: controller.ConfigOptions{EnableGatewayAPI: gatewayAPI},
	})
	if err != nil {
		return err
	}
	base, err := factory.Build()
	if err != nil {
		return err
	}
	known := controller.Known()
	var wg sync.WaitGroup
	errs := make(chan error, len(known))
	for _, name := range sets.List(controllers(gatewayAPI)) {
		constructor, ok := known[name]
		if !ok {
			return fmt.Errorf("cert-manager has no controller %q", name)
		}
		c, err := constructor(factory)
		if err != nil {
			return fmt.Errorf("controller %s: %w", name, err)
		}
		wg.Go(func() {
			if err := c.Run(2, ctx); err != nil && !errors.Is(err, context.Canceled) {
				errs <- fmt.Errorf("controller %s: %w", name, err)
			}
		})
	}
	base.SharedInformerFactory.Start(ctx.Done())
	base.KubeSharedInformerFactory.Start(ctx.Done())
	base.HTTP01ResourceMetadataInformersFactory.Start(ctx.Done())
	if gatewayAPI {
		base.GWShared.Start(ctx.Done())
	}
	fmt.Fprintf(os.Stderr, "certmanager: running %v\n", sets.List(controllers(gatewayAPI)))
	select {
	case err := <-errs:
		return err
	case <-ctx.Done():
	}
	wg.Wait()
	return nil
}
