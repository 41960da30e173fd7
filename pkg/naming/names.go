package naming

import (
	"strings"
)

// MaxNameLength is the longest DNS-1123 label, the strictest common limit on
// object names (Services, and the pod names a StatefulSet derives).
const MaxNameLength = 63

// hashSuffixLength is how many hex digits of the hash replace the cut-off end
// of a truncated name: 8 digits make collisions between two truncated names
// of one namespace improbable (1 in 4 billion).
const hashSuffixLength = 8

// NameWithLimit joins parts with "-" and makes the result a DNS-1123 label no
// longer than limit: lower case, only [a-z0-9-], starting and ending with an
// alphanumeric. When the joined name has to be shortened or changed, a hash of
// the original parts is appended, so distinct inputs keep distinct names.
// Callers leave room for suffixes added by Kubernetes (a StatefulSet adds
// "-<ordinal>" to pod names and a controller-revision hash label).
func NameWithLimit(limit int, parts ...string) string {
	joined := strings.Join(parts, "-")
	clean := sanitize(joined)
	if clean == joined && len(clean) <= limit && clean != "" {
		return clean
	}
	suffix := Hash(parts)[:hashSuffixLength]
	keep := limit - hashSuffixLength - 1
	if keep < 0 {
		return suffix[:limit]
	}
	if len(clean) > keep {
		clean = clean[:keep]
	}
	clean = strings.Trim(clean, "-")
	if clean == "" {
		return suffix
	}
	return clean + "-" + suffix
}

// sanitize lower-cases s, replaces every character outside [a-z0-9-] with "-",
// collapses runs of "-" and trims "-" at both ends.
func sanitize(s string) string {
	var b strings.Builder
	lastDash := false
	for _, r := range strings.ToLower(s) {
		ok := (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
		switch {
		case ok:
			b.WriteRune(r)
			lastDash = false
		case !lastDash:
			b.WriteByte('-')
			lastDash = true
		}
	}
	return strings.Trim(b.String(), "-")
}
