package main

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

var (
	linuxAMD64 = v1.Platform{OS: "linux", Architecture: "amd64"}
	linuxARM64 = v1.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
)

// elfMachines are the ELF machines of the binaries of each architecture
// the tests build for.
var elfMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// TestOperatorIndexHoldsStaticBinariesPerPlatform runs the command as `make
// images PUSH=1` does for the operator, for linux/amd64 and linux/arm64,
// against a registry served in the test, twice. The pushed index lists
// exactly the two platforms; each manifest's config states its platform and
// its /operator and /nginx-reloader are static ELF executables for that
// machine; both runs give the same index digest and the same OCI archive;
// operator.tar is the build machine's image of the index.
func TestOperatorIndexHoldsStaticBinariesPerPlatform(t *testing.T) {
	requireHostFiles(t, map[string]string{caCertificates: "ca-certificates", zoneinfo: "tzdata"})
	server := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer server.Close()
	reg := strings.TrimPrefix(server.URL, "http://") + "/test"

	first := runOperatorIndex(t, reg, "first")
	second := runOperatorIndex(t, reg, "second")
	if first.digest != second.digest {
		t.Errorf("two runs: index digests %s and %s, want the same", first.digest, second.digest)
	}
	if !bytes.Equal(mustRead(t, first.ociArchive), mustRead(t, second.ociArchive)) {
		t.Errorf("two runs wrote different %s and %s", first.ociArchive, second.ociArchive)
	}
	if diff := cmp.Diff("linux/amd64,linux/arm64/v8", first.platforms); diff != "" {
		t.Errorf("printed platforms (-want +got):\n%s", diff)
	}

	tag, err := name.NewTag(first.ref)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := remote.Index(tag)
	if err != nil {
		t.Fatalf("the pushed operator image is not an index: %v", err)
	}
	if d := mustIndexDigest(t, idx); d.String() != first.digest {
		t.Errorf("the registry's index digest %s, printed %s", d, first.digest)
	}
	manifest, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if manifest.MediaType != types.OCIImageIndex {
		t.Errorf("index media type %s, want %s", manifest.MediaType, types.OCIImageIndex)
	}
	var platforms []v1.Platform
	configs := map[string]string{}
	for _, desc := range manifest.Manifests {
		if desc.Platform == nil {
			t.Fatalf("manifest %s has no platform", desc.Digest)
		}
		platforms = append(platforms, *desc.Platform)
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		checkPlatformImage(t, img, *desc.Platform)
		configs[desc.Platform.String()] = configDigest(t, img)
	}
	if diff := cmp.Diff([]v1.Platform{linuxAMD64, linuxARM64}, platforms); diff != "" {
		t.Fatalf("index platforms (-want +got):\n%s", diff)
	}

	// The docker archive holds the image that runs here, under the tag.
	local, err := tarball.ImageFromPath(first.dockerArchive, &tag)
	if err != nil {
		t.Fatal(err)
	}
	if cfg := mustConfig(t, local); cfg.Architecture != runtime.GOARCH {
		t.Errorf("%s: architecture %s, want the build machine's %s", first.dockerArchive, cfg.Architecture, runtime.GOARCH)
	}
	if want, ok := configs[hostPlatform().String()]; ok && configDigest(t, local) != want {
		t.Errorf("%s: image ID %s, want the index's %s image %s", first.dockerArchive, configDigest(t, local), hostPlatform(), want)
	}
	if first.id != configDigest(t, local) {
		t.Errorf("printed image ID %s, the docker archive's is %s", first.id, configDigest(t, local))
	}
	checkOCIArchive(t, first.ociArchive, first.ref, first.digest)
}

// indexRun is what one run of the command printed and wrote for the operator.
type indexRun struct {
	ref, digest, platforms, id string
	dockerArchive, ociArchive  string
}

