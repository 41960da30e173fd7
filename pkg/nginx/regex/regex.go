// Package regex judges a tenant's regular expression as nginx will read
// it. nginx compiles every regular expression of its configuration with
// PCRE2 (8-bit, not in UTF mode) when it loads the file, and one pattern it
// refuses makes it refuse the whole file: on a shared Gateway, every
// tenant's change would stop being served. The operator itself reads the
// same patterns with Go's RE2 (to order locations and to find what a
// location may match), so a pattern must mean the same to both.
//
// Check accepts a documented subset both read alike:
//
//   - printable ASCII only (nginx matches bytes; write \xHH for a byte);
//   - escapes: \d \D \s \S \w \W, \b \B \A \z outside classes, \t \n \r
//     \f, \xHH with two hex digits, and a backslash before any punctuation
//     (a literal); not \x{…}, \p, \Q…\E, \v, \C, octal or back references;
//   - groups: plain (…) and (?:…), and the flags i, m and s as (?i) or
//     (?i:…); no named group ((?P<n>…), (?<n>…), (?'n'…)), because nginx
//     makes each name a variable of the whole configuration ($n), which
//     would change another route's $args, $arg_… or $http_…;
//   - { only as a repetition {n}, {n,} or {n,m} (at most 1000), written \{
//     for itself, and } as \}; no quantifier after an anchor;
//   - classes: [ and ] inside written \[ and \]; ranges between single
//     characters ([a-z], [\x00-\x1f]), never from a class such as \d;
//     POSIX classes [:alpha:] and the like;
//   - at most 100 nested groups, and an estimated compiled size within
//     half of what PCRE2 compiles (a repetition of a group is compiled as
//     that many copies of it).
package regex

import (
	"fmt"
	"regexp/syntax"
	"strings"
)

// Limits of the subset.
const (
	// MaxRepeat is RE2's bound on a counted repetition.
	MaxRepeat = 1000
	// MaxDepth bounds nested groups (PCRE2 refuses past 250).
	MaxDepth = 100
	// MaxCompiledSize bounds the estimated size of the compiled pattern:
	// half of the 64 KiB PCRE2 compiles with its default link size.
	MaxCompiledSize = 32 << 10
)

// Check returns nil when nginx's PCRE2 compiles re and it means there what
// it means to RE2, without naming a variable; otherwise an error that says
// what to change. The error does not repeat re.
func Check(re string) error {
	if re == "" {
		return fmt.Errorf("is empty")
	}
	if err := scan(re); err != nil {
		return err
	}
	parsed, err := syntax.Parse(re, syntax.Perl)
	if err != nil {
		return fmt.Errorf("is not a regular expression: %v", unquoted(err))
	}
	if size := compiledSize(parsed); size > MaxCompiledSize {
		return fmt.Errorf("is too large for nginx: it compiles to about %d bytes, at most %d (each repetition of a group is a copy of it)", size, MaxCompiledSize)
	}
	return nil
}

// unquoted is RE2's error without the pattern it quotes.
func unquoted(err error) string {
	if e, ok := err.(*syntax.Error); ok {
		return e.Code.String()
	}
	return err.Error()
}

// scanner walks the source of a pattern, token by token.
type scanner struct {
	re    string
	i     int
	depth int
	// repeatable is whether a quantifier may follow the last token.
	repeatable bool
}

func scan(re string) error {
	s := &scanner{re: re}
	for s.i < len(re) {
		if err := s.token(); err != nil {
			return err
		}
	}
	return nil
}

func (s *scanner) token() error {
	c := s.re[s.i]
	if c < 0x20 || c > 0x7e {
		return nonASCII(c, s.i)
	}
	switch c {
	case '\\':
		return s.escape(false)
	case '[':
		return s.class()
	case '(':
		return s.group()
	case ')':
		s.depth--
		s.i++
		s.repeatable = true
	case '{':
		return s.counted()
	case '}':
		return fmt.Errorf("has a } at %d outside a repetition: write \\}", s.i)
	case '*', '+', '?':
		if !s.repeatable {
			return fmt.Errorf("has a quantifier %q at %d that follows nothing it can repeat", c, s.i)
		}
		s.i++
		if s.i < len(s.re) && s.re[s.i] == '?' {
			s.i++ // lazy
		}
		s.repeatable = false
	case '^', '$':
		s.i++
		s.repeatable = false
	case '|':
		s.i++
		s.repeatable = false
	default:
		s.i++
		s.repeatable = true
	}
	return nil
}

