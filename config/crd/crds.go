// Package crd embeds the CustomResourceDefinitions generated into bases/, so
// the operator binary can print them (`operator crds`) and tests can install
// exactly what ships.
package crd

import (
	"embed"
	"io/fs"
	"sort"
)

//go:embed bases/*.yaml
var bases embed.FS

// Files returns the CRD manifests, sorted by file name, as YAML documents.
func Files() ([][]byte, error) {
	names, err := fs.Glob(bases, "bases/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	out := make([][]byte, 0, len(names))
	for _, n := range names {
		b, err := bases.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}
