package main

import (
	"fmt"
	"strconv"
	"strings"
)

// marker is one "+name=value" or "+name:arg=value,arg=value" comment line.
type marker struct {
	Name  string
	Value string            // single-valued markers, unquoted
	Args  map[string]string // argument markers, values unquoted
}

// argMarkers take named arguments after their name; every other marker has at
// most one value after "=". controller-gen knows this from its registry; the
// reference only needs these.
var argMarkers = []string{
	"kubebuilder:validation:XValidation",
	"kubebuilder:resource",
	"kubebuilder:printcolumn",
	"kubebuilder:subresource:scale",
	"kubebuilder:deprecatedversion",
}

// parseMarkers returns the markers among comment lines, in order.
func parseMarkers(lines []string) []marker {
	var out []marker
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if !strings.HasPrefix(l, "+") {
			continue
		}
		out = append(out, parseMarker(strings.TrimPrefix(l, "+")))
	}
	return out
}

func parseMarker(s string) marker {
	for _, name := range argMarkers {
		if s == name {
			return marker{Name: name, Args: map[string]string{}}
		}
		if strings.HasPrefix(s, name+":") {
			return marker{Name: name, Args: parseArgs(s[len(name)+1:])}
		}
	}
	name, value, _ := strings.Cut(s, "=")
	return marker{Name: name, Value: unquote(value)}
}

// parseArgs splits `a="x,y",b=3,c={d: e}` into its arguments, respecting
// quotes, backquotes and braces.
func parseArgs(s string) map[string]string {
	args := map[string]string{}
	for len(s) > 0 {
		key, rest, found := strings.Cut(s, "=")
		if !found {
			args[strings.TrimSpace(key)] = ""
			break
		}
		end := valueEnd(rest)
		args[strings.TrimSpace(key)] = unquote(rest[:end])
		s = strings.TrimPrefix(rest[end:], ",")
	}
	return args
}

// valueEnd is the index just past the argument value at the start of s.
func valueEnd(s string) int {
	if s == "" {
		return 0
	}
	switch s[0] {
	case '"':
		for i := 1; i < len(s); i++ {
			switch s[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return len(s)
	case '`':
		if i := strings.IndexByte(s[1:], '`'); i >= 0 {
			return i + 2
		}
		return len(s)
	case '{':
		depth := 0
		for i := 0; i < len(s); i++ {
			switch s[i] {
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return len(s)
	}
	if i := strings.IndexByte(s, ','); i >= 0 {
		return i
	}
	return len(s)
}

// unquote removes Go double quotes or backquotes around a marker value; a
// value that is not a valid Go string literal is kept as written.
func unquote(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && v[0] == '`' && v[len(v)-1] == '`' {
		return v[1 : len(v)-1]
	}
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
		return v[1 : len(v)-1]
	}
	return v
}

// description turns doc comment lines into paragraphs: marker lines are
// dropped, the lines of a paragraph joined with spaces.
func description(lines []string) []string {
	var paras []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			paras = append(paras, strings.Join(cur, " "))
			cur = nil
		}
	}
	for _, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case l == "":
			flush()
		case strings.HasPrefix(l, "+"):
			// A marker ends the paragraph before it: text after markers is a new thought.
			flush()
		default:
			cur = append(cur, l)
		}
	}
	flush()
	return paras
}

// requirement is "Required" or "Optional" following controller-gen's rules:
// explicit markers win, otherwise omitempty makes a field optional.
func requirement(ms []marker, tag jsonTag) string {
	for _, m := range ms {
		switch m.Name {
		case "optional", "kubebuilder:validation:Optional":
			return "Optional"
		case "required", "kubebuilder:validation:Required":
			return "Required"
		}
	}
	if tag.OmitEmpty {
		return "Optional"
	}
	return "Required"
}

// defaultValue is the +kubebuilder:default value, or "".
func defaultValue(ms []marker) string {
	for _, m := range ms {
		if m.Name == "kubebuilder:default" {
			return m.Value
		}
	}
	return ""
}

// validations renders the validation markers of a field (or type), in order.
func validations(ms []marker) []string {
	var out []string
	mapKeys := []string{}
	for _, m := range ms {
		if m.Name == "listMapKey" {
			mapKeys = append(mapKeys, code(m.Value))
		}
	}
	for _, m := range ms {
		switch {
		case m.Name == "kubebuilder:validation:XValidation":
			s := "Rule: " + code(m.Args["rule"])
			if msg := m.Args["message"]; msg != "" {
				s += " — " + escapeText(msg)
			}
			out = append(out, s)
		case m.Name == "listType" && m.Value == "set":
			out = append(out, "Unique items")
		case m.Name == "listType" && m.Value == "map":
			out = append(out, "Unique by "+strings.Join(mapKeys, ", "))
		case strings.HasPrefix(m.Name, "kubebuilder:validation:items:"):
			if s := validationRule(strings.TrimPrefix(m.Name, "kubebuilder:validation:items:"), m.Value); s != "" {
				out = append(out, "Items: "+s)
			}
		case strings.HasPrefix(m.Name, "kubebuilder:validation:"):
			if s := validationRule(strings.TrimPrefix(m.Name, "kubebuilder:validation:"), m.Value); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// validationRule renders one value validation, or "" for markers that are not
// about the value (Optional, XIntOrString, ...).
func validationRule(kind, value string) string {
	switch kind {
	case "Enum":
		var vs []string
		for _, v := range strings.Split(value, ";") {
			vs = append(vs, code(unquote(v)))
		}
		return "Enum: " + strings.Join(vs, ", ")
	case "Pattern":
		return "Pattern: " + code(value)
	case "Format":
		return "Format: " + code(value)
	case "Minimum", "Maximum", "ExclusiveMinimum", "ExclusiveMaximum", "MultipleOf":
		return fmt.Sprintf("%s: %s", kind, value)
	case "MinLength":
		return "Min length: " + value
	case "MaxLength":
		return "Max length: " + value
	case "MinItems":
		return "Min items: " + value
	case "MaxItems":
		return "Max items: " + value
	case "MinProperties":
		return "Min properties: " + value
	case "MaxProperties":
		return "Max properties: " + value
	}
	return ""
}

// code renders s as a markdown code span that survives a table cell: the
// backtick fence is longer than any backtick run inside, and pipes are
// escaped as GitHub tables require even inside code.
func code(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + strings.ReplaceAll(s, "|", `\|`) + pad + fence
}

// escapeText makes prose safe in a markdown table cell: pipes would end the
// cell, "<" would start HTML and a "*" (as in "*.example.com") could start
// emphasis.
func escapeText(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "*", `\*`).Replace(s)
}
