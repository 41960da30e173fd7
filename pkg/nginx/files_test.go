package nginx

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// Every key nginx reads of a referenced Secret or ConfigMap (its data or
// its binary data) becomes a file under its render.FileName; a key the
// object lacks is a missing reference that names it.
func TestReferencedKeysBecomeFilesAndAMissingKeyIsNamed(t *testing.T) {
	files := map[string][]byte{}
	tls := render.Reference{Use: render.UseTLS, Kind: "Secret", Name: "web-tls"}
	ca := render.Reference{Use: render.UseCA, Kind: "ConfigMap", Name: "cas", Keys: []string{"a.crt", "b.crt"}}
	if err := referenceFiles(files, tls, &corev1.Secret{Data: map[string][]byte{"tls.crt": []byte("c"), "tls.key": []byte("k"), "ca.crt": []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	if err := referenceFiles(files, ca, &corev1.ConfigMap{Data: map[string]string{"a.crt": "A"}, BinaryData: map[string][]byte{"b.crt": []byte("B")}}); err != nil {
		t.Fatal(err)
	}
	want := map[string][]byte{"tls_web-tls_tls.crt": []byte("c"), "tls_web-tls_tls.key": []byte("k"), "ca-configmap_cas_a.crt": []byte("A"), "ca-configmap_cas_b.crt": []byte("B")}
	if !equality.Semantic.DeepEqual(want, files) {
		t.Errorf("files %q, want %q", files, want)
	}
	for _, tc := range []struct {
		ref    render.Reference
		obj    any
		reason string
		want   string
	}{
		{tls, &corev1.Secret{Data: map[string][]byte{"tls.crt": []byte("c")}}, ReasonSecretNotFound, `TLS Secret "web-tls" has no key "tls.key"`},
		{ca, &corev1.ConfigMap{Data: map[string]string{"a.crt": "A"}}, ReasonConfigMapNotFound, `CA certificate ConfigMap "cas" has no key "b.crt"`},
	} {
		err := referenceFiles(map[string][]byte{}, tc.ref, tc.obj)
		if err == nil || k8sutil.ReasonOf(err, "") != tc.reason || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %s without a key: %v, want %s %q", tc.ref.Kind, tc.ref.Name, err, tc.reason, tc.want)
		}
	}
}

// The files fill the files Secrets in the order of their names, each in
// the first with room for it (keys counted), so a small instance has one;
// the manifest lists each with its digest, and its hash changes with any
// file's content; what does not fit in layout.FileShards Secrets is
// refused, naming the sizes, as is a file no Secret can carry.
func TestFilesFillTheFilesSecretsInOrderAndWhatDoesNotFitIsRefused(t *testing.T) {
	small := map[string][]byte{"tls_b_tls.crt": []byte("cert"), "auth_a_auth": []byte("users")}
	got, err := shardFiles(small)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.shards[0]) != 2 || got.shards[1] != nil || got.shards[2] != nil || got.shards[3] != nil {
		t.Errorf("two small files in shards %v, want both in the first", got.shards)
	}
	wantManifest := []reloader.File{{Name: "auth_a_auth", SHA256: reloader.Digest([]byte("users"))}, {Name: "tls_b_tls.crt", SHA256: reloader.Digest([]byte("cert"))}}
	if !slices.Equal(got.manifest, wantManifest) || got.hash == "" {
		t.Errorf("manifest %v (hash %q), want %v", got.manifest, got.hash, wantManifest)
	}
	rotated, err := shardFiles(map[string][]byte{"tls_b_tls.crt": []byte("cert 2"), "auth_a_auth": []byte("users")})
	if err != nil || rotated.hash == got.hash {
		t.Errorf("a changed file: hash %q (was %q), %v", rotated.hash, got.hash, err)
	}
	if none, err := shardFiles(map[string][]byte{}); err != nil || none.hash != "" || none.manifest != nil {
		t.Errorf("no files: %+v, %v", none, err)
	}

	// Files of 400 KiB: two to a Secret.
	big := map[string][]byte{}
	for _, name := range []string{"f1", "f2", "f3", "f4", "f5"} {
		big[name] = bytes.Repeat([]byte("x"), 400<<10)
	}
	got, err = shardFiles(big)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]string{{"f1", "f2"}, {"f3", "f4"}, {"f5"}, nil} {
		var names []string
		for name := range got.shards[i] {
			names = append(names, name)
		}
		slices.Sort(names)
		if !slices.Equal(names, want) {
			t.Errorf("shard %d holds %v, want %v", i, names, want)
		}
	}
	for _, name := range []string{"f6", "f7", "f8", "f9"} {
		big[name] = bytes.Repeat([]byte("x"), 400<<10)
	}
	if _, err := shardFiles(big); err == nil || k8sutil.ReasonOf(err, "") != ReasonInvalidConfig || !strings.Contains(err.Error(), "(9 files), more than the 4 Secrets") {
		t.Errorf("files beyond the Secrets: %v, want InvalidConfig naming them", err)
	}
	if _, err := shardFiles(map[string][]byte{"huge": bytes.Repeat([]byte("x"), 1<<20)}); err == nil || !strings.Contains(err.Error(), "file huge is 1048576 bytes") {
		t.Errorf("a file no Secret carries: %v", err)
	}
}

