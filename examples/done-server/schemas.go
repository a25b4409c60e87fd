package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// jsonschema-go infers the schema of a Go slice as {"type": ["null",
// "array"]}, since a nil slice marshals as null, and of a pointer as its
// element's with "null" added. Many clients read "type" only as one
// string, and the MCP Inspector warns about every such schema. So Done
// says "array" (and, for a pointer, its element's type), and keeps that
// promise: addTool gives each nil slice and map of a result as empty
// (see emptyNils) before go-sdk checks the result against the schema, and
// a pointer that may be nil is left out of the JSON (omitempty). Only a
// pointer field without omitempty, which marshals as null, keeps "null".

// nonNullable rewrites s, the schema that jsonschema-go inferred for t, as
// said above.
func nonNullable(t reflect.Type, s *jsonschema.Schema) {
	if s == nil {
		return
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	dropNull(s)
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		nonNullable(t.Elem(), s.Items)
	case reflect.Map:
		nonNullable(t.Elem(), s.AdditionalProperties)
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
				nonNullable(f.Type.Elem(), p)
				if p.Type != "" {
					p.Types, p.Type = []string{"null", p.Type}, ""
				}
				continue
			}
			nonNullable(f.Type, p)
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

// emptyNils makes each nil slice and map reachable from v, settable,
// empty, so that it marshals as [] or {}, as the schemas of nonNullable
// say. Pointers are followed; interfaces and the values of maps are not
// (Done's results hold no slice there).
func emptyNils(v reflect.Value) {
	if !holdsNils(v.Type()) {
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			emptyNils(v.Elem())
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				emptyNils(f)
			}
		}
	case reflect.Slice:
		if v.IsNil() {
			v.Set(reflect.MakeSlice(v.Type(), 0, 0))
			return
		}
		for i := range v.Len() {
			emptyNils(v.Index(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			emptyNils(v.Index(i))
		}
	case reflect.Map:
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
	}
}

// holdsNils reports whether a value of t may hold a slice or a map that
// emptyNils would fill, remembered for each type: most results hold
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

// Done's 84 tools have 168 schemas, their arguments' and their results'
// (of 103 types), inferred one by one: a task's schema is in the results
// of a dozen tools, and "a string" in nearly all of them, each as schemas
// of its own, and a schema is a struct of 792 bytes, pointers mostly. That was
// most of Done's live heap (1.9 of 2.1 MB), which the collector marks
// again in every cycle: over stdio, one call at a time, it took a few
// percent of each call's time, which a trivial server does not pay
// (BenchmarkStdioCall). So schemaFor gives each new schema to share,
// which makes the schemas of all the tools hold one copy of each equal
// part, as far as each stays a tree, as jsonschema-go requires of a
// schema (a part may not be twice in one schema, but may be in two).
// Nothing changes a schema once made: jsonschema-go resolves and checks
// against it without writing to it.

// sharedParts holds the parts of the schemas that share made, by their
// key (see partKeys); a part is listed as often as one schema holds it.
var sharedParts struct {
	sync.Mutex
	byKey map[partKey][]*jsonschema.Schema
}

// share returns root, or an equal schema, in which every part that
// another schema given to share holds already is that part.
func share(root *jsonschema.Schema) *jsonschema.Schema {
	sp := &sharedParts
	sp.Lock()
	defer sp.Unlock()
	if sp.byKey == nil {
		sp.byKey = map[partKey][]*jsonschema.Schema{}
	}
	used := map[*jsonschema.Schema]bool{} // the parts root holds
	// Computed again at each call, not kept: a key costs little, and kept
	// keys would keep what they name alive, the parts of root not kept too.
	keys := partKeys{}
	var visit func(s *jsonschema.Schema) *jsonschema.Schema
	visit = func(s *jsonschema.Schema) *jsonschema.Schema {
		for _, p := range sp.byKey[keys.of(s)] {
			if !holdsAny(p, used) {
				eachPart(p, func(p *jsonschema.Schema) { used[p] = true })
				return p
			}
		}
		used[s] = true
		replaceChildren(s, visit)
		return s
	}
	root = visit(root)
	eachPart(root, func(p *jsonschema.Schema) {
		k := keys.of(p)
		if list := sp.byKey[k]; !slices.Contains(list, p) {
			sp.byKey[k] = append(list, p)
		}
	})
	return root
}

// A partKey stands for the JSON of a schema: two schemas of one key
// marshal to the same JSON.
type partKey [sha256.Size]byte

// partKeys computes the key of each schema once, from its own fields and
// the keys of the schemas it holds, so that a part's key costs as much as
// the part alone, not as its whole subtree.
type partKeys map[*jsonschema.Schema]partKey

func (pk partKeys) of(s *jsonschema.Schema) partKey {
	if k, ok := pk[s]; ok {
		return k
	}
	h := sha256.New()
	own := *s // s without the schemas it holds
	v := reflect.ValueOf(&own).Elem()
	for _, f := range schemaFields {
		fv := v.Field(f.index)
		switch c := fv.Interface().(type) {
		case *jsonschema.Schema:
			if c != nil {
				k := pk.of(c)
				fmt.Fprintf(h, "%s:%x;", f.name, k)
			}
		case []*jsonschema.Schema:
			for i, c := range c {
				k := pk.of(c)
				fmt.Fprintf(h, "%s/%d:%x;", f.name, i, k)
			}
		case map[string]*jsonschema.Schema:
			for _, name := range slices.Sorted(maps.Keys(c)) {
				k := pk.of(c[name])
				fmt.Fprintf(h, "%s/%q:%x;", f.name, name, k)
			}
		}
		fv.SetZero()
	}
	// The order of the properties is not in the JSON of own, which has
	// none: it is in the key.
	fmt.Fprintf(h, "order:%q;", own.PropertyOrder)
	b, err := json.Marshal(&own)
	if err != nil {
		panic(err) // a schema that jsonschema-go inferred marshals
	}
	h.Write(b)
	var k partKey
	h.Sum(k[:0])
	pk[s] = k
	return k
}

// holdsAny reports whether s or one of its parts is in set.
func holdsAny(s *jsonschema.Schema, set map[*jsonschema.Schema]bool) bool {
	found := false
	eachPart(s, func(p *jsonschema.Schema) { found = found || set[p] })
	return found
}

// eachPart calls f with s and each of its parts, at any depth.
func eachPart(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	f(s)
	replaceChildren(s, func(c *jsonschema.Schema) *jsonschema.Schema {
		eachPart(c, f)
		return c
	})
}

// replaceChildren sets each schema that s holds directly (in any field:
// properties, items, additionalProperties, not...) to f of it.
func replaceChildren(s *jsonschema.Schema, f func(*jsonschema.Schema) *jsonschema.Schema) {
	v := reflect.ValueOf(s).Elem()
	for _, sf := range schemaFields {
		fv := v.Field(sf.index)
		switch c := fv.Interface().(type) {
		case *jsonschema.Schema:
			if c != nil {
				fv.Set(reflect.ValueOf(f(c)))
			}
		case []*jsonschema.Schema:
			for i := range c {
				c[i] = f(c[i])
			}
		case map[string]*jsonschema.Schema:
			for _, name := range slices.Sorted(maps.Keys(c)) {
				c[name] = f(c[name])
			}
		}
	}
}

// schemaFields are the fields of a schema that hold schemas.
var schemaFields = func() []struct {
	index int
	name  string
} {
	var fields []struct {
		index int
		name  string
	}
	t := reflect.TypeFor[jsonschema.Schema]()
	for i := range t.NumField() {
		switch t.Field(i).Type {
		case reflect.TypeFor[*jsonschema.Schema](), reflect.TypeFor[[]*jsonschema.Schema](), reflect.TypeFor[map[string]*jsonschema.Schema]():
			fields = append(fields, struct {
				index int
				name  string
			}{i, t.Field(i).Name})
		}
	}
	return fields
}()
