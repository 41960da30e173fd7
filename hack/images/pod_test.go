package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/layout"
	"github.com/nginx-operator/nginx-operator/pkg/nginx"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/render"
	"github.com/nginx-operator/nginx-operator/pkg/validation/validationtest"
	"github.com/nginx-operator/nginx-operator/test/tools"
)

// container runs one container of the pod: argv chrooted into the image's
// extracted root, as the pod's user, with the image's environment. The
// network is this machine's loopback, shared like a pod's.
type container struct {
	name string
	cmd  *exec.Cmd
	out  *tools.Buffer
	done chan error
}

func startContainer(t *testing.T, name, root string, argv, env []string, workDir string, sc *corev1.PodSecurityContext, stopSignal syscall.Signal) *container {
	t.Helper()
	if workDir == "" {
		workDir = "/"
	}
	out := &tools.Buffer{}
	cmd := &exec.Cmd{
		Path: argv[0], Args: argv, Env: env, Dir: workDir, Stdout: out, Stderr: out,
		SysProcAttr: &syscall.SysProcAttr{
			Chroot: root,
			Credential: &syscall.Credential{
				Uid: uint32(*sc.RunAsUser), Gid: uint32(*sc.RunAsGroup),
				// The kubelet adds fsGroup to every container's groups.
				Groups: []uint32{uint32(*sc.FSGroup)},
			},
			Setpgid: true, Pdeathsig: syscall.SIGKILL,
		},
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c := &container{name: name, cmd: cmd, out: out, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, stopSignal)
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-c.done
		}
		if t.Failed() {
			t.Logf("%s output:\n%s", name, out.String())
		}
	})
	return c
}

// get polls url until it answers 200 with a body containing want, or fails
// the test after a while or when a container exits.
func get(t *testing.T, client *http.Client, url, want string, containers ...*container) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var last string
	for {
		resp, err := client.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && strings.Contains(string(body), want) {
				return
			}
			last = fmt.Sprintf("%s: %s", resp.Status, body)
		} else {
			last = err.Error()
		}
		for _, c := range containers {
			select {
			case err := <-c.done:
				c.done <- err
				t.Fatalf("GET %s: container %s exited: %v\n%s", url, c.name, err, c.out.String())
			default:
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("GET %s: want 200 with %q, last answer: %s", url, want, last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestImagesRunTheOperatorsPod runs the pod the operator builds for an
// NginxOperator with metrics, from the nginx and exporter images: each
// container chrooted into its image's file tree, with the pod's command,
// arguments, user, groups and volumes, and the image's environment, as the
// kubelet would start it. Only the port numbers differ from the pod's (they
// must be free on this machine). nginx serves the content volume, proxies,
// terminates TLS and answers the kubelet's probe; the exporter reads its
// stub_status.
func TestImagesRunTheOperatorsPod(t *testing.T) {
	requireRoot(t, "containers are run chrooted as the pod's user")
	nginxImg, exporterImg, operatorImg := nginxImageForTest(t), exporterImageForTest(t), operatorImageForTest(t)

	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "upstream saw %s", r.URL.Path)
	}))
	defer upstream.Close()
	upstreamPort, _ := strconv.Atoi(upstream.URL[strings.LastIndex(upstream.URL, ":")+1:])

	httpPort, httpsPort, healthPort, stubPort, exporterPort := int32(tools.Port(t)), int32(tools.Port(t)), int32(tools.Port(t)), int32(tools.Port(t)), int32(tools.Port(t))
	instance := &v1beta1.NginxOperator{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "team-a"},
		Spec:       operatorSpecForTest(httpPort, httpsPort, int32(upstreamPort)),
	}
	conf, err := render.Config(&validationtest.NginxOperator(t, instance).Spec, render.Options{
		Paths: render.PodPaths(), Namespace: instance.Namespace, HealthPort: int(healthPort), StubStatusPort: int(stubPort),
		FallbackHost: "127.0.0.1",
	})
	if err != nil {
		t.Fatal(err)
	}
	sts := nginx.StatefulSet(instance, nginx.Materials{Config: conf, ConfigHash: "test", Image: "nginx", ExporterImage: "exporter", ReloaderImage: "operator",
		References: render.ReferencesOf(&instance.Spec)})
	pod := sts.Spec.Template.Spec
	byName := map[string]corev1.Container{}
	for _, c := range append(pod.InitContainers, pod.Containers...) {
		byName[c.Name] = c
	}

	// The init container copies the reloader out of the operator's image
	// into the emptyDir both containers mount (here: a directory of the
	// installer's root, then copied into nginx's).
	operatorRoot := rootFor(t, operatorImg)
	installer := byName["install-reloader"]
	for _, m := range installer.VolumeMounts {
		mountVolume(t, operatorRoot, m, nil)
	}
	operatorCfg := mustConfig(t, operatorImg).Config
	workDir := operatorCfg.WorkingDir
	if installer.WorkingDir != "" {
		workDir = installer.WorkingDir
	}
	install := startContainer(t, "install-reloader", operatorRoot, installer.Command, operatorCfg.Env, workDir, pod.SecurityContext, syscall.SIGTERM)
	err = <-install.done
	install.done <- err // for the cleanup's wait
	if err != nil {
		t.Fatalf("install-reloader: %v\n%s", err, install.out.String())
	}

	// nginx, under the reloader: the image's tree plus the pod's volumes.
	nginxRoot := rootFor(t, nginxImg)
	nginxC := byName["nginx"]
	for _, m := range nginxC.VolumeMounts {
		mountVolume(t, nginxRoot, m, conf)
		if m.Name == layout.ReloaderVolume {
			copyFile(t, filepath.Join(operatorRoot, layout.ReloaderBinary), filepath.Join(nginxRoot, layout.ReloaderBinary))
		}
	}
	nginxCfg := mustConfig(t, nginxImg).Config
	reloaderPort := int32(tools.Port(t))
	var argv []string
	for _, a := range append(append([]string(nil), nginxC.Command...), nginxC.Args...) {
		if a == "-listen-address=:"+strconv.Itoa(layout.ReloaderPort) {
			a = "-listen-address=127.0.0.1:" + strconv.Itoa(int(reloaderPort))
		}
		argv = append(argv, a)
	}
	nginxProc := startContainer(t, "nginx", nginxRoot, argv, nginxCfg.Env, nginxCfg.WorkingDir, pod.SecurityContext, syscall.SIGQUIT)

	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	base := func(port int32) string { return "http://127.0.0.1:" + strconv.Itoa(int(port)) }
	get(t, client, base(healthPort)+"/healthz", "ok", nginxProc)
	get(t, client, base(httpPort)+"/", "content volume", nginxProc)
	get(t, client, base(httpPort)+"/api/x", "upstream saw /api/x", nginxProc)
	get(t, client, "https://127.0.0.1:"+strconv.Itoa(int(httpsPort))+"/", "content volume", nginxProc)
	get(t, client, base(reloaderPort)+"/metrics", "reloader_last_reload_successful 1", nginxProc)

	// A new configuration in the config volume is loaded by the same nginx.
	changed := strings.Replace(string(conf), "location /api/ {", "location = /new {\n            return 200 \"reloaded\";\n        }\n        location /api/ {", 1)
	if changed == string(conf) {
		t.Fatal("this test's configuration edit no longer applies: update it")
	}
	if err := os.WriteFile(filepath.Join(nginxRoot, layout.ConfigMountPath, layout.ConfigFile), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	get(t, client, base(httpPort)+"/new", "reloaded", nginxProc)
	get(t, client, base(reloaderPort)+"/metrics", "reloader_reloads_total 1", nginxProc)

	// The exporter: the pod gives arguments only, so the image's entrypoint
	// runs them. The pod's fixed ports are swapped for free ones.
	exporterRoot := rootFor(t, exporterImg)
	exporterC := byName["exporter"]
	swap := map[string]string{
		"--nginx.scrape-uri=" + nginx.StubStatusURI(layout.StubStatusPort): "--nginx.scrape-uri=" + nginx.StubStatusURI(int(stubPort)),
		"--web.listen-address=:" + strconv.Itoa(layout.ExporterPort):       "--web.listen-address=127.0.0.1:" + strconv.Itoa(int(exporterPort)),
	}
	exporterCfg := mustConfig(t, exporterImg).Config
	if len(exporterC.Command) > 0 {
		t.Fatalf("the exporter container sets a command %q: the image's entrypoint is not used", exporterC.Command)
	}
	argv = append([]string(nil), exporterCfg.Entrypoint...)
	for _, a := range exporterC.Args {
		if s, ok := swap[a]; ok {
			delete(swap, a)
			a = s
		}
		argv = append(argv, a)
	}
	if len(swap) > 0 {
		t.Fatalf("the exporter's arguments %q changed: update this test's port swaps %v", exporterC.Args, swap)
	}
	exporterProc := startContainer(t, "exporter", exporterRoot, argv, exporterCfg.Env, exporterCfg.WorkingDir, pod.SecurityContext, syscall.SIGTERM)
	get(t, client, base(exporterPort)+"/metrics", "nginx_up 1", exporterProc, nginxProc)
	get(t, client, base(exporterPort)+"/metrics", "nginx_connections_accepted", exporterProc, nginxProc)
}

