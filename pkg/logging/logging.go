// Package logging builds the operator's go-kit logger and bridges it into logr,
// so controller-runtime's and client-go's logs come out through the same writer,
// format and level filter as the operator's own.
package logging

import (
	"fmt"
	"io"
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
// record carries a UTC timestamp and the caller.
func New(w io.Writer, format, lvl string) (kitlog.Logger, error) {
	var logger kitlog.Logger
	sw := kitlog.NewSyncWriter(w)
	switch format {
	case "logfmt":
		logger = kitlog.NewLogfmtLogger(sw)
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
