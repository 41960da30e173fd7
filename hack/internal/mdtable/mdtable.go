// Package mdtable reads the rows of the Markdown tables the API reference
// (Documentation/api.md) is made of, for the tools that complete it and the
// tests that check it.
package mdtable

import "strings"

// Cells splits a table row at its unescaped pipes into trimmed cells,
// keeping escaped pipes (\|) inside a cell; the text before the first pipe
// and after the last is not a cell. A line without a pipe has none.
func Cells(line string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteString(`\|`)
			i++
		case line[i] == '|':
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out[1:]
}
