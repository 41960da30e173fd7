package rollout

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/node"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// staticClass names the PersistentVolumes this test makes itself: the
// default StorageClass's hostPath volumes are root's with mode 0750 and the
// kubelet applies no fsGroup to hostPath volumes, so nginx (uid 101) could
// neither read nor restore them. Real provisioners either apply fsGroup
// (CSI drivers) or make world-writable directories (local-path); a
// restricted pod cannot chown as root, so this is the test environment's
// to fix, not the operator's.
const staticClass = "rollout-static"

// A one-shot NginxBackup to S3 runs its agent in a real pod, reading
// replica 0's content; a new instance with spec.restore serves that content
// byte for byte, and a restarted pod does not restore again.
func TestBackupToS3AndRestoreIntoANewInstanceServeTheSameBytes(t *testing.T) {
	t.Parallel()
	ctx, ns, cs, cl, n := setup(t)
	s3 := startS3(t, n.HostIP())

	// The source instance's content: a page and some random bytes.
	page := []byte("<h1>restored</h1>\n")
	blob := make([]byte, 256<<10)
	if _, err := rand.Read(blob); err != nil {
		t.Fatal(err)
	}
	staticVolume(ctx, t, cl, ns, "src", map[string][]byte{"index.html": page, "assets/blob.bin": blob})
	dstDir := staticVolume(ctx, t, cl, ns, "dst", nil)

	src := persistentInstance(ns, "src")
	if err := cl.Create(ctx, src); err != nil {
		t.Fatal(err)
	}
	waitReady(ctx, t, cl, client.ObjectKeyFromObject(src), 1)

	creds := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s3-creds", Namespace: ns},
		StringData: map[string]string{"AWS_ACCESS_KEY_ID": tools.VersitygwAccessKey, "AWS_SECRET_ACCESS_KEY": tools.VersitygwSecretKey},
	}
	if err := cl.Create(ctx, creds); err != nil {
		t.Fatal(err)
	}
	nb := &v1beta1.NginxBackup{
		ObjectMeta: metav1.ObjectMeta{Name: "once", Namespace: ns},
		Spec: v1beta1.NginxBackupSpec{Instance: "src", Destination: v1beta1.Destination{S3: &v1beta1.S3Destination{
			Endpoint: s3, Bucket: "backups", Prefix: "nginx", Insecure: true, CredentialsSecret: "s3-creds",
		}}},
	}
	if err := cl.Create(ctx, nb); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 90*time.Second, func(ctx context.Context) bool {
		if cl.Get(ctx, client.ObjectKeyFromObject(nb), nb) != nil {
			return false
		}
		return nb.Status.Phase == v1beta1.BackupSucceeded || nb.Status.Phase == v1beta1.BackupFailed
	}) || nb.Status.Phase != v1beta1.BackupSucceeded || len(nb.Status.Backups) == 0 {
		t.Fatalf("backup phase %q, backups %+v, conditions %+v", nb.Status.Phase, nb.Status.Backups, nb.Status.Conditions)
	}
	id := nb.Status.Backups[0].ID
	t.Logf("backup %s stored at %s (%d bytes)", id, nb.Status.Backups[0].Location, nb.Status.Backups[0].SizeBytes)

	dst := persistentInstance(ns, "dst")
	dst.Spec.Restore = &v1beta1.RestoreSpec{Backup: "once", ID: id}
	if err := cl.Create(ctx, dst); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(dst)
	inst := waitReady(ctx, t, cl, key, 1)
	if !framework.WaitFor(ctx, 30*time.Second, func(ctx context.Context) bool {
		return cl.Get(ctx, key, inst) == nil && meta.IsStatusConditionTrue(inst.Status.Conditions, v1beta1.ConditionRestored)
	}) {
		t.Fatalf("not Restored: %+v", inst.Status.Conditions)
	}
	var svc corev1.Service
	if err := cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: layout.NamesFor("dst").Service}, &svc); err != nil {
		t.Fatal(err)
	}
	base := "http://" + net.JoinHostPort(svc.Spec.ClusterIP, "80")
	for path, want := range map[string][]byte{"/": page, "/assets/blob.bin": blob} {
		if got := fetch(ctx, t, n, base+path); !bytes.Equal(got, want) {
			t.Errorf("GET %s from the restored instance: %d bytes, want the %d bytes backed up", path, len(got), len(want))
		}
	}

	// A restarted pod finds the restored id in its volume and leaves the
	// content alone: a file written since survives.
	if err := os.WriteFile(filepath.Join(dstDir, "since.txt"), []byte("kept\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(filepath.Join(dstDir, "since.txt"), layout.UID, layout.UID); err != nil {
		t.Fatal(err)
	}
	pod := layout.NamesFor("dst").PodName(0)
	old, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cs.CoreV1().Pods(ns).Delete(ctx, pod, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if !framework.WaitFor(ctx, 90*time.Second, func(ctx context.Context) bool {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		return err == nil && p.UID != old.UID && framework.PodReady(p)
	}) {
		t.Fatalf("pod %s did not come back ready", pod)
	}
	if got := fetch(ctx, t, n, base+"/since.txt"); string(got) != "kept\n" {
		t.Errorf("after a restart, since.txt = %q: the restore ran again", got)
	}
	if got := fetch(ctx, t, n, base+"/assets/blob.bin"); !bytes.Equal(got, blob) {
		t.Errorf("after a restart, blob.bin has %d bytes, want the %d backed up", len(got), len(blob))
	}
}

// startS3 runs versitygw on the host's end of the link to the node, where
// pods reach it, until the test ends, with the bucket the backups go to; it
// returns its host:port.
func startS3(t *testing.T, hostIP string) string {
	t.Helper()
	addr := tools.StartVersitygwOn(t, hostIP)
	// The agent writes to an existing bucket; it never creates one.
	mc, err := minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(tools.VersitygwAccessKey, tools.VersitygwSecretKey, ""), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := mc.MakeBucket(ctx, "backups", minio.MakeBucketOptions{Region: "us-east-1"}); err != nil {
		t.Fatalf("creating the bucket: %v", err)
	}
	return addr
}

// staticVolume makes a hostPath PersistentVolume bound ahead to the content
// claim of instance's replica 0, in a directory owned by nginx's uid that
// holds files, and returns the directory.
func staticVolume(ctx context.Context, t *testing.T, cl client.Client, ns, instance string, files map[string][]byte) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "rollout-pv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chown(p, layout.UID, layout.UID)
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: ns + "-" + instance},
		Spec: corev1.PersistentVolumeSpec{
			StorageClassName:              staticClass,
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("64Mi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: dir, Type: ptr.To(corev1.HostPathDirectory)}},
			ClaimRef:                      &corev1.ObjectReference{Namespace: ns, Name: layout.NamesFor(instance).ContentClaimName(0)},
		},
	}
	if err := cl.Create(ctx, pv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Delete(context.Background(), pv) })
	return dir
}

