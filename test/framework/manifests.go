package framework

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"

	"github.com/nginx-operator/nginx-operator/test/tools"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApplyFiles server-side applies every object of the YAML files (multi-document
// allowed) as the admin, in order. A namespace, when given, is set on objects
// that have none; cluster-scoped objects ignore it on the server.
func ApplyFiles(ctx context.Context, cfg *rest.Config, namespace string, paths ...string) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		docs, err := DecodeYAML(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		objs = append(objs, docs...)
	}
	return objs, ApplyObjects(ctx, cfg, namespace, objs...)
}

// ApplyObjects server-side applies objs with the field manager "e2e-admin".
// objs are not changed (the apiserver's answer goes into copies), so a
// caller may apply the same objects again, say after a failure.
func ApplyObjects(ctx context.Context, cfg *rest.Config, namespace string, objs ...*unstructured.Unstructured) error {
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		return err
	}
	for _, obj := range objs {
		obj = obj.DeepCopy()
		if obj.GetNamespace() == "" && namespace != "" && !clusterScoped(obj.GetKind()) {
			obj.SetNamespace(namespace)
		}
		if err := c.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner("e2e-admin"), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", obj.GetKind(), obj.GetName(), err)
		}
	}
	return nil
}

// clusterScoped lists the cluster-scoped kinds the project's manifests contain.
func clusterScoped(kind string) bool {
	switch kind {
	case "Namespace", "ClusterRole", "ClusterRoleBinding", "CustomResourceDefinition":
		return true
	}
	return false
}

// DecodeYAML splits a multi-document YAML stream into objects, skipping empty documents.
func DecodeYAML(data []byte) ([]*unstructured.Unstructured, error) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for {
		var m map[string]any
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if len(m) == 0 {
			continue
		}
		out = append(out, &unstructured.Unstructured{Object: m})
	}
}

// InstallCRDs applies the project's CRDs (config/crd/bases) and waits until
// the apiserver serves them.
func InstallCRDs(ctx context.Context, cfg *rest.Config) error {
	root, err := tools.RepoRoot()
	if err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(root, "config", "crd", "bases", "*.yaml"))
	if err != nil {
		return err
	}
	return installCRDFiles(ctx, cfg, files)
}

// installCRDFiles applies the CRDs in files and waits until they are
// established.
func installCRDFiles(ctx context.Context, cfg *rest.Config, files []string) error {
	objs, err := ApplyFiles(ctx, cfg, "", files...)
	if err != nil {
		return err
	}
	names := make([]string, len(objs))
	for i, o := range objs {
		names[i] = o.GetName()
	}
	return WaitEstablished(ctx, cfg, names...)
}

// WaitEstablished waits up to a minute for each named CRD to be Established.
func WaitEstablished(ctx context.Context, cfg *rest.Config, names ...string) error {
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return err
	}
	for _, name := range names {
		err := tools.Poll(ctx, 100*time.Millisecond, time.Minute, func(ctx context.Context) (bool, error) {
			var crd apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, client.ObjectKey{Name: name}, &crd); err != nil {
				return false, nil
			}
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w", name, err)
		}
	}
	return nil
}

// ServiceMonitorCRD is a minimal stand-in for prometheus-operator's
// ServiceMonitor CRD: the operator only needs the API to be served.
const ServiceMonitorCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: servicemonitors.monitoring.coreos.com}
spec:
  group: monitoring.coreos.com
  scope: Namespaced
  names: {kind: ServiceMonitor, listKind: ServiceMonitorList, plural: servicemonitors, singular: servicemonitor}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

// Kubectl runs the pinned kubectl as the admin, with stdin (for `-f -`), and
// returns its combined output.
func (c *Cluster) Kubectl(ctx context.Context, stdin string, args ...string) (string, error) {
	bin, err := BinPath(Kubectl)
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"--kubeconfig=" + c.Kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
