package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// profileDir is where the bench writes Go profiles of the operator and the
// kube-apiserver (BENCH_PROFILE=<dir>), to find where converge time and
// memory go; unset, nothing is profiled and the operator runs without its
// profiler, as bundle.yaml runs it.
func profileDir() string { return os.Getenv("BENCH_PROFILE") }

// profilerArgs are the operator flags that serve its profiler when
// profiling is on.
func profilerArgs(addr string) []string {
	if profileDir() == "" {
		return nil
	}
	return []string{"--pprof-bind-address=" + addr}
}

// apiServerArgs turn on the kube-apiserver's profiler when profiling is on.
func apiServerArgs() []string {
	if profileDir() == "" {
		return nil
	}
	return []string{"--profiling=true"}
}

// profileCPU starts CPU profiles of the operator and the kube-apiserver for
// seconds and returns a function that waits for both and writes them as
// <name>-operator.cpu.pprof and <name>-apiserver.cpu.pprof.
func profileCPU(b testing.TB, name string, op *operatorProcess, admin *rest.Config, seconds int) (wait func()) {
	if profileDir() == "" {
		return func() {}
	}
	done := make(chan struct{}, 2)
	go func() {
		saveProfile(b, name+"-operator.cpu.pprof", fromOperator(op, fmt.Sprintf("/debug/pprof/profile?seconds=%d", seconds)))
		done <- struct{}{}
	}()
	go func() {
		saveProfile(b, name+"-apiserver.cpu.pprof", func() (io.ReadCloser, error) {
			return kubernetes.NewForConfigOrDie(admin).CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
				Param("seconds", strconv.Itoa(seconds)).Stream(context.Background())
		})
		done <- struct{}{}
	}()
	return func() { <-done; <-done }
}

// profileHeap writes the operator's heap profile as <name>-operator.heap.pprof.
func profileHeap(b testing.TB, name string, op *operatorProcess) {
	if profileDir() != "" {
		saveProfile(b, name+"-operator.heap.pprof", fromOperator(op, "/debug/pprof/heap?gc=1"))
	}
}

func fromOperator(op *operatorProcess, path string) func() (io.ReadCloser, error) {
	return func() (io.ReadCloser, error) {
		resp, err := http.Get("http://" + op.pprof + path)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
			return nil, fmt.Errorf("GET %s: %s", path, resp.Status)
		}
		return resp.Body, nil
	}
}

func saveProfile(b testing.TB, file string, open func() (io.ReadCloser, error)) {
	body, err := open()
	if err != nil {
		b.Logf("profile %s: %v", file, err)
		return
	}
	defer body.Close()
	path := filepath.Join(profileDir(), file)
	out, err := os.Create(path)
	if err != nil {
		b.Logf("profile %s: %v", file, err)
		return
	}
	defer out.Close()
	if _, err := io.Copy(out, body); err != nil {
		b.Logf("profile %s: %v", file, err)
		return
	}
	b.Logf("profile written: %s", path)
}
