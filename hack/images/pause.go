package main

import (
	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// pauseBinary is where the pause image holds ./hack/images/pause. The user
// is the one of the upstream pause image (65535), so the sandbox never runs
// as root.
const (
	pauseBinary  = "/pause"
	pausePackage = "./hack/images/pause"
)

// pauseSpec is the pause image around binary, a static build of
// ./hack/images/pause: one file, no accounts, nothing to resolve.
func pauseSpec(binary []byte) Spec {
	return Spec{
		Layers: []Layer{{CreatedBy: "hack/images: COPY pause " + pauseBinary, Entries: []Entry{FileEntry(pauseBinary, 0o755, binary)}}},
		Config: v1.Config{
			Entrypoint: []string{pauseBinary},
			User:       "65535:65535",
			Labels:     map[string]string{"org.opencontainers.image.source": sourceURL},
		},
	}
}
