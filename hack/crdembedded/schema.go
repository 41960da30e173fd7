package main

import (
	"fmt"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/utils/ptr"
)

// A change to one schema node; it fails when the node is not what the
// rules expect (Kubernetes renamed or retyped a field), so that a stale rule
// fails `make generate` rather than vanish.
type change func(*apiextensionsv1.JSONSchemaProps) error

// all applies every change in order.
func all(cs ...change) change {
	return func(s *apiextensionsv1.JSONSchemaProps) error {
		for _, c := range cs {
			if err := c(s); err != nil {
				return err
			}
		}
		return nil
	}
}

// at applies cs to the node at path below the node it is given: property
// names separated by dots, "[]" for a list's items, "{}" for a map's values.
func at(path string, cs ...change) change {
	return func(s *apiextensionsv1.JSONSchemaProps) error {
		if err := edit(s, strings.Split(path, "."), all(cs...)); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	}
}

func edit(s *apiextensionsv1.JSONSchemaProps, path []string, c change) error {
	if len(path) == 0 {
		return c(s)
	}
	switch path[0] {
	case "[]":
		if s.Items == nil || s.Items.Schema == nil {
			return fmt.Errorf("not a list")
		}
		return edit(s.Items.Schema, path[1:], c)
	case "{}":
		if s.AdditionalProperties == nil || s.AdditionalProperties.Schema == nil {
			return fmt.Errorf("not a map")
		}
		return edit(s.AdditionalProperties.Schema, path[1:], c)
	}
	child, ok := s.Properties[path[0]]
	if !ok {
		return fmt.Errorf("no property %q", path[0])
	}
	if err := edit(&child, path[1:], c); err != nil {
		return err
	}
	s.Properties[path[0]] = child
	return nil
}

func ofType(t string, c change) change {
	return func(s *apiextensionsv1.JSONSchemaProps) error {
		if s.Type != t {
			return fmt.Errorf("type %q, want %q", s.Type, t)
		}
		return c(s)
	}
}

func maxItems(n int64) change {
	return ofType("array", func(s *apiextensionsv1.JSONSchemaProps) error { s.MaxItems = ptr.To(n); return nil })
}

func minItems(n int64) change {
	return ofType("array", func(s *apiextensionsv1.JSONSchemaProps) error { s.MinItems = ptr.To(n); return nil })
}

func maxProperties(n int64) change {
	return ofType("object", func(s *apiextensionsv1.JSONSchemaProps) error { s.MaxProperties = ptr.To(n); return nil })
}

func maxLength(n int64) change {
	return ofType("string", func(s *apiextensionsv1.JSONSchemaProps) error { s.MaxLength = ptr.To(n); return nil })
}

func minLength(n int64) change {
	return ofType("string", func(s *apiextensionsv1.JSONSchemaProps) error { s.MinLength = ptr.To(n); return nil })
}

func pattern(p string) change {
	return ofType("string", func(s *apiextensionsv1.JSONSchemaProps) error { s.Pattern = p; return nil })
}

func between(lo, hi float64) change {
	return ofType("integer", func(s *apiextensionsv1.JSONSchemaProps) error {
		s.Minimum, s.Maximum = ptr.To(lo), ptr.To(hi)
		return nil
	})
}

func atLeast(lo float64) change {
	return ofType("integer", func(s *apiextensionsv1.JSONSchemaProps) error { s.Minimum = ptr.To(lo); return nil })
}

func enum(values ...string) change {
	return ofType("string", func(s *apiextensionsv1.JSONSchemaProps) error {
		s.Enum = nil
		for _, v := range values {
			s.Enum = append(s.Enum, apiextensionsv1.JSON{Raw: []byte(fmt.Sprintf("%q", v))})
		}
		return nil
	})
}

// rule adds a CEL rule with its message; the rule's field path in the
// apiserver's answer is the node's own.
func rule(expr, message string) change {
	return func(s *apiextensionsv1.JSONSchemaProps) error {
		s.XValidations = append(s.XValidations, apiextensionsv1.ValidationRule{Rule: expr, Message: message})
		return nil
	}
}