// runOperatorIndex runs the command for the operator on linux/amd64 and
// linux/arm64, writing into a directory of its own and pushing to reg, and
// reads its line:
//
//	operator  REF@INDEX-DIGEST  index PLATFORMS  LOCAL-PLATFORM id CONFIG-DIGEST  SIZE MB  WHERE
func runOperatorIndex(t *testing.T, reg, dir string) indexRun {
	t.Helper()
	out := filepath.Join(t.TempDir(), dir)
	var stdout bytes.Buffer
	start := time.Now()
	err := run(context.Background(), []string{"-out", out, "-registry", reg, "-tag", "dev", "-push", "-only", "operator",
		"-platforms", "linux/amd64,linux/arm64", "-version", testVersion, "-revision", testRevision}, &stdout)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s run: %s", dir, time.Since(start).Round(time.Second))
	f := strings.Fields(stdout.String())
	if len(f) < 12 || f[0] != "operator" || f[2] != "index" || f[5] != "id" {
		t.Fatalf("output %q: want one operator index line", stdout.String())
	}
	ref, digest, _ := strings.Cut(f[1], "@")
	if want := reg + "/nginx-operator:dev"; ref != want {
		t.Errorf("reference %s, want %s", ref, want)
	}
	if f[4] != hostPlatform().String() {
		t.Errorf("local platform %s, want the build machine's %s", f[4], hostPlatform())
	}
	r := indexRun{ref: ref, digest: digest, platforms: f[3], id: f[6],
		dockerArchive: filepath.Join(out, "operator.tar"), ociArchive: filepath.Join(out, "operator.oci.tar")}
	if where := strings.Join(f[9:], " "); where != r.dockerArchive+", "+r.ociArchive+", pushed" {
		t.Errorf("printed destinations %q, want the two archives and pushed", where)
	}
	return r
}

// checkPlatformImage checks that img's config states platform and that its
// two programs are static executables for platform's machine.
func checkPlatformImage(t *testing.T, img v1.Image, platform v1.Platform) {
	t.Helper()
	cfg := mustConfig(t, img)
	if diff := cmp.Diff(platform, v1.Platform{OS: cfg.OS, Architecture: cfg.Architecture, Variant: cfg.Variant}); diff != "" {
		t.Errorf("%s: the config's platform (-index +config):\n%s", platform, diff)
	}
	machine, ok := elfMachines[platform.Architecture]
	if !ok {
		t.Fatalf("no ELF machine known for %s", platform)
	}
	tree := fileTree(t, img)
	for _, p := range []string{operatorBinary, reloaderBinary} {
		n, ok := tree[p]
		if !ok {
			t.Errorf("%s: %s missing", platform, p)
			continue
		}
		f, err := elf.NewFile(bytes.NewReader(n.Data))
		if err != nil {
			t.Errorf("%s: %s is not ELF: %v", platform, p, err)
			continue
		}
		if f.Machine != machine || f.Class != elf.ELFCLASS64 || f.Type != elf.ET_EXEC {
			t.Errorf("%s: %s is %s %s %s, want %s ELFCLASS64 ET_EXEC", platform, p, f.Machine, f.Class, f.Type, machine)
		}
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				t.Errorf("%s: %s names a dynamic loader (PT_INTERP): not static", platform, p)
			}
		}
		if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
			t.Errorf("%s: %s needs shared libraries %q (%v)", platform, p, libs, err)
		}
		f.Close()
	}
}

// checkOCIArchive reads the OCI archive back as an image layout: index.json
// names one index, the printed one, by ref.
func checkOCIArchive(t *testing.T, file, ref, digest string) {
	t.Helper()
	dir := t.TempDir()
	untar(t, file, dir)
	top, err := layout.ImageIndexFromPath(dir)
	if err != nil {
		t.Fatalf("%s is not an OCI image layout: %v", file, err)
	}
	m, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != 1 {
		t.Fatalf("%s: index.json has %d entries, want the operator's index only", file, len(m.Manifests))
	}
	d := m.Manifests[0]
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{"digest": d.Digest.String(), "media type": string(d.MediaType),
		containerdImageName: d.Annotations[containerdImageName], ociRefName: d.Annotations[ociRefName]}
	want := map[string]string{"digest": digest, "media type": string(types.OCIImageIndex),
		containerdImageName: ref, ociRefName: tag.TagStr()}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: index.json's entry (-want +got):\n%s", file, diff)
	}
	idx, err := top.ImageIndex(d.Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	for _, desc := range im.Manifests {
		img, err := idx.Image(desc.Digest)
		if err != nil {
			t.Fatal(err)
		}
		checkBlobs(t, file, desc.Platform, img)
	}
}

