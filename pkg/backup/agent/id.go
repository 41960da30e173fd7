package agent

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"path"
	"regexp"
	"time"
)

// idTimeLayout is fixed-width UTC, so ids sort lexically in time order.
const idTimeLayout = "20060102T150405.000000000Z"

var idPattern = regexp.MustCompile(`^\d{8}T\d{6}\.\d{9}Z-[0-9a-f]{8}$`)

// NewID returns an id for a run started at t: a sortable UTC timestamp plus a
// random suffix, so two runs in the same nanosecond (or from two clocks)
// still get distinct ids.
func NewID(t time.Time) string {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return t.UTC().Format(idTimeLayout) + "-" + hex.EncodeToString(b[:])
}

// IDTime returns the time encoded in an id.
func IDTime(id string) (time.Time, error) {
	if !idPattern.MatchString(id) {
		return time.Time{}, fmt.Errorf("invalid backup id %q", id)
	}
	return time.Parse(idTimeLayout, id[:len(id)-9])
}

// Location names where an instance's artifacts live in a storage.
type Location struct {
	Prefix    string // may be empty
	Namespace string
	Instance  string
}

func (l Location) validate() error {
	for _, s := range []string{l.Namespace, l.Instance} {
		if s == "" || !dnsLike.MatchString(s) {
			return fmt.Errorf("invalid namespace or instance name %q", s)
		}
	}
	return nil
}

var dnsLike = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$`)

// dir is "<prefix>/<namespace>/<instance>/" (with a trailing slash).
func (l Location) dir() string {
	return path.Join(l.Prefix, l.Namespace, l.Instance) + "/"
}

// Key returns the storage key of file name in run id.
func (l Location) Key(id, name string) string {
	return l.dir() + id + "/" + name
}
