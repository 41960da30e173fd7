// How a location matches requests: the path types, the header, query
// parameter and method matches, and the key that tells two locations of
// a server apart.

package v1beta1

import (
	"fmt"
	"strings"
)

// RequestMatch is what a request must carry besides its path.
type RequestMatch struct {
	// Headers the request must have, each with a matching value. A header
	// sent more than once is matched by its first value.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	Headers []HeaderMatch `json:"headers,omitempty"`
	// QueryParams the request's query must have, each with a matching
	// value. Names are case-sensitive; the value is compared as the client
	// sent it, percent-encoding and all; a parameter sent more than once is
	// matched by its first value.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	QueryParams []QueryParamMatch `json:"queryParams,omitempty"`
	// Method the request must use.
	// +optional
	// +kubebuilder:validation:Enum=GET;HEAD;POST;PUT;DELETE;CONNECT;OPTIONS;TRACE;PATCH
	Method string `json:"method,omitempty"`
}

// HeaderMatch matches one request header by name (in any case) and value.
type HeaderMatch struct {
	// Type is Exact (unset): the value, case-sensitive; or
	// RegularExpression: a regular expression that must match the whole
	// value, in the syntax nginx's PCRE2 and RE2 read alike (as a path's).
	// +optional
	// +kubebuilder:validation:Enum=Exact;RegularExpression
	Type string `json:"type,omitempty"`
	// Name of the header: letters, digits and '-' only, since nginx drops
	// a header with any other character in its name (ignore_invalid_headers).
	// Each name may appear once, in any case, which the controller checks
	// (condition Degraded, reason InvalidConfig).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=128
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9-]+$`
	Name string `json:"name"`
	// Value the header must have, or the regular expression it must match.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^[ -~]+$`
	Value string `json:"value"`
}

// QueryParamMatch matches one query parameter by name and value.
type QueryParamMatch struct {
	// Type is Exact (unset): the value, case-sensitive; or
	// RegularExpression: a regular expression that must match the whole
	// value, in the syntax nginx's PCRE2 and RE2 read alike (as a path's).
	// +optional
	// +kubebuilder:validation:Enum=Exact;RegularExpression
	Type string `json:"type,omitempty"`
	// Name of the parameter, case-sensitive.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=256
	// +kubebuilder:validation:Pattern=`^[A-Za-z0-9!#$%&'*+.^_|~-]+$`
	Name string `json:"name"`
	// Value the parameter must have, or the regular expression it must match.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=1024
	// +kubebuilder:validation:Pattern=`^[ -~]+$`
	Value string `json:"value"`
}

// The path types of a Location (Gateway API's PathMatchType, and nginx's
// own string prefix).
const (
	PathPrefixString      = "Prefix"
	PathPrefixElements    = "PathPrefix"
	PathExact             = "Exact"
	PathRegularExpression = "RegularExpression"
)

// MatchRegularExpression is the type of a header or query parameter match
// by regular expression; the other is Exact.
const MatchRegularExpression = "RegularExpression"

// PathTypeOf is l's path type, with exact: true read as Exact and an unset
// type as Prefix.
func PathTypeOf(l Location) string {
	switch {
	case l.Exact:
		return PathExact
	case l.PathType == "":
		return PathPrefixString
	}
	return l.PathType
}

// LocationMatchKey is what tells two locations of a server apart: their
// path, path type and match, header names in any case. Two with the same
// key are one too many.
func LocationMatchKey(l Location) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%q %s", l.Path, PathTypeOf(l))
	if m := l.Match; m != nil {
		b.WriteString(" " + m.Method)
		for _, h := range m.Headers {
			fmt.Fprintf(&b, "|h %q %q %q", h.Type, strings.ToLower(h.Name), h.Value)
		}
		for _, q := range m.QueryParams {
			fmt.Fprintf(&b, "|q %q %q %q", q.Type, q.Name, q.Value)
		}
	}
	return b.String()
}