// checkBlobs checks that the config and every layer of img are in the
// layout, with the content their digests name.
func checkBlobs(t *testing.T, file string, platform *v1.Platform, img v1.Image) {
	t.Helper()
	if _, err := img.ConfigFile(); err != nil {
		t.Errorf("%s: the %s image's config: %v", file, platform, err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range layers {
		want, err := l.Digest()
		if err != nil {
			t.Fatal(err)
		}
		rc, err := l.Compressed()
		if err != nil {
			t.Errorf("%s: the %s image's layer %s: %v", file, platform, want, err)
			continue
		}
		got, _, err := v1.SHA256(rc)
		rc.Close()
		if err != nil || got != want {
			t.Errorf("%s: the %s image's layer %s has digest %s (%v)", file, platform, want, got, err)
		}
	}
}

// TestImageIndexOfPlatformImages assembles small images for two platforms:
// the index lists them in order with their platforms, has the same digest
// when assembled again, and its OCI archive has the same bytes when written
// again, leaving nothing else in the directory.
func TestImageIndexOfPlatformImages(t *testing.T) {
	build := func() (v1.ImageIndex, []platformImage) {
		var images []platformImage
		for _, p := range []v1.Platform{linuxAMD64, linuxARM64} {
			spec := Spec{Layers: []Layer{{CreatedBy: "test", Entries: []Entry{FileEntry("/arch", 0o644, []byte(p.Architecture))}}}}
			img, err := assemble(spec, p, time.Unix(0, 0))
			if err != nil {
				t.Fatal(err)
			}
			images = append(images, platformImage{platform: p, image: img})
		}
		return imageIndex(images), images
	}
	idx, images := build()
	again, _ := build()
	if a, b := mustIndexDigest(t, idx), mustIndexDigest(t, again); a != b {
		t.Errorf("the same images: index digests %s and %s", a, b)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		Platform  v1.Platform
		Digest    v1.Hash
		MediaType types.MediaType
	}
	var got, want []entry
	for _, d := range m.Manifests {
		got = append(got, entry{*d.Platform, d.Digest, d.MediaType})
	}
	for _, pi := range images {
		want = append(want, entry{pi.platform, mustDigest(t, pi.image), types.OCIManifestSchema1})
		if cfg := mustConfig(t, pi.image); cfg.Variant != pi.platform.Variant || cfg.Architecture != pi.platform.Architecture {
			t.Errorf("%s image: config architecture %s variant %q", pi.platform, cfg.Architecture, cfg.Variant)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("index entries (-want +got):\n%s", diff)
	}
	if m.MediaType != types.OCIImageIndex {
		t.Errorf("media type %s, want %s", m.MediaType, types.OCIImageIndex)
	}

	ref, err := name.NewTag("registry.example/team/nginx-operator:dev")
	if err != nil {
		t.Fatal(err)
	}
	var archives [][]byte
	for _, dir := range []string{t.TempDir(), t.TempDir()} {
		file, err := writeOCIArchive(dir, "operator", ref, idx, time.Unix(0, 0))
		if err != nil {
			t.Fatal(err)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != "operator.oci.tar" {
			t.Errorf("%s holds %v, want operator.oci.tar only", dir, entries)
		}
		checkOCIArchive(t, file, ref.Name(), mustIndexDigest(t, idx).String())
		archives = append(archives, mustRead(t, file))
	}
	if !bytes.Equal(archives[0], archives[1]) {
		t.Error("the same index written twice: the OCI archives differ")
	}
}

// TestLocalImageIsTheBuildMachines: the docker archive holds the image of
// the build machine's platform wherever it is in the list, and the first
// platform's when it is not in the list.
func TestLocalImageIsTheBuildMachines(t *testing.T) {
	other := linuxAMD64
	if hostPlatform().Equals(linuxAMD64) {
		other = linuxARM64
	}
	s390x := v1.Platform{OS: "linux", Architecture: "s390x"}
	for _, tc := range []struct {
		platforms []v1.Platform
		want      v1.Platform
	}{
		{[]v1.Platform{other, hostPlatform()}, hostPlatform()},
		{[]v1.Platform{hostPlatform(), other}, hostPlatform()},
		{[]v1.Platform{s390x, other}, s390x},
	} {
		var images []platformImage
		for _, p := range tc.platforms {
			images = append(images, platformImage{platform: p})
		}
		if got := localImage(images).platform; !got.Equals(tc.want) {
			t.Errorf("platforms %s: local image %s, want %s", platformList(tc.platforms), got, tc.want)
		}
	}
}

func mustIndexDigest(t *testing.T, idx v1.ImageIndex) v1.Hash {
	t.Helper()
	d, err := idx.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func configDigest(t *testing.T, img v1.Image) string {
	t.Helper()
	h, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	return h.String()
}

func mustRead(t *testing.T, file string) []byte {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// untar extracts a tar of regular files and directories into dir.
func untar(t *testing.T, file, dir string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(f)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.FromSlash(hdr.Name))
		if rel, err := filepath.Rel(dir, dst); err != nil || strings.HasPrefix(rel, "..") {
			t.Fatalf("%s: entry %s leaves the archive's directory", file, hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(dst, 0o755)
		case tar.TypeReg:
			var data []byte
			if data, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(dst, data, 0o644)
			}
		default:
			t.Fatalf("%s: entry %s of type %q, want files and directories only", file, hdr.Name, hdr.Typeflag)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
