package hostile

// The stand-in for the pod's filesystem, the controller's render step, and
// the real `nginx -t` on what it rendered.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/k8sutil"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/serviceport"
	"github.com/nginx-operator/nginx-operator/pkg/validation"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// nginxEnv holds what rendering and `nginx -t` need: one directory that
// plays the pod's paths for every file, readable by nginx's unprivileged user.
type nginxEnv struct {
	t     *testing.T
	ns    string
	dir   string
	paths render.Paths
	cert  []byte
	key   []byte

	mu      sync.Mutex
	secrets map[string]bool
	// childVerdicts are the API server's verdicts on the children checked
	// so far, by their JSON: most cases change nginx.conf only, and build
	// the same Service, StatefulSet and policies as the case before, which
	// the API server would judge the same way again.
	childVerdicts sync.Map
	// builds are what the controller made of each distinct stored spec
	// (send.build), by its JSON.
	builds sync.Map
}

func newNginxEnv(t *testing.T, ns string) *nginxEnv {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	h := &nginxEnv{t: t, ns: ns, dir: dir, secrets: map[string]bool{}, paths: render.Paths{
		Temp: filepath.Join(dir, "tmp"), Content: filepath.Join(dir, "html"),
		Files: filepath.Join(dir, "files"), MimeTypes: filepath.Join(dir, "mime.types"),
	}}
	for _, d := range []string{h.paths.Temp, h.paths.Content, h.paths.Files, filepath.Join(dir, "conf")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// nginx -t creates its temp directories as the unprivileged user.
	if err := os.Chmod(h.paths.Temp, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(h.paths.MimeTypes, []byte("types {\n  text/html html;\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var err error
	if _, h.cert, h.key, err = tools.ServingCert("hostile.example.com"); err != nil {
		t.Fatal(err)
	}
	return h
}

// mountSecret writes tls.crt and tls.key where the pod would mount the
// Secret, for names the kubelet could mount: one path element. For any other
// name nothing is written, and nginx -t reports the missing files.
func (h *nginxEnv) mountSecret(name string) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\x00") {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.secrets[name] {
		return
	}
	h.secrets[name] = true
	cert, key := h.paths.TLSFiles(name)
	_ = os.WriteFile(cert, h.cert, 0o644)
	_ = os.WriteFile(key, h.key, 0o644)
}

// mountCA writes a CA certificate where the pod would mount ref's key, for
// names and keys the kubelet could mount: one path element each.
func (h *nginxEnv) mountCA(ref v1beta1.CACertificateRef) {
	for _, part := range []string{ref.Name, ref.Key} {
		if part == "" || part == "." || part == ".." || strings.ContainsAny(part, "/\x00") {
			return
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	file := h.paths.CAFile(ref)
	if os.MkdirAll(filepath.Dir(file), 0o755) != nil {
		return
	}
	_ = os.WriteFile(file, h.cert, 0o644)
}

// checkChildren dry-runs, as the controller does (k8sutil.Applier.CheckOwned),
// the Service, PodDisruptionBudget, NetworkPolicy and StatefulSet obj makes.
// A refusal as invalid is InvalidConfig (terminal); any other error is
// returned as it is, which outcome counts as retried.
func (h *nginxEnv) checkChildren(ctx context.Context, c client.Client, obj *v1beta1.NginxOperator, config []byte) error {
	owner := obj.DeepCopy()
	owner.UID = "00000000-0000-0000-0000-000000000001" // an owner reference needs one
	in := nginx.Materials{Config: config, Image: "nginx:1.27", ExporterImage: "exporter:1", ReloaderImage: "operator:1", References: render.ReferencesOf(&owner.Spec)}
	children := []client.Object{nginx.Service(owner, serviceport.Resolve(&owner.Spec, serviceport.Standard)), nginx.StatefulSet(owner, in)}
	if pdb := nginx.PodDisruptionBudget(owner); pdb != nil {
		children = append(children, pdb)
	}
	operator := nginx.OperatorPods{Namespace: "nginx-operator", Labels: map[string]string{"app.kubernetes.io/name": "nginx-operator"}}
	if policy := nginx.NetworkPolicy(owner, operator); policy != nil {
		children = append(children, policy)
	}
	applier := &k8sutil.Applier{Client: c, Reader: c, Scheme: c.Scheme()}
	for _, child := range children {
		if err := h.checkChild(ctx, applier, owner, child); err != nil {
			if k8sutil.RefusedBody(err) {
				return k8sutil.InvalidSpec(nginx.ReasonInvalidConfig, "%v", err)
			}
			return err
		}
	}
	return nil
}

// checkChild is applier.CheckOwned, once per distinct child: a child the
// API server refused or accepted before gets the same verdict. Errors that
// are not a verdict (the API server unreachable) are not kept.
func (h *nginxEnv) checkChild(ctx context.Context, applier *k8sutil.Applier, owner, child client.Object) error {
	body, err := json.Marshal(child)
	if err != nil {
		return err
	}
	key := fmt.Sprintf("%T\x00%s", child, body)
	if verdict, ok := h.childVerdicts.Load(key); ok {
		err, _ := verdict.(error)
		return err
	}
	err = applier.CheckOwned(ctx, owner, child)
	if err == nil || k8sutil.RefusedBody(err) {
		h.childVerdicts.Store(key, err)
	}
	return err
}

func (h *nginxEnv) renderOptions() render.Options {
	return render.Options{Paths: h.paths, Namespace: h.ns, FallbackHost: "127.0.0.1"}
}

func (h *nginxEnv) render(ctx context.Context, c client.Client, s *built, spec *v1beta1.NginxOperatorSpec) {
	defer func() {
		if r := recover(); r != nil {
			s.renderPanic = fmt.Sprint(r)
			s.config = nil
		}
	}()
	// The controller renders the object as validation.NginxOperator returns
	// it, and degrades it (InvalidConfig) when that refuses it.
	obj := &v1beta1.NginxOperator{ObjectMeta: metav1.ObjectMeta{Name: "hostile", Namespace: h.ns}, Spec: *spec}
	admitted, errs := validation.NginxOperator(context.Background(), obj)
	if len(errs) > 0 {
		s.renderErr = k8sutil.InvalidSpec(nginx.ReasonInvalidConfig, "%v", errs.ToAggregate())
		return
	}
	spec = &admitted.Spec
	opts := h.renderOptions()
	opts.IPv6 = slices.Contains(spec.Service.IPFamilies, corev1.IPv6Protocol)
	config, err := render.Config(spec, opts)
	if err != nil {
		s.renderErr = k8sutil.InvalidSpec(nginx.ReasonInvalidConfig, "%v", err)
		return
	}
	// Before its first write the controller dry-runs the children the
	// user's fields reach: a spec the API server refuses in one of them is
	// InvalidConfig, and nothing is applied.
	if err := h.checkChildren(ctx, c, admitted, config); err != nil {
		s.renderErr = err
		// checkChildren's only terminal error: the API server refused a
		// child built from the admitted spec.
		var refused *k8sutil.SpecError
		if errors.As(err, &refused) {
			s.childRefused = err.Error()
		}
		return
	}
	s.config = config
	refs := render.ReferencesOf(spec)
	for _, name := range refs.TLSSecrets() {
		h.mountSecret(name)
	}
	for _, ref := range refs.Of(render.UseCA) {
		for _, key := range ref.Keys {
			h.mountCA(v1beta1.CACertificateRef{Kind: ref.Kind, Name: ref.Name, Key: key})
		}
	}
	want, err := render.Directives(spec, opts)
	if err != nil {
		s.treeDiff = "render.Directives refuses what render.Config accepted: " + err.Error()
		return
	}
	got, err := conf.Parse(config)
	if err != nil {
		s.treeDiff = "the rendered file does not parse: " + err.Error()
		return
	}
	if !conf.Equal(want, got) {
		// cmp's report is what a reader needs, and slow to make (a third
		// of the corpus's time when it ran for every case): only for a
		// tree that differs.
		argsOnly := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Args" }, cmpopts.EquateEmpty())
		s.treeDiff = "(-directives +parsed)\n" + cmp.Diff(want, got, argsOnly)
	}
	s.meaning = treeMeaning(got)
}

// nginxFor is the nginx binary bin as nginxTest runs it
// (tools.NginxForNobody).
func (h *nginxEnv) nginxFor(bin string) string { return tools.NginxForNobody(h.t, bin, h.dir) }

// nginxTest runs the real `nginx -t` on config as the pod's user
// (tools.NginxTestAsNobody): "" when nginx accepts it, what it said
// otherwise.
func (h *nginxEnv) nginxTest(bin string, config []byte) string {
	return tools.NginxTestAsNobody(bin, h.dir, config)
}
