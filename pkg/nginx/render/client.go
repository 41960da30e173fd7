package render

import (
	"github.com/nginx-operator/nginx-operator/pkg/apis/nginx/v1beta1"
	"github.com/nginx-operator/nginx-operator/pkg/nginx/conf"
)

// clientBody is the limit on a request body's size and the memory it is
// read into, where the spec sets them; unset, they are inherited.
func clientBody(maxSize string, bufferKiB int32) []conf.Directive {
	var out []conf.Directive
	if maxSize != "" {
		out = append(out, conf.D("client_max_body_size", maxSize))
	}
	if bufferKiB > 0 {
		out = append(out, conf.D("client_body_buffer_size", itoa(bufferKiB)+"k"))
	}
	return out
}

// headerBuffers are the buffers of long request lines and headers, where
// the spec sets them.
func headerBuffers(b *v1beta1.ClientHeaderBuffers) []conf.Directive {
	if b == nil {
		return nil
	}
	return []conf.Directive{conf.D("large_client_header_buffers", itoa(b.Count), itoa(b.SizeKiB)+"k")}
}

// headerTooLargeLocation answers the requests headerTooLarge sends it.
const headerTooLargeLocation = "@request_header_too_large"

// headerTooLarge makes a server answer headers that overflow its buffers
// with 431 Request Header Fields Too Large (RFC 6585). nginx's own answer
// is a 400 with the text "Request Header Or Cookie Too Large", which
// clients and monitoring count as the client's syntax error; nginx lets
// error_page catch it by its internal code 494. error_page is per server:
// one of the server's own (errorPages) would hide one inherited from http.
func headerTooLarge() []conf.Directive {
	return []conf.Directive{
		conf.D("error_page", "494", "=431", headerTooLargeLocation),
		conf.B("location", []string{headerTooLargeLocation}, conf.D("return", "431")),
	}
}
