package monitor

import (
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
)

// statusFor is the one place a monitor's status is computed from what a
// reconcile saw and did.
func TestStatusForComputesTheWholeStatusFromWhatWasObserved(t *testing.T) {
	with := func(instances ...Instance) *Selection { s := NewSelection(instances); return &s }
	web := Instance{Namespace: "team-a", Name: "web", MetricsEnabled: true, Replicas: 2}
	dark := Instance{Namespace: "team-a", Name: "dark"}
	type cond struct {
		status metav1.ConditionStatus
		reason string
	}
	for _, tc := range []struct {
		name                   string
		o                      observation
		accepted, ready, smCnd cond
		matched                int32
		secret                 string
	}{
		{name: "an invalid spec", o: observation{invalid: specErrorf("endpoint.interval %q is not a positive Prometheus duration", "0s")},
			accepted: cond{metav1.ConditionFalse, ReasonInvalidSpec}, ready: cond{metav1.ConditionFalse, ReasonInvalidSpec}},
		{name: "a missing credentials Secret", o: observation{selection: with(web), failed: k8sutil.MissingReference(ReasonSecretNotFound, "Secret %q not found", "basic")},
			accepted: cond{metav1.ConditionTrue, ReasonSpecValid}, ready: cond{metav1.ConditionFalse, ReasonSecretNotFound}, matched: 1},
		{name: "the instances could not be listed", o: observation{failed: errors.New("timeout")},
			accepted: cond{metav1.ConditionTrue, ReasonSpecValid}},
		{name: "the Secret could not be applied", o: observation{selection: with(web), applyFailed: errors.New("forbidden")},
			accepted: cond{metav1.ConditionTrue, ReasonSpecValid}, ready: cond{metav1.ConditionFalse, ReasonApplyFailed}, matched: 1},
		{name: "nothing selected", o: observation{selection: with(), secret: "m-scrape-config", serviceMonitor: serviceMonitorDisabled},
			accepted: cond{metav1.ConditionTrue, ReasonSpecValid}, ready: cond{metav1.ConditionFalse, ReasonNoMatchingInstances}, secret: "m-scrape-config"},
		{name: "nothing with metrics", o: observation{selection: with(dark), secret: "m-scrape-config", serviceMonitor: serviceMonitorDisabled},
			accepted: cond{metav1.ConditionTrue, ReasonSpecValid}, ready: cond{metav1.ConditionFalse, ReasonMetricsNotEnabled}, matched: 1, secret: "m-scrape-config"},
		{name: "scraped, ServiceMonitor applied", o: observation{selection: with(web, dark), secret: "m-scrape-config", serviceMonitor: serviceMonitorApplied},
			accepted: cond{metav1.ConditionTrue, ReasonSpecValid}, ready: cond{metav1.ConditionTrue, ReasonScrapeConfigGenerated}, smCnd: cond{metav1.ConditionTrue, ReasonServiceMonitorApplied}, matched: 2, secret: "m-scrape-config"},
		{name: "scraped, no prometheus-operator", o: observation{selection: with(web), secret: "m-scrape-config", serviceMonitor: serviceMonitorAPIMissing},
			accepted: cond{metav1.ConditionTrue, ReasonSpecValid}, ready: cond{metav1.ConditionTrue, ReasonScrapeConfigGenerated}, smCnd: cond{metav1.ConditionFalse, ReasonAPINotAvailable}, matched: 1, secret: "m-scrape-config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mon := &v1beta1.NginxMonitor{ObjectMeta: metav1.ObjectMeta{Name: "m", Namespace: "team-a", Generation: 3}}
			statusFor(mon, tc.o)
			for typ, want := range map[string]cond{v1beta1.ConditionAccepted: tc.accepted, v1beta1.ConditionReady: tc.ready, ConditionServiceMonitor: tc.smCnd} {
				c := meta.FindStatusCondition(mon.Status.Conditions, typ)
				switch {
				case want.status == "" && c != nil:
					t.Errorf("%s = %+v, want unset", typ, c)
				case want.status != "" && (c == nil || c.Status != want.status || c.Reason != want.reason || c.ObservedGeneration != 3):
					t.Errorf("%s = %+v, want %s/%s", typ, c, want.status, want.reason)
				}
			}
			if mon.Status.MatchedInstances != tc.matched || mon.Status.ScrapeConfigSecret != tc.secret || mon.Status.ObservedGeneration != 3 {
				t.Errorf("status %+v, want %d matched and Secret %q", mon.Status, tc.matched, tc.secret)
			}
		})
	}
}
