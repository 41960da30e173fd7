//go:build !linux

package reloader

import "context"

// changes has no way to watch files here: the reloader looks every
// interval only.
func changes(context.Context, []string, func(string, ...any)) <-chan struct{} { return nil }
