package main

import (
	"fmt"
	"runtime"
	"sort"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// defaultPlatforms are the platforms of the operator image index: the
// machines Kubernetes clusters run on.
const defaultPlatforms = "linux/amd64,linux/arm64"

// archVariants are the architectures the operator image can be built for
// (each a GOARCH whose static binary needs no cgo and for which distroless
// publishes its static base), with the variant an image's platform states.
// arm64 has one, v8: containerd and registries normalise linux/arm64 to
// linux/arm64/v8 and match an index entry without it less reliably.
var archVariants = map[string]string{
	"amd64":   "",
	"arm64":   "v8",
	"ppc64le": "",
	"riscv64": "",
	"s390x":   "",
}

// linuxPlatform is the platform of an image for the Linux machine arch,
// variant included.
func linuxPlatform(arch string) v1.Platform {
	return v1.Platform{OS: "linux", Architecture: arch, Variant: archVariants[arch]}
}

// hostPlatform is the build machine's platform: the one of the test images,
// and the one whose operator image the docker archive holds.
func hostPlatform() v1.Platform { return linuxPlatform(runtime.GOARCH) }

// parsePlatforms reads -platforms: comma-separated os/arch[/variant], linux
// only, each once, in the order given (the index lists them in that order).
func parsePlatforms(s string) ([]v1.Platform, error) {
	var platforms []v1.Platform
	seen := map[string]bool{}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		parts := strings.Split(f, "/")
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || parts[1] == "" {
			return nil, fmt.Errorf("platform %q: want os/arch or os/arch/variant, such as linux/arm64", f)
		}
		if parts[0] != "linux" {
			return nil, fmt.Errorf("platform %q: the operator runs on linux only", f)
		}
		variant, ok := archVariants[parts[1]]
		if !ok {
			return nil, fmt.Errorf("platform %q: architecture not supported (supported: %s)", f, strings.Join(supportedArchs(), ", "))
		}
		if len(parts) == 3 && parts[2] != variant {
			if variant == "" {
				return nil, fmt.Errorf("platform %q: linux/%s has no variant", f, parts[1])
			}
			return nil, fmt.Errorf("platform %q: linux/%s has variant %s only", f, parts[1], variant)
		}
		p := linuxPlatform(parts[1])
		if seen[p.String()] {
			return nil, fmt.Errorf("platform %q given twice", f)
		}
		seen[p.String()] = true
		platforms = append(platforms, p)
	}
	return platforms, nil
}

func supportedArchs() []string {
	archs := make([]string, 0, len(archVariants))
	for a := range archVariants {
		archs = append(archs, a)
	}
	sort.Strings(archs)
	return archs
}

// platformList is the platforms as -platforms takes them.
func platformList(platforms []v1.Platform) string {
	s := make([]string, len(platforms))
	for i, p := range platforms {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}
