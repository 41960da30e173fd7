package logging

import (
	"fmt"

	kitlog "github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/go-logr/logr"
)

// MaxDebugVerbosity is the highest logr V-level logged at --log-level=debug.
// Higher levels are client-go's request and response dumps (V(6) to V(10)),
// which would drown everything else.
const MaxDebugVerbosity = 4

// ToLogr wraps a go-kit logger as a logr.Logger. logr's V-levels map to go-kit
// levels: V(0) is info, V(1) to V(maxV) are debug and anything more verbose
// is dropped; errors are errors. Use Verbosity to derive maxV from a level.
func ToLogr(logger kitlog.Logger, maxV int) logr.Logger {
	return logr.New(&sink{logger: logger, maxV: maxV})
}

// Verbosity is the highest logr V-level worth producing at a log level.
func Verbosity(lvl string) int {
	if lvl == "debug" {
		return MaxDebugVerbosity
	}
	return 0
}

// sink is a logr.LogSink that writes through go-kit. The name of a logr logger
// becomes the "logger" key, joined with dots as logr names nest.
type sink struct {
	logger kitlog.Logger
	maxV   int
	name   string
	values []any
}

func (s *sink) Init(logr.RuntimeInfo) {}

// Enabled stops records more verbose than maxV before they are formatted
// (klog asks before building its messages); go-kit's level filter does the rest.
func (s *sink) Enabled(v int) bool { return v <= s.maxV }

func (s *sink) Info(v int, msg string, kv ...any) {
	l := level.Info(s.logger)
	if v > 0 {
		l = level.Debug(s.logger)
	}
	_ = l.Log(s.keyvals("msg", msg, kv)...)
}

func (s *sink) Error(err error, msg string, kv ...any) {
	_ = level.Error(s.logger).Log(s.keyvals("msg", msg, append([]any{"err", err}, kv...))...)
}

func (s *sink) WithValues(kv ...any) logr.LogSink {
	c := *s
	c.values = append(append([]any{}, s.values...), kv...)
	return &c
}

func (s *sink) WithName(name string) logr.LogSink {
	c := *s
	if c.name != "" {
		name = c.name + "." + name
	}
	c.name = name
	return &c
}

func (s *sink) keyvals(msgKey, msg string, kv []any) []any {
	out := make([]any, 0, 4+len(s.values)+len(kv))
	if s.name != "" {
		out = append(out, "logger", s.name)
	}
	out = append(out, msgKey, msg)
	out = append(out, s.values...)
	out = append(out, kv...)
	if len(out)%2 != 0 {
		// An odd key/value list is a caller bug; keep the value visible rather than drop it.
		out = append(out, "(MISSING)")
	}
	for i := 0; i < len(out); i += 2 {
		if _, ok := out[i].(string); !ok {
			out[i] = fmt.Sprint(out[i])
		}
	}
	return out
}
