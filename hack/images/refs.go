package main

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"go.yaml.in/yaml/v2"
)

// managerKustomization sets the operator image that bundle.yaml deploys
// (kustomize's images: override of the placeholder "operator").
const managerKustomization = "config/manager/kustomization.yaml"

// bundleImage is the operator image of bundle.yaml, split into the registry
// path, the repository and the tag: the defaults of -registry and -tag, so
// that `make images` builds the image the bundle runs.
func bundleImage(root string) (registry, repository, tag string, err error) {
	file := filepath.Join(root, managerKustomization)
	data, err := os.ReadFile(file)
	if err != nil {
		return "", "", "", err
	}
	var k struct {
		Images []struct {
			Name    string `yaml:"name"`
			NewName string `yaml:"newName"`
			NewTag  string `yaml:"newTag"`
		} `yaml:"images"`
	}
	if err := yaml.Unmarshal(data, &k); err != nil {
		return "", "", "", fmt.Errorf("%s: %w", file, err)
	}
	for _, img := range k.Images {
		if img.Name == "operator" && img.NewName != "" && img.NewTag != "" {
			return path.Dir(img.NewName), path.Base(img.NewName), img.NewTag, nil
		}
	}
	return "", "", "", fmt.Errorf("%s: no images: entry with name operator, newName and newTag", file)
}

// reference is registry/repository:tag, checked. insecure allows plain HTTP
// to the registry (go-containerregistry already uses it for localhost).
func reference(registry, repository, tag string, insecure bool) (name.Tag, error) {
	var opts []name.Option
	if insecure {
		opts = append(opts, name.Insecure)
	}
	return name.NewTag(registry+"/"+repository+":"+tag, opts...)
}

// creationTime is every image's creation time and its files' modification
// time: SOURCE_DATE_EPOCH when set (the reproducible-builds convention),
// else the Unix epoch, so that a rebuild of the same inputs has the same
// digest.
func creationTime() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil || sec < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since the Unix epoch", s)
	}
	return time.Unix(sec, 0).UTC(), nil
}
