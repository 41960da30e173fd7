package conf

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// maxToken is the longest token, as written in the file, that Quote emits.
// nginx reads the configuration through a 4096-byte buffer (NGX_CONF_BUFFER)
// that must hold a token and the byte after it, counted from the byte after an
// opening quote: nginx (1.22 and 1.26 alike) accepts at most 4095 bytes bare
// and 4094 between quotes (4096 with them). 4094 for the whole token leaves a
// byte to spare.
const maxToken = 4094

// Errors Render and Quote wrap, so callers and tests can tell why an argument
// was refused.
var (
	errBadName     = errors.New("invalid directive name")
	errControlChar = errors.New("control character")
	errTooLong     = errors.New("argument too long for nginx's configuration buffer")
)

// Render emits the directives as nginx.conf text: 4-space indentation, one
// directive per line, every argument passed through Quote, and a blank line
// between two top-level directives when either of them is a block. An empty
// block is written as "name {}".
//
// It fails, and writes nothing, when a name is not a valid directive name
// (^[a-z_][a-z0-9_]*$) or Quote refuses an argument. Inside map and geo
// blocks the first token of an entry is a key, not a name, and goes through
// Quote like an argument.
func Render(dirs []Directive) ([]byte, error) {
	var b bytes.Buffer
	if err := render(&b, dirs, nil); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// render writes dirs at the depth len(path); path holds the names of the
// enclosing blocks, for error messages.
func render(b *bytes.Buffer, dirs []Directive, path []string) error {
	indent := strings.Repeat("    ", len(path))
	keyed := len(path) > 0 && keyedBlocks[path[len(path)-1]]
	for i, d := range dirs {
		name := d.Name
		if keyed {
			// A map or geo entry starts with its key, a value like any
			// argument (a string, a regex, a CIDR): it goes through Quote.
			tok, err := Quote(d.Name)
			if err != nil {
				return fmt.Errorf("conf: %s: key: %w", where(path, "entry"), err)
			}
			name = tok
		} else if !validName(d.Name) {
			return fmt.Errorf("conf: %s: %w", where(path, fmt.Sprintf("%q", d.Name)), errBadName)
		}
		if len(path) == 0 && i > 0 && (d.Block != nil || dirs[i-1].Block != nil) {
			b.WriteByte('\n')
		}
		b.WriteString(indent)
		b.WriteString(name)
		for j, arg := range d.Args {
			tok, err := Quote(arg)
			if err != nil {
				return fmt.Errorf("conf: %s: argument %d: %w", where(path, d.Name), j+1, err)
			}
			b.WriteByte(' ')
			b.WriteString(tok)
		}
		switch {
		case d.Block == nil:
			b.WriteString(";\n")
		case len(d.Block) == 0:
			b.WriteString(" {}\n")
		default:
			b.WriteString(" {\n")
			if err := render(b, d.Block, append(path[:len(path):len(path)], d.Name)); err != nil {
				return err
			}
			b.WriteString(indent)
			b.WriteString("}\n")
		}
	}
	return nil
}

// keyedBlocks are the blocks whose entries start with a key rather than a
// directive name: map, geo, and split_clients (whose keys are percentages
// and "*"). A key that reads as one of the block's own words (default,
// hostnames, include, volatile in map; default, delete, ranges, proxy and
// proxy_recursive in geo) keeps that meaning: the caller builds keys.
var keyedBlocks = map[string]bool{"map": true, "geo": true, "split_clients": true}

// where names a directive in error messages, e.g. "http > server > listen".
func where(path []string, name string) string {
	return strings.Join(append(path[:len(path):len(path)], name), " > ")
}

// validName reports whether name matches ^[a-z_][a-z0-9_]*$, the shape of every
// directive nginx and its common modules define. Names are never quoted, so
// this check is what keeps them from carrying syntax.
func validName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// Quote returns the nginx token for one argument.
//
// An argument made only of ASCII letters, digits and -._~:/?&=+%@,!*^|[]()<>$
// is written bare: none of those is special to nginx's tokenizer anywhere in a
// token, so regexes such as ^/api/(.*)$ and variables such as $host stay
// readable. '{' is deliberately not in the set: after '$' nginx keeps it in a
// bare token, elsewhere it opens a block.
//
// Anything else, including the empty string, is double-quoted, with \ and "
// escaped as \\ and \" and tab, LF and CR written as \t, \n and \r (so every
// directive stays on one line). Inside double quotes nginx treats ; { } # '
// and whitespace as ordinary bytes, and those five escapes are the only ones it
// translates, so the token reads back as exactly arg. Bytes >= 0x80 are
// passed through: nginx is byte-oriented and does not care about encodings.
//
// Quote refuses:
//   - NUL, because nginx stores arguments as C strings and many directives
//     would silently truncate at it;
//   - the other C0 control characters (0x01-0x08, 0x0B, 0x0C, 0x0E-0x1F) and
//     DEL (0x7F): nginx has no escape for them, and written raw they would hide
//     in the file and reach headers and logs, with no legitimate use;
//   - arguments whose token would exceed maxToken bytes, which nginx rejects
//     with "too long parameter".
//
// '$' is not neutralised (nginx has no escape for it): whether an argument may
// use variables is for the caller to decide.
func Quote(arg string) (string, error) {
	bare := arg != ""
	for i := 0; i < len(arg); i++ {
		c := arg[i]
		if refused(c) {
			return "", fmt.Errorf("%w 0x%02X at byte %d", errControlChar, c, i)
		}
		if !bareByte(c) {
			bare = false
		}
	}
	tok := arg
	if !bare {
		var b strings.Builder
		b.Grow(len(arg) + 2)
		b.WriteByte('"')
		for i := 0; i < len(arg); i++ {
			switch c := arg[i]; c {
			case '\\', '"':
				b.WriteByte('\\')
				b.WriteByte(c)
			case '\t':
				b.WriteString(`\t`)
			case '\n':
				b.WriteString(`\n`)
			case '\r':
				b.WriteString(`\r`)
			default:
				b.WriteByte(c)
			}
		}
		b.WriteByte('"')
		tok = b.String()
	}
	if len(tok) > maxToken {
		return "", fmt.Errorf("%w: %d bytes once quoted, at most %d", errTooLong, len(tok), maxToken)
	}
	return tok, nil
}

func refused(c byte) bool {
	return c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7F
}

func bareByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		strings.IndexByte("-._~:/?&=+%@,!*^|[]()<>$", c) >= 0
}
