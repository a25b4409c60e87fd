package schemashare

import (
	"encoding/json"
	"reflect"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type task struct {
	ID    string   `json:"id"`
	Title string   `json:"title"`
	Tags  []string `json:"tags"`
}

type page struct {
	Tasks []task `json:"tasks"`
	Next  string `json:"next"`
}

type detail struct {
	Task     task   `json:"task"`
	Parent   task   `json:"parent"`
	Comments []task `json:"comments"`
}

func infer[T any]() func() *jsonschema.Schema {
	return func() *jsonschema.Schema {
		s, err := jsonschema.For[T](nil)
		if err != nil {
			panic(err)
		}
		return s
	}
}

// TestOf: a Set makes each type's schema once, shares the equal parts of
// the schemas it holds without a part twice in one schema, and changes no
// schema's JSON; calls at once agree on one schema a type.
func TestOf(t *testing.T) {
	s := New()
	types := map[reflect.Type]func() *jsonschema.Schema{
		reflect.TypeFor[task]():   infer[task](),
		reflect.TypeFor[page]():   infer[page](),
		reflect.TypeFor[detail](): infer[detail](),
	}
	var wg sync.WaitGroup
	got := make(chan *jsonschema.Schema, 20)
	for range 20 {
		wg.Go(func() { got <- s.Of(reflect.TypeFor[detail](), types[reflect.TypeFor[detail]()]) })
	}
	wg.Wait()
	close(got)
	first := <-got
	for g := range got {
		if g != first {
			t.Fatal("two schemas of one type")
		}
	}
	for typ, f := range types {
		s.Of(typ, f)
	}
	all := s.All()
	if len(all) != 3 {
		t.Fatalf("%d schemas held, want 3", len(all))
	}
	parts, distinct := 0, map[*jsonschema.Schema]bool{}
	for typ, root := range all {
		if _, err := root.Resolve(nil); err != nil {
			t.Errorf("%v: %v (a part twice in one schema?)", typ, err)
		}
		js, _ := json.Marshal(root)
		want, _ := json.Marshal(types[typ]())
		if string(js) != string(want) {
			t.Errorf("%v: %s, want as inferred %s", typ, js, want)
		}
		EachPart(root, func(p *jsonschema.Schema) {
			parts++
			distinct[p] = true
		})
	}
	if len(distinct) >= parts {
		t.Errorf("%d parts, %d distinct: none shared", parts, len(distinct))
	}
	// detail holds task twice: the two are equal, and not one part.
	d := all[reflect.TypeFor[detail]()]
	if d.Properties["task"] == d.Properties["parent"] {
		t.Error("one part twice in one schema")
	}
	held := false
	EachPart(d, func(p *jsonschema.Schema) { held = held || p == all[reflect.TypeFor[task]()] })
	if !held {
		t.Error("task's schema, made after detail's, is none of detail's parts")
	}
}
