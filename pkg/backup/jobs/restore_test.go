package jobs

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

func TestRestoreInitContainer(t *testing.T) {
	content := corev1.VolumeMount{Name: "content", MountPath: "/usr/share/nginx/html", ReadOnly: true}
	pvc := testBackup("nightly")
	pvc.Spec.Destination = v1beta1.Destination{PVC: &v1beta1.PVCDestination{ClaimName: "backups", Path: "/nginx"}}
	id := "20260101T030000.000000000Z-0123abcd"
	for _, tc := range []struct {
		name        string
		backup      *v1beta1.NginxBackup
		wantArgs    []string
		wantVolumes []string
		s3          bool
	}{
		{"s3", testBackup("nightly"), []string{"--s3-endpoint=s3.example.com:9000", "--s3-bucket=backups", "--prefix=nightly", "--s3-insecure"},
			[]string{restoreTmpVolume}, true},
		{"pvc", pvc, []string{"--pvc-path=" + restoreDestinationPath, "--prefix=nginx"}, []string{restoreTmpVolume, restoreDestinationVolume}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, volumes := RestoreInitContainer(tc.backup, id, content, testFacts(nil))
			want := append([]string{"restore", "--once", "--namespace=team-a", "--instance=web", "--id=" + id, "--target=/usr/share/nginx/html"}, tc.wantArgs...)
			for _, a := range want {
				if !slices.Contains(c.Args, a) {
					t.Errorf("args %v lack %s", c.Args, a)
				}
			}
			if c.Args[0] != "restore" || c.Name != RestoreContainerName || c.Image != "ghcr.io/nginx-operator/operator:v1" {
				t.Errorf("container %s image %s args %v", c.Name, c.Image, c.Args)
			}
			if m := mount(c, "content"); m == nil || m.ReadOnly || m.MountPath != content.MountPath {
				t.Errorf("content mount %+v, want read-write at %s", m, content.MountPath)
			}
			var names []string
			for _, v := range volumes {
				names = append(names, v.Name)
				if mount(c, v.Name) == nil {
					t.Errorf("volume %s not mounted", v.Name)
				}
				if !strings.HasPrefix(v.Name, "restore-") {
					t.Errorf("volume %s may collide with the pod's own", v.Name)
				}
			}
			if !slices.Equal(names, tc.wantVolumes) {
				t.Errorf("volumes %v, want %v", names, tc.wantVolumes)
			}
			if e := env(c, "TMPDIR"); e == nil || e.Value != restoreTmpPath {
				t.Errorf("TMPDIR %+v, want %s", e, restoreTmpPath)
			}
			if got := env(c, AccessKeyIDKey) != nil && env(c, SecretAccessKeyKey) != nil; got != tc.s3 {
				t.Errorf("S3 credentials in env: %v, want %v", got, tc.s3)
			}
			if m := mount(c, restoreDestinationVolume); m != nil && !m.ReadOnly {
				t.Error("the destination is mounted writable")
			}
			sc := c.SecurityContext
			if sc == nil || ptr.Deref(sc.AllowPrivilegeEscalation, true) || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) ||
				!ptr.Deref(sc.RunAsNonRoot, false) || sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) ||
				sc.SeccompProfile == nil || sc.SeccompProfile.Type != corev1.SeccompProfileTypeRuntimeDefault {
				t.Errorf("security context %+v is not restricted", sc)
			}
			if c.TerminationMessagePolicy != corev1.TerminationMessageFallbackToLogsOnError {
				t.Errorf("terminationMessagePolicy %s", c.TerminationMessagePolicy)
			}
		})
	}
	if content.ReadOnly != true {
		t.Error("the caller's mount was modified")
	}
}
