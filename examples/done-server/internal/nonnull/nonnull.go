// Package nonnull makes the schemas that jsonschema-go infers say one
// type where a value is never null, and keeps that promise in the
// results. jsonschema-go infers the schema of a Go slice as {"type":
// ["null", "array"]}, since a nil slice marshals as null, and of a
// pointer as its element's with "null" added. Many clients read "type"
// only as one string, and the MCP Inspector warns about every such
// schema. So [Rewrite] says "array" (and, for a pointer, its element's
// type), and [Fill] gives each nil slice and map of a result as empty
// before go-sdk checks the result against the schema; a pointer that may
// be nil is to be left out of the JSON (omitempty). Only a pointer field
// without omitempty, which marshals as null, keeps "null". See the
// README beside this file for where upstream would make it unneeded.
package nonnull

import (
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Rewrite rewrites s, the schema that jsonschema-go inferred for t, as
// the package says.
func Rewrite(t reflect.Type, s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	dropNull(s)
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		Rewrite(t.Elem(), s.Items)
	case reflect.Map:
		Rewrite(t.Elem(), s.AdditionalProperties)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			name, omitempty, ok := jsonField(f)
			if !ok {
				continue
			}
			p := s.Properties[name]
			if p == nil {
				continue
			}
			if f.Type.Kind() == reflect.Pointer && !omitempty {
				// A nil pointer marshals as null: the schema must allow it.
				Rewrite(f.Type.Elem(), p)
				if p.Type != "" {
					p.Types, p.Type = []string{"null", p.Type}, ""
				}
				continue
			}
			Rewrite(f.Type, p)
		}
	}
}

// dropNull removes "null" from the types of s, leaving one type as a
// plain string.
func dropNull(s *jsonschema.Schema) {
	if !slices.Contains(s.Types, "null") {
		return
	}
	types := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
	if len(types) == 1 {
		s.Type, s.Types = types[0], nil
		return
	}
	s.Types = types
}

// jsonField returns the JSON name of f as encoding/json marshals it, and
// whether it has omitempty; ok is false for a field that is not
// marshalled, or an embedded struct whose fields are promoted (and come
// as fields of their own in reflect.VisibleFields).
func jsonField(f reflect.StructField) (name string, omitempty, ok bool) {
	if !f.IsExported() {
		return "", false, false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if f.Anonymous && name == "" {
		return "", false, false
	}
	if name == "" {
		name = f.Name
	}
	return name, slices.Contains(strings.Split(opts, ","), "omitempty"), true
}

// Fill makes each nil slice and map reachable from v, settable, empty,
// so that it marshals as [] or {}, as the schemas of Rewrite say.
// Pointers are followed; interfaces and the values of maps are not (Done's
// results hold no slice there).
func Fill(v reflect.Value) {
	if !holdsNils(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			Fill(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				Fill(f)
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		for i := range v.Len() {
			Fill(v.Index(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			Fill(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
	}
}

// holdsNils reports whether a value of t may hold a slice or a map that
// Fill would fill, remembered for each type: most results hold
// some, but their many small parts (times, ids) need no walk.
func holdsNils(t reflect.Type) bool {
	if h, ok := nilHolders.Load(t); ok {
		return h.(bool)
	}
	h := holdsNilsOf(t, map[reflect.Type]bool{})
	nilHolders.Store(t, h)
	return h
}

var nilHolders sync.Map // reflect.Type -> bool

func holdsNilsOf(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Slice, reflect.Map:
		return true
	case reflect.Pointer, reflect.Array:
		return holdsNilsOf(t.Elem(), seen)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && holdsNilsOf(f.Type, seen) {
				return true
			}
		}
	}
	return false
}
