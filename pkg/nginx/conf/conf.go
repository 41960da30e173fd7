// Package conf is a tiny model of nginx configuration files: a tree of
// directives, an emitter (Render) and a parser (Parse) of the same grammar.
//
// It exists for one security property. The operator renders nginx.conf from
// a Kubernetes spec whose strings come from users, and ingress-nginx showed
// (CVE-2021-25742, CVE-2023-5044, CVE-2025-1974) what happens when such strings
// are pasted into a template: a value like `x; } server { ... ` adds
// directives and blocks of the attacker's choosing. Here the structure comes
// only from the Go tree, and every argument goes through Quote, which either
// produces a single nginx token that reads back as exactly the original string
// or refuses it. Whether an argument is semantically acceptable for its
// directive (variables, header values, paths, regexes) is validated elsewhere.
//
// The grammar follows nginx's tokenizer, ngx_conf_read_token in
// src/core/ngx_conf_file.c; parse.go describes its rules.
package conf

import "slices"

// Directive is one nginx directive: a name, its arguments, and for block
// directives (http, server, location, events, upstream, ...) the directives inside.
type Directive struct {
	Name  string
	Args  []string
	Block []Directive // nil: simple directive ending in ';'; non-nil (even empty): a block "{ ... }"
}

// D builds a simple directive.
func D(name string, args ...string) Directive {
	return Directive{Name: name, Args: args}
}

// B builds a block directive. Block is non-nil even without children, because
// nil is what marks a simple directive.
func B(name string, args []string, block ...Directive) Directive {
	if block == nil {
		block = []Directive{}
	}
	return Directive{Name: name, Args: args, Block: block}
}

// Equal tells whether two directive trees are the same: names and
// arguments alike (nil and empty arguments alike), and a block, even empty,
// never equal to a simple directive. It is what tests compare a rendered
// tree with the one nginx's syntax reads back by, without the reflection
// of cmp, which was most of their time; cmp still explains a difference.
func Equal(x, y []Directive) bool {
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].Name != y[i].Name || !slices.Equal(x[i].Args, y[i].Args) ||
			(x[i].Block == nil) != (y[i].Block == nil) || !Equal(x[i].Block, y[i].Block) {
			return false
		}
	}
	return true
}