// rootFor extracts img as a container's root file system, with the device
// files a container runtime provides (regular files here: nginx only opens
// them for writing).
func rootFor(t *testing.T, img v1.Image) string {
	t.Helper()
	root := t.TempDir()
	extract(t, img, root)
	// The root directory itself: t.TempDir makes it 0700, a runtime's is 0755.
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, dev := range []string{"null", "stdout", "stderr"} {
		p := filepath.Join(root, "dev", dev)
		if err := os.WriteFile(p, nil, 0o666); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// mountVolume puts what the kubelet would mount at m.MountPath into root:
// the rendered configuration, a TLS Secret, or an empty world-writable
// directory (emptyDir), replacing what the image has there.
func mountVolume(t *testing.T, root string, m corev1.VolumeMount, conf []byte) {
	t.Helper()
	dir := filepath.Join(root, m.MountPath)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	switch {
	case m.MountPath == layout.ConfigMountPath:
		if err := os.WriteFile(filepath.Join(dir, layout.ConfigFile), conf, 0o644); err != nil {
			t.Fatal(err)
		}
	case m.MountPath == layout.FilesMountPath:
		// The files Secrets: the instance's TLS Secret (operatorSpecForTest).
		writeTLSSecret(t, render.Paths{Files: dir}, "web-tls")
	case m.MountPath == "/tmp" || m.MountPath == nginxCache || m.MountPath == layout.ContentMountPath || m.MountPath == layout.ReloaderMountPath:
		if err := os.Chmod(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		if m.MountPath == layout.ContentMountPath {
			// What a ConfigMap or a restored backup would hold.
			if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("from the content volume\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	default:
		t.Fatalf("the pod mounts %s (%s), which this test does not emulate", m.MountPath, m.Name)
	}
}

// copyFile copies an executable from one container's root to another's.
func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
