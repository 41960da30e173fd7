package conf

import (
	"bytes"
	"fmt"
	"strings"
)

// Parse reads nginx.conf text into directives. It tokenizes as nginx's
// ngx_conf_read_token does (minus its 4 KiB limit on a token), so that tests
// can use it as a stand-in for nginx:
//
//   - Space, tab, CR and LF separate tokens. A statement is a run of tokens
//     ended by ';' (simple directive) or '{' (block); '}' closes a block and
//     must stand where a statement would start.
//   - '#' starts a comment to the end of the line, but only where a token
//     could start: inside a token ("a#b") it is an ordinary byte.
//   - A token that starts with " or ' runs to the matching unescaped quote;
//     inside it ; { } # and whitespace are ordinary. The closing quote must be
//     followed by whitespace, ';', '{' or ')' (which starts the next token, for
//     `if ($a = "b")`). A quote inside a bare token is an ordinary byte.
//   - A bare token ends at whitespace, ';' or '{', except that '{' right after
//     '$' belongs to the token (the ${name} form). '}' inside a bare token is
//     ordinary: "a}" is one token.
//   - A backslash anywhere makes the next byte ordinary for the purposes
//     above. Afterwards \" \' \\ become the quoted byte and \t \r \n become
//     tab, CR and LF; any other \x keeps both bytes, in quoted and bare tokens
//     alike, so `\;` in a bare token is backslash-semicolon.
//
// The first token of a statement becomes Name, whatever it looks like, so the
// contents of types{} and map{} blocks parse too; Render is stricter. Comments
// are dropped and include is not followed. Errors read "conf: line N: ...",
// in nginx's words where it has some.
func Parse(data []byte) ([]Directive, error) {
	p := &parser{data: data, line: 1}
	// stack[0] collects the top level; every open block pushes a frame.
	type frame struct {
		dir  Directive
		line int
	}
	stack := []frame{{}}
	for {
		st, err := p.statement()
		if err != nil {
			return nil, err
		}
		top := &stack[len(stack)-1]
		switch st.end {
		case endFile:
			if len(stack) > 1 {
				return nil, p.errorf(p.line, `unexpected end of file, expecting "}" to close %q opened on line %d`,
					top.dir.Name, top.line)
			}
			return top.dir.Block, nil
		case ';':
			top.dir.Block = append(top.dir.Block, newDirective(st.args))
		case '{':
			d := newDirective(st.args)
			d.Block = []Directive{}
			stack = append(stack, frame{dir: d, line: st.line})
		case '}':
			if len(stack) == 1 {
				return nil, p.errorf(st.line, `unexpected "}"`)
			}
			stack = stack[:len(stack)-1]
			parent := &stack[len(stack)-1]
			parent.dir.Block = append(parent.dir.Block, top.dir)
		}
	}
}

func newDirective(tokens []string) Directive {
	d := Directive{Name: tokens[0]}
	if len(tokens) > 1 {
		d.Args = tokens[1:]
	}
	return d
}

// endFile marks the end of the input in statement.end.
const endFile = 0

// statement is what ngx_conf_read_token returns: the tokens read and what
// ended them (';', '{', '}' or endFile), plus the line of the first token.
type statement struct {
	args []string
	end  byte
	line int
}

type parser struct {
	data []byte
	pos  int
	line int // of data[pos]
}

func (p *parser) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("conf: line %d: %s", line, fmt.Sprintf(format, args...))
}

// next consumes one byte, counting lines.
func (p *parser) next() byte {
	c := p.data[p.pos]
	p.pos++
	if c == '\n' {
		p.line++
	}
	return c
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n'
}

// statement reads tokens up to and including the ';', '{' or '}' that ends
// them. The loop is in nginx's "last_space" state: between tokens.
func (p *parser) statement() (statement, error) {
	var st statement
	for {
		if p.pos >= len(p.data) {
			if len(st.args) > 0 {
				return st, p.errorf(p.line, `unexpected end of file, expecting ";" or "}" after %q on line %d`,
					st.args[0], st.line)
			}
			st.end = endFile
			return st, nil
		}
		if len(st.args) == 0 {
			st.line = p.line
		}
		switch c := p.data[p.pos]; {
		case isSpace(c):
			p.next()
		case c == '#':
			for p.pos < len(p.data) && p.next() != '\n' {
			}
		case c == ';' || c == '{':
			if len(st.args) == 0 {
				return st, p.errorf(p.line, "unexpected %q", string(c))
			}
			p.next()
			st.end = c
			return st, nil
		case c == '}':
			if len(st.args) > 0 {
				return st, p.errorf(p.line, `unexpected "}": is ";" missing after %q on line %d?`,
					st.args[0], st.line)
			}
			p.next()
			st.end = c
			return st, nil
		case c == '"' || c == '\'':
			tok, err := p.quoted()
			if err != nil {
				return st, err
			}
			st.args = append(st.args, tok)
			// nginx's "need_space" state. ')' is let through to start the
			// next token; ';' and '{' end the statement on the next turn.
			if p.pos < len(p.data) {
				if c := p.data[p.pos]; !isSpace(c) && c != ';' && c != '{' && c != ')' {
					return st, p.errorf(p.line, "unexpected %q after a quoted string", string(c))
				}
			}
		default:
			tok, err := p.bare()
			if err != nil {
				return st, err
			}
			st.args = append(st.args, tok)
		}
	}
}

// quoted reads a token that starts with " or ' and returns its unescaped
// contents.
func (p *parser) quoted() (string, error) {
	line := p.line
	q := p.next()
	start := p.pos
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case '\\':
			p.next()
			if p.pos < len(p.data) {
				p.next()
			}
		case q:
			tok := unescape(p.data[start:p.pos])
			p.next()
			return tok, nil
		default:
			p.next()
		}
	}
	return "", p.errorf(line, "unterminated %c-quoted string: unexpected end of file", q)
}

// bare reads an unquoted token, leaving the byte that ends it unread.
func (p *parser) bare() (string, error) {
	start := p.pos
	variable := false // the previous byte was '$', or '{' right after one
	for p.pos < len(p.data) {
		c := p.data[p.pos]
		if c == '{' && variable {
			p.next()
			continue
		}
		variable = c == '$'
		if isSpace(c) || c == ';' || c == '{' {
			break
		}
		p.next()
		if c == '\\' && p.pos < len(p.data) {
			p.next()
		}
	}
	if p.pos >= len(p.data) {
		return "", p.errorf(p.line, `unexpected end of file, expecting ";" or "}"`)
	}
	return unescape(p.data[start:p.pos]), nil
}

// unescape applies nginx's escape translation to a token's raw bytes.
func unescape(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c == '\\' && i+1 < len(raw) {
			switch raw[i+1] {
			case '"', '\'', '\\':
				c = raw[i+1]
				i++
			case 't':
				c = '\t'
				i++
			case 'r':
				c = '\r'
				i++
			case 'n':
				c = '\n'
				i++
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}
