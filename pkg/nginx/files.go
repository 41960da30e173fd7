package nginx

// The files nginx reads of what an instance references: the certificates
// and keys of its TLS Secrets, its CA certificates and its htpasswd files.
// The operator copies them into the instance's files Secrets (at most
// layout.FileShards of them), which the pods mount as one projected volume
// whose sources are all of those Secrets, each optional: the pod template
// is the same whatever the instance references, so a new certificate, a
// new CA or a new htpasswd file never rolls the pods. nginx.conf is headed
// with the manifest of the files it names (their names and SHA-256
// digests, never their content), and each pod's reloader loads a
// configuration only once the kubelet has brought every file of its
// manifest (pkg/reloader's files.go): a new configuration is pushed at
// once, and the files follow within seconds, as the operator nudges the
// pods.

import (
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/naming"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// instanceFiles are the files of an instance's references, as its files
// Secrets carry them.
type instanceFiles struct {
	// shards are the data of each files Secret, by shard; an empty one is
	// not wanted (the Secret is deleted).
	shards [layout.FileShards]map[string][]byte
	// manifest lists every file, by name, with its digest.
	manifest []reloader.File
	// hash digests the manifest (so, the files): "" without files.
	hash string
}

// referenceFiles adds to files (by render.FileName) the data of every key
// nginx reads of ref, an object read as obj; an object without one of
// those keys is a missing reference.
func referenceFiles(files map[string][]byte, ref render.Reference, obj any) error {
	for _, key := range ref.FileKeys() {
		var data []byte
		ok := false
		switch o := obj.(type) {
		case *corev1.Secret:
			data, ok = o.Data[key]
			if !ok {
				return k8sutil.MissingWatchedReference(ReasonSecretNotFound, "%s Secret %q has no key %q", ref.Use, ref.Name, key)
			}
		case *corev1.ConfigMap:
			if s, in := o.Data[key]; in {
				data, ok = []byte(s), true
			} else {
				data, ok = o.BinaryData[key]
			}
			if !ok {
				return k8sutil.MissingWatchedReference(ReasonConfigMapNotFound, "%s ConfigMap %q has no key %q", ref.Use, ref.Name, key)
			}
		default:
			return nil
		}
		files[render.FileName(ref, key)] = data
	}
	return nil
}

// shardFiles lays files out over the files Secrets: in the order of their
// names, each in the first Secret with room for it (a Secret carries
// layout.MaxFilesSecretSize, its keys counted), so that most instances
// have one files Secret and a file keeps its Secret while the ones before
// it stay. Files that do not fit in layout.FileShards Secrets are the
// spec's fault: InvalidConfig.
func shardFiles(files map[string][]byte) (instanceFiles, error) {
	var out instanceFiles
	var sizes [layout.FileShards]int
	for _, name := range slices.Sorted(maps.Keys(files)) {
		data := files[name]
		size := len(name) + len(data)
		out.manifest = append(out.manifest, reloader.File{Name: name, SHA256: reloader.Digest(data)})
		if size > layout.MaxFilesSecretSize {
			return instanceFiles{}, configErrorf("file %s is %d bytes, more than the %d a Secret carries: the pods cannot be given it", name, len(data), layout.MaxFilesSecretSize-len(name))
		}
		placed := false
		for i := range out.shards {
			if sizes[i]+size > layout.MaxFilesSecretSize {
				continue
			}
			if out.shards[i] == nil {
				out.shards[i] = map[string][]byte{}
			}
			out.shards[i][name], sizes[i], placed = data, sizes[i]+size, true
			break
		}
		if !placed {
			var all int
			for _, d := range files {
				all += len(d)
			}
			return instanceFiles{}, configErrorf("the certificates, keys, CA certificates and htpasswd files this instance references are %d bytes (%d files), more than the %d Secrets of %d bytes the operator gives its pods carry: "+
				"split the servers across instances (a Gateway: its listeners across Gateways)", all, len(files), layout.FileShards, layout.MaxFilesSecretSize)
		}
	}
	if len(out.manifest) > 0 {
		out.hash = naming.Hash(out.manifest)[:16]
	}
	return out, nil
}

// filesSecrets are the instance's files Secrets that hold files, and the
// names of those that hold none (which the operator deletes).
func filesSecrets(nginx *v1beta1.NginxOperator, files instanceFiles) (wanted []*corev1.Secret, unwanted []string) {
	names := layout.NamesFor(nginx.Name)
	for i, data := range files.shards {
		if len(data) == 0 {
			unwanted = append(unwanted, names.FilesSecret(i))
			continue
		}
		wanted = append(wanted, &corev1.Secret{
			ObjectMeta: objectMeta(nginx, names.FilesSecret(i)),
			Type:       corev1.SecretTypeOpaque,
			Data:       data,
		})
	}
	return wanted, unwanted
}

// filesVolume is the pods' one volume of files: every files Secret the
// instance may have, each optional (a shard the instance does not need
// does not exist), so it is the same whatever the files are.
func filesVolume(nginx *v1beta1.NginxOperator) corev1.Volume {
	names := layout.NamesFor(nginx.Name)
	sources := make([]corev1.VolumeProjection, 0, layout.FileShards)
	for i := range layout.FileShards {
		sources = append(sources, corev1.VolumeProjection{Secret: &corev1.SecretProjection{
			LocalObjectReference: corev1.LocalObjectReference{Name: names.FilesSecret(i)},
			Optional:             ptr.To(true),
		}})
	}
	return corev1.Volume{Name: layout.FilesVolume, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: sources}}}
}
