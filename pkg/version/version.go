// Package version holds the build's identity, set by the linker:
//
//	-X github.com/nginx-operator/nginx-operator/pkg/version.Version=v0.1.0
//	-X github.com/nginx-operator/nginx-operator/pkg/version.Revision=<git sha>
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by -ldflags at build time; the defaults describe a development build.
var (
	Version  = "v0.0.0-dev"
	Revision = ""
)

// GoVersion is the toolchain that built the binary.
var GoVersion = runtime.Version()

// revision falls back to the VCS stamp Go embeds when the linker did not set one.
func revision() string {
	if Revision != "" {
		return Revision
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// RevisionString is the source revision the binary was built from, or "unknown".
func RevisionString() string { return revision() }

// String is the one-line description printed by `operator version`.
func String() string {
	return fmt.Sprintf("nginx-operator %s (revision %s, %s, %s/%s)", Version, revision(), GoVersion, runtime.GOOS, runtime.GOARCH)
}
