package inprocess

import (
	"os"
	"sync"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/nginx-operator/nginx-operator/pkg/logging"
)

var setLogger sync.Once

// Logger returns the logger in-process managers use: errors only, on stderr;
// tests report everything else. It is also installed as controller-runtime's
// global logger, once.
func Logger() logr.Logger {
	kit, err := logging.New(os.Stderr, "logfmt", "error")
	if err != nil {
		panic(err) // constant, valid arguments
	}
	l := logging.ToLogr(kit, 0)
	setLogger.Do(func() { ctrl.SetLogger(l) })
	return l
}