// escape reads a backslash escape; inClass when it stands in a class,
// where \b would be a backspace to PCRE2.
func (s *scanner) escape(inClass bool) error {
	at := s.i
	if s.i+1 >= len(s.re) {
		return fmt.Errorf("ends with a lone backslash")
	}
	c := s.re[s.i+1]
	s.i += 2
	s.repeatable = true
	switch {
	case c == 'x':
		if s.i+2 <= len(s.re) && isHex(s.re[s.i]) && isHex(s.re[s.i+1]) {
			s.i += 2
			return nil
		}
		return fmt.Errorf("has \\x at %d without two hex digits: nginx's PCRE2 reads no code point above \\xff, so write each byte as \\xHH", at)
	case strings.IndexByte("dDsSwWtnrf", c) >= 0:
		return nil
	case strings.IndexByte("bBAz", c) >= 0 && !inClass:
		s.repeatable = false
		return nil
	case !isAlnum(c) && c >= 0x20 && c <= 0x7e:
		return nil // punctuation: a literal to both
	}
	return fmt.Errorf("has the escape \\%c at %d, which nginx's PCRE2 and Go's RE2 do not read alike (use \\d \\s \\w, \\xHH, or a backslash before punctuation)", c, at)
}

// group reads the opening of a group.
func (s *scanner) group() error {
	at := s.i
	s.depth++
	if s.depth > MaxDepth {
		return fmt.Errorf("nests groups deeper than %d", MaxDepth)
	}
	s.i++
	s.repeatable = false
	if s.i >= len(s.re) || s.re[s.i] != '?' {
		return nil
	}
	rest := s.re[s.i+1:]
	if strings.HasPrefix(rest, "P<") || strings.HasPrefix(rest, "<") && !strings.HasPrefix(rest, "<=") && !strings.HasPrefix(rest, "<!") || strings.HasPrefix(rest, "'") {
		return fmt.Errorf("has a named group at %d: nginx makes a group's name a variable of the whole configuration, which would change what another route reads; use (?:...) or (...)", at)
	}
	// Flags, then ')' or ':'.
	j := 0
	for j < len(rest) && strings.IndexByte("ims-", rest[j]) >= 0 {
		j++
	}
	if j < len(rest) && (rest[j] == ')' || rest[j] == ':') && (j > 0 || rest[j] == ':') {
		s.i += 1 + j + 1
		if rest[j] == ')' {
			s.depth-- // (?i) opens nothing
		}
		return nil
	}
	return fmt.Errorf("has a group (?%s at %d that is not (?:...) or flags i, m, s: lookarounds, atomic groups, comments and other flags are not read alike by nginx and the operator", firstRune(rest[j:]), at)
}

func firstRune(s string) string {
	if s == "" {
		return ""
	}
	return s[:1]
}

// counted reads a repetition {n}, {n,} or {n,m}.
func (s *scanner) counted() error {
	at := s.i
	end := strings.IndexByte(s.re[s.i:], '}')
	if end < 0 {
		return fmt.Errorf("has a { at %d that is not a repetition {n}, {n,} or {n,m}: write \\{", at)
	}
	body := s.re[s.i+1 : s.i+end]
	lo, hi, comma := strings.Cut(body, ",")
	if !digits(lo) || comma && hi != "" && !digits(hi) {
		return fmt.Errorf("has a { at %d that is not a repetition {n}, {n,} or {n,m}: write \\{", at)
	}
	if !s.repeatable {
		return fmt.Errorf("has a repetition at %d that follows nothing it can repeat", at)
	}
	if len(lo) > 4 || atoi(lo) > MaxRepeat || len(hi) > 4 || atoi(hi) > MaxRepeat {
		return fmt.Errorf("repeats more than %d times at %d", MaxRepeat, at)
	}
	s.i += end + 1
	if s.i < len(s.re) && s.re[s.i] == '?' {
		s.i++
	}
	s.repeatable = false
	return nil
}

// posixClasses are the [:name:] classes both read.
var posixClasses = []string{"alnum", "alpha", "ascii", "blank", "cntrl", "digit", "graph", "lower", "print", "punct", "space", "upper", "word", "xdigit"}

