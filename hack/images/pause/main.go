// Command pause is the sandbox ("infra") container of the pods that the
// project's tests run for real: it holds the pod's namespaces and does
// nothing else until the kubelet stops the pod. hack/images builds it into
// the pause image.
//
// It runs as PID 1 of its container, where the kernel drops signals that
// have no handler, so it must catch SIGTERM and SIGINT itself to stop when
// asked instead of waiting to be killed. Reaping orphaned processes is left
// out: the test pods do not share their process namespace.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}
