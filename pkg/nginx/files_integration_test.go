//go:build !unit

package nginx_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/inprocess"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// A server added with a new TLS Secret, a CA ConfigMap for its clients
// and a basic-auth Secret leaves the pod template as it was (the
// StatefulSet's generation does not move): the files Secret gets the
// data of the keys nginx reads, and nginx.conf names the files and heads
// itself with their digests, for the pods to load it once they have them.
// A rotated certificate changes the files Secret and the digest, not the
// template; references removed empty the files, and the files Secret goes.
func TestNewCertificatesCAsAndHtpasswdFilesReachTheFilesSecretAndRollNoPod(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, c := inprocess.Setup(t, env, inprocess.WithOperator(nil))
	names := layout.NamesFor("web")
	web := instance(ns, "web")
	web.Spec.Ports = append(web.Spec.Ports, v1beta1.Port{Name: "https", ContainerPort: 8443})
	web.Spec.Config.Servers = []v1beta1.Server{{Port: "http", Locations: []v1beta1.Location{{Path: "/", Static: &v1beta1.StaticLocation{}}}}}
	tools.Must(t, c.Create(ctx, web))
	var before appsv1.StatefulSet
	tools.Eventually(t, time.Minute, "the StatefulSet and a reconciled instance", func() error {
		if !reconciled(ctx, c, ns, "web") {
			return fmt.Errorf("not reconciled: %+v", framework.InstanceCondition(ctx, c, ns, "web", v1beta1.ConditionDegraded))
		}
		return c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.StatefulSet}, &before)
	})
	if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.FilesSecret(0)}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
		t.Errorf("an instance that references no file has a files Secret (%v)", err)
	}

	_, certPEM, keyPEM, err := tools.ServingCert("new.example")
	tools.Must(t, err)
	ca, err := tools.NewCA("clients", time.Hour)
	tools.Must(t, err)
	htpasswd := []byte(tools.Htpasswd("user", "password"))
	create(ctx, t, cs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "new-tls", Namespace: ns}, Type: corev1.SecretTypeTLS,
		Data: map[string][]byte{corev1.TLSCertKey: certPEM, corev1.TLSPrivateKeyKey: keyPEM, "ca.crt": []byte("not read")}})
	create(ctx, t, cs, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "users", Namespace: ns}, Data: map[string][]byte{"auth": htpasswd}})
	create(ctx, t, cs, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "clients", Namespace: ns}, Data: map[string]string{"ca.crt": string(ca.CertPEM)}})
	framework.UpdateInstance(ctx, t, c, client.ObjectKey{Namespace: ns, Name: "web"}, func(n *v1beta1.NginxOperator) {
		n.Spec.Config.Servers = append(n.Spec.Config.Servers, v1beta1.Server{Port: "https", ServerNames: []string{"new.example"},
			TLS: &v1beta1.TLS{SecretName: "new-tls", ClientCertificates: &v1beta1.ClientCertificates{
				CACertificate: v1beta1.CACertificateRef{Kind: "ConfigMap", Name: "clients", Key: "ca.crt"}}},
			BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "users", Key: "auth"},
			Locations: []v1beta1.Location{{Path: "/", Static: &v1beta1.StaticLocation{}}}})
	})

	want := map[string][]byte{"tls_new-tls_tls.crt": certPEM, "tls_new-tls_tls.key": keyPEM, "auth_users_auth": htpasswd, "ca-configmap_clients_ca.crt": ca.CertPEM}
	served := func(want map[string][]byte) error {
		if !reconciled(ctx, c, ns, "web") {
			return fmt.Errorf("not reconciled: %+v", framework.InstanceCondition(ctx, c, ns, "web", v1beta1.ConditionDegraded))
		}
		var files, cfg corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.FilesSecret(0)}, &files); err != nil {
			return err
		}
		if !equality.Semantic.DeepEqual(files.Data, want) || len(files.OwnerReferences) != 1 || files.OwnerReferences[0].Name != "web" {
			return fmt.Errorf("files Secret holds %d keys %v", len(files.Data), keysOf(files.Data))
		}
		tools.Must(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.ConfigSecret}, &cfg))
		conf := cfg.Data[layout.ConfigFile]
		manifest, err := reloader.ManifestOf(conf)
		if err != nil || len(manifest) != len(want) {
			return fmt.Errorf("nginx.conf's manifest %v (%v), want %d files", manifest, err, len(want))
		}
		for _, f := range manifest {
			if f.SHA256 != reloader.Digest(want[f.Name]) {
				return fmt.Errorf("the manifest has %s with digest %s, want that of the files Secret's", f.Name, f.SHA256)
			}
		}
		for _, directive := range []string{"ssl_certificate /etc/nginx/files/tls_new-tls_tls.crt;", "ssl_certificate_key /etc/nginx/files/tls_new-tls_tls.key;",
			"ssl_client_certificate /etc/nginx/files/ca-configmap_clients_ca.crt;", "auth_basic_user_file /etc/nginx/files/auth_users_auth;"} {
			if !bytes.Contains(conf, []byte(directive)) {
				return fmt.Errorf("nginx.conf lacks %q", directive)
			}
		}
		if cfg.Annotations[layout.FilesHashAnnotation] == "" {
			return fmt.Errorf("the config Secret records no files hash: %v", cfg.Annotations)
		}
		return nil
	}
	tools.Eventually(t, time.Minute, "the files in the files Secret, named by nginx.conf", func() error { return served(want) })
	unchanged := func(when string) {
		t.Helper()
		var after appsv1.StatefulSet
		tools.Must(t, c.Get(ctx, client.ObjectKeyFromObject(&before), &after))
		if after.Generation != before.Generation || !equality.Semantic.DeepEqual(before.Spec.Template, after.Spec.Template) {
			t.Errorf("%s: the StatefulSet went from generation %d to %d, its pod template changed: the pods would roll", when, before.Generation, after.Generation)
		}
	}
	unchanged("a new TLS Secret, CA and htpasswd file")

	// A rotated certificate: the files Secret and the manifest follow.
	var cfg corev1.Secret
	tools.Must(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.ConfigSecret}, &cfg))
	hashBefore := cfg.Annotations[layout.ConfigHashAnnotation]
	_, certPEM2, keyPEM2, err := tools.ServingCert("new.example")
	tools.Must(t, err)
	secret, err := cs.CoreV1().Secrets(ns).Get(ctx, "new-tls", metav1.GetOptions{})
	tools.Must(t, err)
	secret.Data[corev1.TLSCertKey], secret.Data[corev1.TLSPrivateKeyKey] = certPEM2, keyPEM2
	_, err = cs.CoreV1().Secrets(ns).Update(ctx, secret, metav1.UpdateOptions{})
	tools.Must(t, err)
	want["tls_new-tls_tls.crt"], want["tls_new-tls_tls.key"] = certPEM2, keyPEM2
	tools.Eventually(t, time.Minute, "the rotated certificate in the files Secret and the manifest", func() error { return served(want) })
	tools.Must(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.ConfigSecret}, &cfg))
	if cfg.Annotations[layout.ConfigHashAnnotation] == hashBefore {
		t.Errorf("a rotated certificate left the configuration hash at %s: the pods could not tell they serve the old one", hashBefore)
	}
	unchanged("a rotated certificate")

	// The references removed: the files Secret goes, after nginx.conf
	// stopped naming its files.
	framework.UpdateInstance(ctx, t, c, client.ObjectKey{Namespace: ns, Name: "web"}, func(n *v1beta1.NginxOperator) { n.Spec.Config.Servers = n.Spec.Config.Servers[:1] })
	tools.Eventually(t, time.Minute, "the files Secret deleted", func() error {
		if err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.FilesSecret(0)}, &corev1.Secret{}); !apierrors.IsNotFound(err) {
			return fmt.Errorf("files Secret still there (%v)", err)
		}
		tools.Must(t, c.Get(ctx, client.ObjectKey{Namespace: ns, Name: names.ConfigSecret}, &cfg))
		if m, _ := reloader.ManifestOf(cfg.Data[layout.ConfigFile]); m != nil || strings.Contains(string(cfg.Data[layout.ConfigFile]), "/etc/nginx/files/") {
			return fmt.Errorf("nginx.conf still names files: %v", m)
		}
		return nil
	})
	unchanged("references removed")
}

// create creates obj (a Secret or a ConfigMap) with the admin's clientset.
func create(ctx context.Context, t *testing.T, cs kubernetes.Interface, obj client.Object) {
	t.Helper()
	var err error
	switch o := obj.(type) {
	case *corev1.Secret:
		_, err = cs.CoreV1().Secrets(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *corev1.ConfigMap:
		_, err = cs.CoreV1().ConfigMaps(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	default:
		t.Fatalf("create %T", obj)
	}
	tools.Must(t, err)
}

func keysOf(data map[string][]byte) []string {
	var out []string
	for k := range data {
		out = append(out, k)
	}
	return out
}