// class reads a bracketed class.
func (s *scanner) class() error {
	at := s.i
	s.i++
	if s.i < len(s.re) && s.re[s.i] == '^' {
		s.i++
	}
	if s.i < len(s.re) && s.re[s.i] == ']' {
		return fmt.Errorf("has a class at %d that starts with ]: write \\]", at)
	}
	first := true
	// rangeStart is whether the last item was one character a range may
	// start at (not a class, a range's end or a literal -).
	rangeStart := false
	for s.i < len(s.re) {
		switch c := s.re[s.i]; {
		case c == ']':
			s.i++
			s.repeatable = true
			return nil
		case c == '[':
			if err := s.posixClass(); err != nil {
				return err
			}
			rangeStart = false
		case c == '-' && (first || s.i+1 < len(s.re) && s.re[s.i+1] == ']'):
			s.i++ // a literal - at either end
			rangeStart = false
		case c == '-':
			if !rangeStart {
				return fmt.Errorf("has a range at %d that does not start at a single character (not a class such as \\d, nor a range's end): write \\- for a -", s.i)
			}
			s.i++
			single, err := s.classItem()
			if err != nil {
				return err
			}
			if !single {
				return fmt.Errorf("has a range at %d that ends at a class such as \\d: write \\- for a -", s.i)
			}
			rangeStart = false
		default:
			single, err := s.classItem()
			if err != nil {
				return err
			}
			rangeStart = single
		}
		first = false
	}
	return fmt.Errorf("has a class at %d that is never closed", at)
}

// classItem reads one character or class escape of a class, and says
// whether it is one character.
func (s *scanner) classItem() (bool, error) {
	if s.i >= len(s.re) {
		return false, fmt.Errorf("has a class that is never closed")
	}
	c := s.re[s.i]
	switch {
	case c < 0x20 || c > 0x7e:
		return false, nonASCII(c, s.i)
	case c == '\\':
		start := s.i
		if err := s.escape(true); err != nil {
			return false, err
		}
		return strings.IndexByte("dDsSwW", s.re[start+1]) < 0, nil
	case c == '[':
		return false, fmt.Errorf("has a [ at %d inside a class: write \\[", s.i)
	}
	s.i++
	return true, nil
}

// posixClass reads [:name:] in a class.
func (s *scanner) posixClass() error {
	rest := s.re[s.i:]
	for _, name := range posixClasses {
		for _, form := range []string{"[:" + name + ":]", "[:^" + name + ":]"} {
			if strings.HasPrefix(rest, form) {
				s.i += len(form)
				return nil
			}
		}
	}
	return fmt.Errorf("has a [ at %d inside a class that is not a class such as [:alpha:]: write \\[", s.i)
}

func nonASCII(c byte, at int) error {
	return fmt.Errorf("holds the byte \\x%02x at %d: only printable ASCII is read alike by nginx and the operator; write \\x%02x", c, at, c)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isAlnum(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func atoi(s string) int {
	n := 0
	for i := range len(s) {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// compiledSize estimates, in bytes, what PCRE2 compiles re to: two per
// character, 33 per class (a bitmap), six or eight per group, and a
// repeated group as that many copies of it, which is how PCRE2 compiles
// a counted repetition of anything longer than one character.
func compiledSize(re *syntax.Regexp) int {
	sum := func(subs []*syntax.Regexp) int {
		n := 0
		for _, sub := range subs {
			n += compiledSize(sub)
		}
		return n
	}
	switch re.Op {
	case syntax.OpLiteral:
		return 2 * len(re.Rune)
	case syntax.OpCharClass:
		return 33
	case syntax.OpCapture:
		return 8 + sum(re.Sub)
	case syntax.OpConcat:
		return sum(re.Sub)
	case syntax.OpAlternate:
		return 6 + 3*len(re.Sub) + sum(re.Sub)
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		return 6 + sum(re.Sub)
	case syntax.OpRepeat:
		one := sum(re.Sub)
		if oneCharacter(re.Sub[0]) {
			return one + 6
		}
		copies := re.Max
		if copies < 0 {
			copies = re.Min + 1
		}
		return copies * (one + 6)
	}
	return 1
}

// oneCharacter is whether re matches one character, which PCRE2 repeats
// with a count rather than copies.
func oneCharacter(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune) == 1
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return true
	}
	return false
}
