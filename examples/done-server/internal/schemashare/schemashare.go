// Package schemashare keeps the schemas of a server's tools, one for each
// Go type, with their equal parts shared: one copy of each, as far as
// each schema stays a tree, as jsonschema-go requires of a schema (a
// part may not be twice in one schema, but may be in two). Inferred one
// by one, the schemas of many tools repeat the same parts (a task's
// schema in the results of a dozen tools, "a string" in nearly all), each
// a struct of pointers mostly, which the collector marks again in every
// cycle. Nothing changes a schema once made: jsonschema-go resolves and
// checks against it without writing to it. See the README beside this
// file for what it buys, and where upstream would make it unneeded.
package schemashare

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Set holds the schemas of the tools of the servers that share it, one
// for each Go type, and go-sdk's resolved forms of them. It is safe for
// concurrent use. A process makes one, and gives it to each server it
// makes.
type Set struct {
	// Resolved holds the schemas as go-sdk resolves them to validate
	// arguments and results: give it to each server as its
	// [mcp.ServerOptions] SchemaCache, so that a schema is resolved once
	// in the process, not once a server.
	Resolved *mcp.SchemaCache

	mu     sync.Mutex
	byType map[reflect.Type]*jsonschema.Schema
	// byKey holds the parts of the schemas shared, by their key (see
	// partKeys); a part is listed as often as one schema holds it.
	byKey map[partKey][]*jsonschema.Schema
}

// New returns an empty Set.
func New() *Set {
	return &Set{Resolved: mcp.NewSchemaCache(), byType: map[reflect.Type]*jsonschema.Schema{}, byKey: map[partKey][]*jsonschema.Schema{}}
}

// Of returns the schema of t in s, made by infer the first time it is
// asked for and shared with those s holds already.
func (s *Set) Of(t reflect.Type, infer func() *jsonschema.Schema) *jsonschema.Schema {
	s.mu.Lock()
	if sc, ok := s.byType[t]; ok {
		s.mu.Unlock()
		return sc
	}
	s.mu.Unlock()
	// Inferred outside the lock: another call may infer t at the same
	// time, and the first one kept wins.
	sc := infer()
	s.mu.Lock()
	defer s.mu.Unlock()
	if kept, ok := s.byType[t]; ok {
		return kept
	}
	sc = s.share(sc)
	s.byType[t] = sc
	return sc
}

// All returns the schemas that s holds, by their type.
func (s *Set) All() map[reflect.Type]*jsonschema.Schema {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.byType)
}

// share returns root, or an equal schema, in which every part that
// another schema of s holds already is that part. s.mu is held.
func (s *Set) share(root *jsonschema.Schema) *jsonschema.Schema {
	used := map[*jsonschema.Schema]bool{} // the parts root holds
	// Computed again at each call, not kept: a key costs little, and kept
	// keys would keep what they name alive, the parts of root not kept too.
	keys := partKeys{}
	var visit func(p *jsonschema.Schema) *jsonschema.Schema
	visit = func(p *jsonschema.Schema) *jsonschema.Schema {
		for _, q := range s.byKey[keys.of(p)] {
			if !holdsAny(q, used) {
				EachPart(q, func(q *jsonschema.Schema) { used[q] = true })
				return q
			}
		}
		used[p] = true
		replaceChildren(p, visit)
		return p
	}
	root = visit(root)
	EachPart(root, func(p *jsonschema.Schema) {
		k := keys.of(p)
		if list := s.byKey[k]; !slices.Contains(list, p) {
			s.byKey[k] = append(list, p)
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
	EachPart(s, func(p *jsonschema.Schema) { found = found || set[p] })
	return found
}

// EachPart calls f with s and each of its parts, at any depth.
func EachPart(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	f(s)
	replaceChildren(s, func(c *jsonschema.Schema) *jsonschema.Schema {
		EachPart(c, f)
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
