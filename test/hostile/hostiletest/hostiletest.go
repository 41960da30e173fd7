// Package hostiletest is what the hostile corpora (test/hostile for the
// NginxOperator, test/hostile/gatewayapi for Gateway API's routes) share:
// setting values deep in an object's JSON, running the sends on a bounded
// number of goroutines, and showing messages on one line of a report.
package hostiletest

import (
	"regexp"
	"strings"
	"sync"
)

// SetAt is a setter of the value at path (map keys and list indexes) of
// an object's JSON; maps on the way are made, list items must exist.
func SetAt(path ...any) func(obj map[string]any, v any) {
	return func(obj map[string]any, v any) {
		var cur any = obj
		for i, p := range path {
			last := i == len(path)-1
			switch k := p.(type) {
			case string:
				m := cur.(map[string]any)
				if last {
					m[k] = v
					return
				}
				if m[k] == nil {
					m[k] = map[string]any{}
				}
				cur = m[k]
			case int:
				l := cur.([]any)
				if last {
					l[k] = v
					return
				}
				cur = l[k]
			}
		}
	}
}

// InParallel runs work(0) … work(n-1) on workers goroutines, so that
// neither the apiserver nor the machine running `nginx -t` sees more
// concurrency than a corpus allows.
func InParallel(workers, n int, work func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				work(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// OneLine is s on one line of at most limit characters, without the
// apiserver's preamble before a refusal's causes.
func OneLine(s string, limit int) string {
	s = invalidPreamble.ReplaceAllString(s, "")
	s = strings.NewReplacer("\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit]) + "…"
	}
	return s
}

// invalidPreamble is the apiserver's "<Kind>.<group> "<name>" is invalid: ".
var invalidPreamble = regexp.MustCompile(`[A-Za-z]+\.[a-z.]+ "[^"]*" is invalid: `)
