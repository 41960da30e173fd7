// Package logging builds the operator's go-kit logger and bridges it into logr,
// so controller-runtime's and client-go's logs come out through the same writer,
// format and level filter as the operator's own.
package logging

import (
	"encoding"
	"fmt"
	"io"
	"reflect"
	"strings"

	kitlog "github.com/go-kit/log"
	"github.com/go-kit/log/level"
)

// Formats and levels accepted by the --log-format and --log-level flags.
var (
	Formats = []string{"logfmt", "json"}
	Levels  = []string{"debug", "info", "warn", "error"}
)

// New returns a logger writing in format to w, dropping records below lvl. Every
// record carries a UTC timestamp (ts).
func New(w io.Writer, format, lvl string) (kitlog.Logger, error) {
	var logger kitlog.Logger
	sw := kitlog.NewSyncWriter(w)
	switch format {
	case "logfmt":
		logger = readableValues{kitlog.NewLogfmtLogger(sw)}
	case "json":
		logger = kitlog.NewJSONLogger(sw)
	default:
		return nil, fmt.Errorf("unknown log format %q: use one of %s", format, strings.Join(Formats, ", "))
	}
	option, err := levelOption(lvl)
	if err != nil {
		return nil, err
	}
	logger = level.NewFilter(logger, option)
	return kitlog.With(logger, "ts", kitlog.DefaultTimestampUTC), nil
}

func levelOption(lvl string) (level.Option, error) {
	switch lvl {
	case "debug":
		return level.AllowDebug(), nil
	case "info":
		return level.AllowInfo(), nil
	case "warn":
		return level.AllowWarn(), nil
	case "error":
		return level.AllowError(), nil
	}
	return nil, fmt.Errorf("unknown log level %q: use one of %s", lvl, strings.Join(Levels, ", "))
}

// readableValues formats the values logfmt cannot encode (slices, maps,
// structs: go-logfmt writes "unsupported value type" in their place) with
// %+v before they reach next. controller-runtime logs why a health probe
// failed as a slice of structs ("healthz check failed" statuses=...): without
// this, a pod that stays unready says nothing about why.
type readableValues struct{ next kitlog.Logger }

func (l readableValues) Log(keyvals ...any) error {
	out := keyvals
	for i := 1; i < len(keyvals); i += 2 {
		if logfmtEncodes(keyvals[i]) {
			continue
		}
		if &out[0] == &keyvals[0] {
			// The caller's slice may be a logger's bound context.
			out = append([]any(nil), keyvals...)
		}
		out[i] = fmt.Sprintf("%+v", keyvals[i])
	}
	return l.next.Log(out...)
}

// logfmtEncodes reports whether go-logfmt encodes v: nil, strings, bytes,
// errors, Stringers, TextMarshalers and (pointers to) scalars.
func logfmtEncodes(v any) bool {
	switch v.(type) {
	case nil, string, []byte, error, fmt.Stringer, encoding.TextMarshaler:
		return true
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return true
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return true
	}
	return false
}
