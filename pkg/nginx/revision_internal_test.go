package nginx

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/reloader"
)

// A configuration keeps the revision the config Secret holds it with, so a
// resync writes nothing; a new one gets a revision above the held one and
// at least the time in milliseconds, so revisions keep growing when the
// cache shows an older Secret than the operator last wrote, when the
// Secret is gone, and when the clock is behind the held revision.
func TestAConfigurationsRevisionGrowsWithEveryNewConfigurationOnly(t *testing.T) {
	now := time.UnixMilli(1_800_000_000_000)
	held := func(hash, revision string) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{layout.ConfigHashAnnotation: hash}},
			Data: map[string][]byte{reloader.RevisionFile: []byte(revision)}}
	}
	for _, c := range []struct {
		name string
		held *corev1.Secret
		want uint64
	}{
		{"no Secret yet", nil, 1_800_000_000_000},
		{"the same configuration", held("abc", "1700000000000"), 1_700_000_000_000},
		{"a new configuration", held("old", "1700000000000"), 1_800_000_000_000},
		{"a new configuration, the clock behind the held revision", held("old", "1900000000000"), 1_900_000_000_001},
		{"a Secret written before revisions", held("abc", ""), 1_800_000_000_000},
		{"a revision that is no number", held("abc", "x"), 1_800_000_000_000},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := configRevision(c.held, "abc", now); got != c.want {
				t.Errorf("configRevision: %d, want %d", got, c.want)
			}
		})
	}
}
