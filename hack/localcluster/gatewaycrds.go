package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/test/framework"
)

// bundleVersionAnnotation is where Gateway API's CRDs say which release
// they come from.
const bundleVersionAnnotation = "gateway.networking.k8s.io/bundle-version"

// installGatewayCRDs installs Gateway API's standard channel (the release
// go.mod pins) into the cluster kubectl would use ($KUBECONFIG), unless the
// cluster already has any of its CRDs: those may be another release or
// channel that other controllers of that cluster depend on, and replacing a
// CRD can drop fields their objects use. It is for `make run`, which runs it
// before the operator starts, because the operator looks for Gateway API
// only at start.
func installGatewayCRDs() error {
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		clientcmd.NewDefaultClientConfigLoadingRules(), &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return err
	}
	files, err := framework.GatewayAPICRDFiles()
	if err != nil {
		return err
	}
	var want []string
	pinned := ""
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		objs, err := framework.DecodeYAML(data)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		for _, o := range objs {
			want = append(want, o.GetName())
			pinned = o.GetAnnotations()[bundleVersionAnnotation]
		}
	}
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	have := map[string]string{}
	for _, name := range want {
		var crd metav1.PartialObjectMetadata
		crd.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
		switch err := c.Get(ctx, client.ObjectKey{Name: name}, &crd); {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("looking for Gateway API's CRDs: %w", err)
		default:
			have[name] = crd.GetAnnotations()[bundleVersionAnnotation]
		}
	}
	if msg := gatewayCRDsPresent(pinned, want, have); msg != "" {
		fmt.Println(msg)
		return nil
	}
	if err := framework.InstallGatewayAPICRDs(ctx, cfg); err != nil {
		return err
	}
	fmt.Printf("installed Gateway API %s's standard channel: %s\n", pinned, strings.Join(want, ", "))
	return nil
}

// gatewayCRDsPresent says what is left as it is when the cluster already has
// some of the CRDs in want (have: name to bundle version), or "" when it has
// none and they are to be installed.
func gatewayCRDsPresent(pinned string, want []string, have map[string]string) string {
	if len(have) == 0 {
		return ""
	}
	byVersion := map[string][]string{}
	for name, version := range have {
		if version == "" {
			version = "unknown version"
		}
		byVersion[version] = append(byVersion[version], strings.TrimSuffix(name, ".gateway.networking.k8s.io"))
	}
	if len(have) == len(want) && len(byVersion) == 1 && len(byVersion[pinned]) > 0 {
		return fmt.Sprintf("Gateway API %s's CRDs are installed already", pinned)
	}
	var parts []string
	for version, names := range byVersion {
		sort.Strings(names)
		parts = append(parts, version+": "+strings.Join(names, ", "))
	}
	sort.Strings(parts)
	return fmt.Sprintf("Gateway API's CRDs are installed already, left as they are (%s). "+
		"The operator serves Gateways where Gateway, HTTPRoute and GRPCRoute v1 are among them (the standard channel since v1.1; this checkout pins %s); its log says whether it does.",
		strings.Join(parts, "; "), pinned)
}
