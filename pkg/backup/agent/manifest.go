package agent

import (
	"encoding/json"
	"fmt"
	"time"
)

// FormatVersion is the artifact format this package writes and reads.
const FormatVersion = 1

// File names inside an artifact.
const (
	ConfigFile   = "config.tar.gz"
	ContentFile  = "content.tar.gz"
	ManifestFile = "manifest.json"
)

// Manifest describes a complete artifact; it is uploaded last.
type Manifest struct {
	FormatVersion   int             `json:"formatVersion"`
	OperatorVersion string          `json:"operatorVersion"`
	ID              string          `json:"id"`
	Namespace       string          `json:"namespace"`
	Instance        string          `json:"instance"`
	Image           string          `json:"image"`
	Spec            json.RawMessage `json:"spec,omitempty"`
	StartTime       time.Time       `json:"startTime"`
	CreationTime    time.Time       `json:"creationTime"`
	Files           []FileEntry     `json:"files"`
}

// FileEntry is one uploaded file of an artifact.
type FileEntry struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

func parseManifest(b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", ManifestFile, err)
	}
	if m.FormatVersion != FormatVersion {
		return nil, fmt.Errorf("%s: format version %d, this agent reads %d", ManifestFile, m.FormatVersion, FormatVersion)
	}
	for _, f := range m.Files {
		if f.Name != ConfigFile && f.Name != ContentFile {
			return nil, fmt.Errorf("%s: unknown file %q", ManifestFile, f.Name)
		}
	}
	return &m, nil
}

func (m *Manifest) file(name string) (FileEntry, bool) {
	for _, f := range m.Files {
		if f.Name == name {
			return f, true
		}
	}
	return FileEntry{}, false
}
