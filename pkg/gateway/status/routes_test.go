package status

import (
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/nginx-operator/nginx-operator/pkg/gateway/graph"
)

// A route's status entries are compared field by field (parentStatusEqual):
// each field tells two entries apart, and the comparison knows every field
// the API has (a new one in a Gateway API release fails here, not silently).
func TestRouteStatusEntriesDifferByEachField(t *testing.T) {
	for typ, fields := range map[reflect.Type]int{
		reflect.TypeFor[gatewayv1.RouteParentStatus](): 3,
		reflect.TypeFor[gatewayv1.ParentReference]():   6,
		reflect.TypeFor[metav1.Condition]():            6,
	} {
		if typ.NumField() != fields {
			t.Errorf("%s has %d fields, the comparison knows %d", typ, typ.NumField(), fields)
		}
	}
	base := func() gatewayv1.RouteParentStatus {
		return gatewayv1.RouteParentStatus{
			ParentRef:      gatewayv1.ParentReference{Name: "web", Namespace: ptr.To(gatewayv1.Namespace("a")), SectionName: ptr.To(gatewayv1.SectionName("http")), Port: ptr.To(gatewayv1.PortNumber(80)), Group: ptr.To(gatewayv1.Group(graph.Group)), Kind: ptr.To(gatewayv1.Kind("Gateway"))},
			ControllerName: graph.ControllerName,
			Conditions: []metav1.Condition{{Type: "Accepted", Status: metav1.ConditionTrue, ObservedGeneration: 1,
				LastTransitionTime: metav1.NewTime(time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)), Reason: "Accepted", Message: "ok"}},
		}
	}
	changes := map[string]func(*gatewayv1.RouteParentStatus){
		"name":       func(s *gatewayv1.RouteParentStatus) { s.ParentRef.Name = "other" },
		"namespace":  func(s *gatewayv1.RouteParentStatus) { s.ParentRef.Namespace = nil },
		"section":    func(s *gatewayv1.RouteParentStatus) { s.ParentRef.SectionName = ptr.To(gatewayv1.SectionName("https")) },
		"port":       func(s *gatewayv1.RouteParentStatus) { s.ParentRef.Port = ptr.To(gatewayv1.PortNumber(8080)) },
		"group":      func(s *gatewayv1.RouteParentStatus) { s.ParentRef.Group = nil },
		"kind":       func(s *gatewayv1.RouteParentStatus) { s.ParentRef.Kind = ptr.To(gatewayv1.Kind("Service")) },
		"controller": func(s *gatewayv1.RouteParentStatus) { s.ControllerName = "other.dev/gateway" },
		"a condition more": func(s *gatewayv1.RouteParentStatus) {
			s.Conditions = append(s.Conditions, metav1.Condition{Type: "ResolvedRefs"})
		},
		"condition type":       func(s *gatewayv1.RouteParentStatus) { s.Conditions[0].Type = "ResolvedRefs" },
		"condition status":     func(s *gatewayv1.RouteParentStatus) { s.Conditions[0].Status = metav1.ConditionFalse },
		"observed generation":  func(s *gatewayv1.RouteParentStatus) { s.Conditions[0].ObservedGeneration = 2 },
		"last transition time": func(s *gatewayv1.RouteParentStatus) { s.Conditions[0].LastTransitionTime = metav1.Now() },
		"reason":               func(s *gatewayv1.RouteParentStatus) { s.Conditions[0].Reason = "NotAllowedByListeners" },
		"message":              func(s *gatewayv1.RouteParentStatus) { s.Conditions[0].Message = "no" },
	}
	if a, b := base(), base(); !parentStatusEqual(a, b) {
		t.Fatal("two equal entries compare different")
	}
	for name, change := range changes {
		changed := base()
		change(&changed)
		if parentStatusEqual(base(), changed) {
			t.Errorf("entries differing by %s compare equal", name)
		}
	}
}
