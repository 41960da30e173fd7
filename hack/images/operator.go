package main

import (
	"io/fs"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// The operator image reproduces what the Dockerfile builds: the static
// binary on gcr.io/distroless/static-debian12:nonroot. What distroless adds
// to an empty image, and what of it the operator uses:
//   - CA certificates (S3 over HTTPS, from the backup agent) and the
//     SSL_CERT_FILE variable naming them;
//   - time zones (cron schedules with CRON_TZ=);
//   - /etc/passwd and /etc/group with root, nobody and nonroot (65532), the
//     home directory of nonroot as working directory, and /tmp;
//   - nothing else: no shell, no package manager.
const (
	operatorBinary = "/operator"
	// reloaderBinary is the nginx-reloader, which the nginx pods' init
	// container copies out of this image (see pkg/nginx's reloaderInstaller).
	reloaderBinary  = "/nginx-reloader"
	reloaderPackage = "./cmd/nginx-reloader"
	// reloaderLDFlags strip the reloader, as the Dockerfile does; it has no
	// version to stamp.
	reloaderLDFlags = "-s -w"
	caCertificates  = "/etc/ssl/certs/ca-certificates.crt"
	zoneinfo        = "/usr/share/zoneinfo"
	nonrootUID      = 65532
	nonrootHome     = "/home/nonroot"
	// sourceURL is the org.opencontainers.image.source label.
	sourceURL = "https://" + modulePath
)

var nonrootAccount = Account{Name: "nonroot", ID: nonrootUID, Home: nonrootHome}

// distrolessBase is the layer distroless/static:nonroot would contribute,
// from the build machine's Debian packages ca-certificates and tzdata.
func distrolessBase() (Layer, error) {
	if err := requireHostFile(caCertificates, "ca-certificates"); err != nil {
		return Layer{}, err
	}
	if err := requireHostFile(zoneinfo, "tzdata"); err != nil {
		return Layer{}, err
	}
	host := newHostFiles()
	if _, err := host.Copy(caCertificates); err != nil {
		return Layer{}, err
	}
	if err := host.CopyTree(zoneinfo); err != nil {
		return Layer{}, err
	}
	entries := append(host.Entries(),
		DirEntry("/root", 0o700),
		DirEntry("/tmp", 0o777|fs.ModeSticky),
		DirEntry(nonrootHome, 0o700).Owned(nonrootUID, nonrootUID),
		nsswitch(),
	)
	entries = append(entries, accountFiles(rootAccount, nobodyAccount, nonrootAccount)...)
	return Layer{CreatedBy: "hack/images: distroless/static-debian12:nonroot equivalent (ca-certificates, tzdata, accounts)", Entries: entries}, nil
}

// operatorSpec is the operator image around binary, a static build of
// ./cmd/operator (see goBuild and operatorLDFlags), with reloader, a static
// build of ./cmd/nginx-reloader, or nil for a release that had none.
func operatorSpec(binary, reloader []byte, version, revision string) (Spec, error) {
	base, err := distrolessBase()
	if err != nil {
		return Spec{}, err
	}
	binaries := Layer{
		CreatedBy: "hack/images: COPY operator " + operatorBinary + " and nginx-reloader " + reloaderBinary,
		Entries:   []Entry{FileEntry(operatorBinary, 0o755, binary), FileEntry(reloaderBinary, 0o755, reloader)},
	}
	if reloader == nil {
		binaries = Layer{CreatedBy: "hack/images: COPY operator " + operatorBinary, Entries: binaries.Entries[:1]}
	}
	return Spec{
		Layers: []Layer{base, binaries},
		Config: v1.Config{
			Entrypoint: []string{operatorBinary},
			// Numeric, as in the Dockerfile: the kubelet checks runAsNonRoot
			// without resolving names.
			User:       "65532:65532",
			Env:        []string{defaultPath, "SSL_CERT_FILE=" + caCertificates},
			WorkingDir: nonrootHome,
			Labels: map[string]string{
				"org.opencontainers.image.version":  version,
				"org.opencontainers.image.revision": revision,
				"org.opencontainers.image.source":   sourceURL,
			},
		},
	}, nil
}