// The pod template has one volume of files, whose sources are every
// files Secret the instance may have, each optional, mounted read-only
// where the renderer points nginx: the same whatever the instance
// references; and the files Secrets hold what the shards say, labelled
// as the instance's children, the empty ones named for deletion.
func TestThePodsMountEveryFilesSecretAsOneOptionalVolume(t *testing.T) {
	n := testInstance("web")
	pod := StatefulSet(n, Materials{Image: "nginx:1.27", ReloaderImage: "operator:1"}).Spec.Template.Spec
	var files *corev1.Volume
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == layout.FilesVolume {
			files = &pod.Volumes[i]
		}
	}
	if files == nil || files.Projected == nil || len(files.Projected.Sources) != layout.FileShards {
		t.Fatalf("files volume %+v, want a projected volume of %d sources", files, layout.FileShards)
	}
	for i, src := range files.Projected.Sources {
		if src.Secret == nil || src.Secret.Name != "web-nginx-files-"+string(rune('0'+i)) || !ptr.Deref(src.Secret.Optional, false) || src.Secret.Items != nil {
			t.Errorf("source %d: %+v, want the whole optional Secret web-nginx-files-%d", i, src, i)
		}
	}
	if !slices.ContainsFunc(pod.Containers[0].VolumeMounts, func(m corev1.VolumeMount) bool {
		return equality.Semantic.DeepEqual(m, corev1.VolumeMount{Name: layout.FilesVolume, MountPath: render.PodPaths().Files, ReadOnly: true})
	}) {
		t.Errorf("mounts %+v, want the files volume read-only at %s", pod.Containers[0].VolumeMounts, render.PodPaths().Files)
	}

	shards, err := shardFiles(map[string][]byte{"tls_b_tls.crt": []byte("cert")})
	if err != nil {
		t.Fatal(err)
	}
	wanted, unwanted := filesSecrets(n, shards)
	if len(wanted) != 1 || wanted[0].Name != "web-nginx-files-0" || string(wanted[0].Data["tls_b_tls.crt"]) != "cert" ||
		wanted[0].Labels["app.kubernetes.io/instance"] != "web" || wanted[0].Type != corev1.SecretTypeOpaque {
		t.Errorf("files Secrets %+v", wanted)
	}
	if !slices.Equal(unwanted, []string{"web-nginx-files-1", "web-nginx-files-2", "web-nginx-files-3"}) {
		t.Errorf("unwanted files Secrets %v", unwanted)
	}
	// One more reference of each kind changes nothing of the template.
	more := n.DeepCopy()
	more.Spec.Config.Servers = append(more.Spec.Config.Servers, v1beta1.Server{Port: "http", TLS: &v1beta1.TLS{SecretName: "new-tls",
		ClientCertificates: &v1beta1.ClientCertificates{CACertificate: v1beta1.CACertificateRef{Kind: "ConfigMap", Name: "ca", Key: "ca.crt"}}},
		BasicAuth: &v1beta1.HTTPBasicAuth{SecretName: "users", Key: "auth"}})
	in := Materials{Image: "nginx:1.27", ReloaderImage: "operator:1", References: render.ReferencesOf(&more.Spec)}
	if !equality.Semantic.DeepEqual(StatefulSet(n, Materials{Image: "nginx:1.27", ReloaderImage: "operator:1"}).Spec.Template, StatefulSet(more, in).Spec.Template) {
		t.Error("a new TLS Secret, CA and basic auth changed the pod template")
	}
}
