package nonnull

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type inner struct {
	Tags []string `json:"tags"`
}

type result struct {
	Items   []inner           `json:"items"`
	ByName  map[string]string `json:"by_name"`
	Maybe   *inner            `json:"maybe,omitempty"`
	Nilable *inner            `json:"nilable"`
	Fixed   [2]inner          `json:"fixed"`
	hidden  []string
}

// TestRewrite: a slice, a map and an omitted pointer say one type; a
// pointer that marshals as null keeps "null", its element rewritten.
func TestRewrite(t *testing.T) {
	s, err := jsonschema.For[result](nil)
	if err != nil {
		t.Fatal(err)
	}
	Rewrite(reflect.TypeFor[result](), s)
	for name, want := range map[string]string{"items": "array", "by_name": "object", "maybe": "object", "fixed": "array"} {
		if p := s.Properties[name]; p.Type != want || len(p.Types) != 0 {
			t.Errorf("%s: type %q, types %q; want %q", name, p.Type, p.Types, want)
		}
	}
	if p := s.Properties["items"].Items.Properties["tags"]; p.Type != "array" {
		t.Errorf("items.tags: %+v", p)
	}
	if p := s.Properties["nilable"]; len(p.Types) != 2 || p.Types[0] != "null" || p.Properties["tags"].Type != "array" {
		t.Errorf("nilable: types %q, tags %+v; want null kept, its element rewritten", p.Types, p.Properties["tags"])
	}
}

// TestFill: every nil slice and map reachable marshals as [] or {}, and
// what is not nil, or not settable, is left as it is.
func TestFill(t *testing.T) {
	r := result{Items: []inner{{}}, Maybe: &inner{}}
	Fill(reflect.ValueOf(&r).Elem())
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"items":[{"tags":[]}],"by_name":{},"maybe":{"tags":[]},"nilable":null,"fixed":[{"tags":[]},{"tags":[]}]}`
	if string(js) != want {
		t.Errorf("filled:\n%s\nwant\n%s", js, want)
	}
	if r.hidden != nil {
		t.Error("an unexported field was filled")
	}
	// A type with nothing to fill is not walked, and stays as it is.
	n := 3
	Fill(reflect.ValueOf(&n).Elem())
	if n != 3 {
		t.Error("an int changed")
	}
}
