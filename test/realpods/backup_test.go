package realpods

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/test/framework"
	"github.com/nginx-operator/nginx-operator/test/framework/realcluster"
)

// Persistent content on real volumes, whose owners and modes are the
// kubelet's and the pods' users': nginx (user 101) serves a page from its
// claim, the backup agent (the operator's image, user 65532) archives it to
// another claim, and a new instance's restore init container seeds its own
// claim from that backup, which its nginx then serves.
func TestBackupToAClaimAndRestoreIntoANewInstanceOnRealVolumes(t *testing.T) {
	ctx, c, ns, cs, cl := setup(t)
	hc := realcluster.NodeOf(c).HTTPClient()

	objs := apply(ctx, t, c, ns, `
apiVersion: nginx.operator.dev/v1beta1
kind: NginxOperator
metadata:
  name: docs
spec:
  replicas: 1
  ports:
  - name: http
    containerPort: 8080
  content:
    volumeClaimTemplate:
      size: 1Gi
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: backups
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 1Gi
`)
	framework.WaitReady(ctx, t, cl, 2*time.Minute, objs...)

	// The page, put into the volume as a user would copy it there: the
	// default StorageClass's volumes are directories of the host.
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "content-docs-0", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pv.Spec.HostPath == nil {
		t.Fatalf("volume %s is not a hostPath volume: %+v", pv.Name, pv.Spec.PersistentVolumeSource)
	}
	const page = "persistent page\n"
	if err := os.WriteFile(filepath.Join(pv.Spec.HostPath.Path, "index.html"), []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	get(ctx, t, hc, "http://"+clusterIP(ctx, t, cs, ns, "docs")+":80/", want(200, page))

	apply(ctx, t, c, ns, `
apiVersion: nginx.operator.dev/v1beta1
kind: NginxBackup
metadata:
  name: once
spec:
  instance: docs
  destination:
    pvc:
      claimName: backups
`)
	var backup v1beta1.NginxBackup
	if !framework.WaitFor(ctx, 90*time.Second, func(ctx context.Context) bool {
		return cl.Get(ctx, client.ObjectKey{Namespace: ns, Name: "once"}, &backup) == nil && len(backup.Status.Backups) > 0
	}) {
		t.Fatalf("the backup did not complete: %+v", backup.Status)
	}
	id := backup.Status.Backups[0].ID
	t.Logf("backup %s: %d bytes", id, backup.Status.Backups[0].SizeBytes)

	objs = apply(ctx, t, c, ns, `
apiVersion: nginx.operator.dev/v1beta1
kind: NginxOperator
metadata:
  name: copy
spec:
  replicas: 1
  ports:
  - name: http
    containerPort: 8080
  content:
    volumeClaimTemplate:
      size: 1Gi
  restore:
    backup: once
    id: "`+id+`"
`)
	framework.WaitReady(ctx, t, cl, 2*time.Minute, objs...)
	get(ctx, t, hc, "http://"+clusterIP(ctx, t, cs, ns, "copy")+":80/", want(200, page))
	for name, logs := range containerLogs(ctx, t, cs, ns, "app.kubernetes.io/instance=copy") {
		for _, bad := range nginxTrouble {
			if strings.Contains(logs, bad) {
				t.Errorf("the log of %s has %q:\n%s", name, bad, logs)
			}
		}
	}
}
