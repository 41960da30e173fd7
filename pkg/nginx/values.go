package nginx

import (
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
)

// checkCrossField returns a ConfigError for what the CRD cannot refuse at
// admission. Every rule on a single value, and every cross-field rule CEL
// can afford, lives in the CRD (pkg/apis/nginx/v1beta1) and is not repeated
// here.
//
// Two locations of one server with the same path: nginx refuses the
// duplicate location, but a CEL rule comparing every pair of locations of
// every server (32 servers of 64 paths of up to 512 characters) exceeds the
// apiserver's cost budget for a CRD rule, so the CRD cannot hold it.
func checkCrossField(spec *v1beta1.NginxOperatorSpec) error {
	for i, s := range spec.Config.Servers {
		seen := map[[2]string]bool{}
		for j, l := range s.Locations {
			key := [2]string{l.Path}
			if l.Exact {
				key[1] = "="
			}
			if seen[key] {
				return configErrorf("config.servers[%d].locations[%d]: path %q appears twice", i, j, l.Path)
			}
			seen[key] = true
		}
	}
	return nil
}
