package gateway

import (
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// locationField is the start of the field path of a location of the
// instance's spec in a validation error.
var locationField = regexp.MustCompile(`^spec\.config\.servers\[(\d+)\]\.locations\[(\d+)\]`)

// RoutesRefusedBy are the routes whose locations errs, the CRD's rules'
// verdict on the instance made of t (validation.RoutedNginxOperator),
// names, with the errors' messages for each. A route can make what the
// translator takes but the NginxOperator's rules do not (a header nginx
// manages itself, say): leaving such routes out keeps the Gateway's other
// routes served and changing. Empty when errs name no route's location.
func (t Translation) RoutesRefusedBy(errs field.ErrorList) map[RouteRef]string {
	messages := map[RouteRef][]string{}
	for _, e := range errs {
		m := locationField.FindStringSubmatch(e.Field)
		if m == nil {
			continue
		}
		server, _ := strconv.Atoi(m[1])
		location, _ := strconv.Atoi(m[2])
		if server >= len(t.origins) || location >= len(t.origins[server]) {
			continue // a 404 location, or a server no route made
		}
		ref := t.origins[server][location]
		msg := e.ErrorBody()
		if field := strings.TrimPrefix(strings.TrimPrefix(e.Field, m[0]), "."); field != "" {
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
// checks again: each round leaves out every route the errors name, so
// more rounds mean the rules name new routes each time.
const maxIsolations = 3