// persistentInstance is one replica with persistent content on the test's
// static volumes.
func persistentInstance(ns, name string) *v1beta1.NginxOperator {
	n := webInstance(ns)
	n.Name = name
	n.Spec.Replicas = ptr.To[int32](1)
	n.Spec.Content = v1beta1.Content{VolumeClaimTemplate: &v1beta1.VolumeClaimTemplate{Size: resource.MustParse("64Mi"), StorageClassName: ptr.To(staticClass)}}
	return n
}

// waitReady waits until the instance is Available with replicas ready.
func waitReady(ctx context.Context, t *testing.T, cl client.Client, key client.ObjectKey, replicas int32) *v1beta1.NginxOperator {
	t.Helper()
	var n v1beta1.NginxOperator
	if !framework.WaitFor(ctx, 90*time.Second, func(ctx context.Context) bool {
		return cl.Get(ctx, key, &n) == nil && n.Status.ReadyReplicas == replicas &&
			meta.IsStatusConditionTrue(n.Status.Conditions, v1beta1.ConditionAvailable)
	}) {
		t.Fatalf("%s not ready: %+v", key, n.Status)
	}
	return &n
}

// fetch GETs url from the node, retrying until it answers 200 (a new
// Service needs kube-proxy's rules first), and returns the body.
func fetch(ctx context.Context, t *testing.T, n *node.Node, url string) []byte {
	t.Helper()
	c := n.HTTPClient()
	var body []byte
	var last string
	if !framework.WaitFor(ctx, 30*time.Second, func(context.Context) bool {
		resp, err := c.Get(url)
		if err != nil {
			last = err.Error()
			return false
		}
		defer resp.Body.Close()
		body, err = io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			last = fmt.Sprintf("status %d, %v", resp.StatusCode, err)
			return false
		}
		return true
	}) {
		t.Fatalf("GET %s from the node: %s", url, last)
	}
	return body
}
