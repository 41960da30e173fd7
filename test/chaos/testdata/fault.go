// This file is not part of the operator: test/chaos builds it into
// cmd/operator's package main with `go build -overlay`
// (framework.BuildOperatorWith) to show that the chaos suite fails when an
// operator panics. No build of the operator from its own sources contains
// it, so the variables below do nothing to a released operator.
//
// NGINX_OPERATOR_TEST_FAULT picks the fault, NGINX_OPERATOR_TEST_FAULT_AFTER
// (a duration) when it strikes, and NGINX_OPERATOR_TEST_FAULT_ONCE names a
// file the first process to strike creates: a process that finds it strikes
// not, so a replica started again runs clean.
//
//	crash      a goroutine panics: the process exits with status 2
//	recovered  a panic is recovered the way controller-runtime recovers a
//	           reconciler's, logged by client-go's panic handlers: the
//	           process runs on
package main

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"time"

	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
)

func init() {
	fault := os.Getenv("NGINX_OPERATOR_TEST_FAULT")
	if fault == "" {
		return
	}
	after, err := time.ParseDuration(os.Getenv("NGINX_OPERATOR_TEST_FAULT_AFTER"))
	if err != nil {
		after = 0
	}
	go func() {
		time.Sleep(after)
		if once := os.Getenv("NGINX_OPERATOR_TEST_FAULT_ONCE"); once != "" {
			f, err := os.OpenFile(once, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
			if errors.Is(err, fs.ErrExist) {
				return
			}
			if err == nil {
				f.Close()
			}
		}
		switch fault {
		case "crash":
			panic("fault injected by test/chaos: the operator crashes")
		case "recovered":
			func() {
				defer func() {
					if r := recover(); r != nil {
						for _, handle := range utilruntime.PanicHandlers {
							handle(context.Background(), r)
						}
					}
				}()
				panic("fault injected by test/chaos: a recovered panic")
			}()
		}
	}()
}
