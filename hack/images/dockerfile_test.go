package main

import (
	"archive/tar"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// stage is one FROM ... stage of a Dockerfile: its base and instructions,
// in order, each as instruction name and the rest of its logical line.
type stage struct {
	from string
	// platform is FROM's --platform, the platform the stage runs on.
	platform     string
	instructions [][2]string
}

func (s stage) last(instruction string) string {
	v := ""
	for _, in := range s.instructions {
		if in[0] == instruction {
			v = in[1]
		}
	}
	return v
}

func (s stage) all(instruction string) []string {
	var v []string
	for _, in := range s.instructions {
		if in[0] == instruction {
			v = append(v, in[1])
		}
	}
	return v
}

// parseDockerfile reads what these tests compare: stages, and logical lines
// (continuations joined, comment lines dropped, as Docker reads them).
func parseDockerfile(text string) []stage {
	var stages []stage
	var logical strings.Builder
	flush := func() {
		line := strings.TrimSpace(logical.String())
		logical.Reset()
		if line == "" {
			return
		}
		name, rest, _ := strings.Cut(line, " ")
		name, rest = strings.ToUpper(name), strings.TrimSpace(rest)
		if name == "FROM" {
			var st stage
			for _, f := range strings.Fields(rest) {
				if p, ok := strings.CutPrefix(f, "--platform="); ok {
					st.platform = p
					continue
				}
				if !strings.HasPrefix(f, "--") {
					st.from = f
					break
				}
			}
			stages = append(stages, st)
			return
		}
		if len(stages) > 0 {
			s := &stages[len(stages)-1]
			s.instructions = append(s.instructions, [2]string{name, rest})
		}
	}
	for _, raw := range strings.Split(text, "\n") {
		trimmed := strings.TrimSpace(raw)
		if strings.HasPrefix(trimmed, "#") {
			continue
		}
		if cont, ok := strings.CutSuffix(strings.TrimRight(raw, " \t"), "\\"); ok {
			logical.WriteString(cont + " ")
			continue
		}
		logical.WriteString(raw)
		flush()
	}
	flush()
	return stages
}

func readDockerfile(t *testing.T) []stage {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	stages := parseDockerfile(string(data))
	if len(stages) < 2 {
		t.Fatalf("Dockerfile: %d stages, want a build stage and the image's", len(stages))
	}
	return stages
}

// TestOperatorImageMatchesDockerfile keeps the two ways of building the
// operator image from drifting apart: the same base contents, entrypoint,
// user, binary path and build flags.
func TestOperatorImageMatchesDockerfile(t *testing.T) {
	stages := readDockerfile(t)
	final := stages[len(stages)-1]
	img := operatorImageForTest(t)
	cfg := mustConfig(t, img).Config
	tree := fileTree(t, img)

	var entrypoint []string
	if err := json.Unmarshal([]byte(final.last("ENTRYPOINT")), &entrypoint); err != nil {
		t.Fatalf("Dockerfile ENTRYPOINT %q: want the exec (JSON) form: %v", final.last("ENTRYPOINT"), err)
	}
	// COPY [--from=...] SRC DEST: the binary's path in the image.
	var copied []string
	for _, c := range final.all("COPY") {
		f := strings.Fields(c)
		copied = append(copied, f[len(f)-1])
	}

	for _, tc := range []struct {
		what, dockerfile string
		image            any
		want             any
	}{
		// hack/images reproduces this base's contents (see operator.go):
		// another base needs another equivalent there.
		{what: "base image", image: "gcr.io/distroless/static-debian12:nonroot", want: final.from},
		{what: "ENTRYPOINT", image: cfg.Entrypoint, want: entrypoint},
		{what: "USER", image: cfg.User, want: final.last("USER")},
		{what: "binary paths (COPY destinations)", image: []string{operatorBinary, reloaderBinary}, want: copied},
		{what: "CMD (none)", image: cfg.Cmd, want: []string(nil)},
	} {
		if diff := cmp.Diff(tc.want, tc.image); diff != "" {
			t.Errorf("%s: Dockerfile (-) and hack/images (+) differ:\n%s", tc.what, diff)
		}
	}
	if n, ok := tree[entrypoint[0]]; !ok || n.Type != tar.TypeReg || n.Mode&0o111 == 0 {
		t.Errorf("the entrypoint %s is not an executable file in the image: %+v", entrypoint[0], n.Type)
	}
}

// TestOperatorBuildFlagsMatchDockerfile: the binary in the image is built
// as the Dockerfile builds it (static, -trimpath, the same -ldflags).
func TestOperatorBuildFlagsMatchDockerfile(t *testing.T) {
	stages := readDockerfile(t)
	var build string
	var buildStage stage
	for _, s := range stages[:len(stages)-1] {
		for _, run := range s.all("RUN") {
			if strings.Contains(run, "go build") {
				build, buildStage = run, s
			}
		}
	}
	if build == "" {
		t.Fatal("Dockerfile: no RUN ... go build in the build stages")
	}
	// hack/images cross-compiles each platform of the index on the build
	// machine; so does the Dockerfile under `docker buildx build
	// --platform`, rather than building in an emulated builder.
	if buildStage.platform != "$BUILDPLATFORM" {
		t.Errorf("Dockerfile: the build stage runs on --platform=%q, want $BUILDPLATFORM (cross-compiling)", buildStage.platform)
	}
	if builds, cross := strings.Count(build, "go build"), strings.Count(build, "GOARCH=$TARGETARCH"); cross != builds {
		t.Errorf("Dockerfile: %d go builds, %d of them with GOARCH=$TARGETARCH; want each built for the target platform: %q", builds, cross, build)
	}
	ldflags := regexp.MustCompile(`-ldflags "([^"]*)"`).FindStringSubmatch(build)
	if ldflags == nil {
		t.Fatalf("Dockerfile: no -ldflags \"...\" in %q", build)
	}
	if diff := cmp.Diff(operatorLDFlags("${VERSION}", "${REVISION}"), ldflags[1]); diff != "" {
		t.Errorf("-ldflags: hack/images (-) and Dockerfile (+) differ:\n%s", diff)
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "./cmd/operator", `-ldflags "` + reloaderLDFlags + `"`, reloaderPackage} {
		if !strings.Contains(build, want) {
			t.Errorf("Dockerfile's go build lacks %s, which hack/images uses: %q", want, build)
		}
	}
}

func TestParseDockerfile(t *testing.T) {
	got := parseDockerfile("# syntax=docker/dockerfile:1\nFROM --platform=$BUILDPLATFORM golang:1 AS build\nRUN a \\\n  # a comment inside\n  b\nfrom scratch\nUSER 1:1\nUSER 2:2\nENTRYPOINT [\"/x\"]\n")
	want := []stage{
		{from: "golang:1", platform: "$BUILDPLATFORM", instructions: [][2]string{{"RUN", "a    b"}}},
		{from: "scratch", instructions: [][2]string{{"USER", "1:1"}, {"USER", "2:2"}, {"ENTRYPOINT", `["/x"]`}}},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(stage{})); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
	if u := got[1].last("USER"); u != "2:2" {
		t.Errorf("last USER = %q, want 2:2 (the one in force)", u)
	}
}
