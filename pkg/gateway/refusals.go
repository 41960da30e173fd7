package gateway

import (
	"errors"
	"regexp"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// locationField is the start of the field path of a location of the
// instance's spec in the apiserver's refusal.
var locationField = regexp.MustCompile(`^spec\.config\.servers\[(\d+)\]\.locations\[(\d+)\]`)

// RoutesRefusedBy are the routes whose locations err, the apiserver's
// refusal of the instance made of t, names (its causes' fields), with the
// refusal's messages for each. A route can make what the translator takes
// but the NginxOperator's schema does not (a header nginx manages itself,
// say): leaving such routes out keeps the Gateway's other routes served
// and changing. Empty when err names no route's location.
func (t Translation) RoutesRefusedBy(err error) map[RouteRef]string {
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Details == nil {
		return nil
	}
	messages := map[RouteRef][]string{}
	for _, cause := range status.Status().Details.Causes {
		m := locationField.FindStringSubmatch(cause.Field)
		if m == nil {
			continue
		}
		server, _ := strconv.Atoi(m[1])
		location, _ := strconv.Atoi(m[2])
		if server >= len(t.origins) || location >= len(t.origins[server]) {
			continue // a 404 location, or a server no route made
		}
		ref := t.origins[server][location]
		msg := cause.Message
		if field := strings.TrimPrefix(strings.TrimPrefix(cause.Field, m[0]), "."); field != "" {
			msg = field + ": " + msg
		}
		messages[ref] = append(messages[ref], msg)
	}
	out := make(map[RouteRef]string, len(messages))
	for ref, ms := range messages {
		out[ref] = strings.Join(ms, "; ")
	}
	return out
}

// maxIsolations bounds how many times a reconcile leaves routes out and
// applies again: each round leaves out every route the refusal names, so
// more rounds mean the apiserver names new routes each time.
const maxIsolations = 3
