package mcpeffect

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestWorstOfIsTheTightestBound: for every set of one to three valid
// effects, each effect is within the worst case, and the worst case is
// within every bound that holds them all, so it asks no more of hosts
// than it must.
func TestWorstOfIsTheTightestBound(t *testing.T) {
	if len(validEffects) != 10 {
		t.Fatalf("%d valid effects, want 10", len(validEffects))
	}
	var sets [][]Effect
	for i, a := range validEffects {
		sets = append(sets, []Effect{a})
		for j, b := range validEffects[i:] {
			sets = append(sets, []Effect{a, b})
			for _, c := range validEffects[i+j:] {
				sets = append(sets, []Effect{a, b, c})
			}
		}
	}
	for _, set := range sets {
		w := worstOf(set)
		if !w.Valid() {
			t.Fatalf("worstOf(%v) = %s, not valid", set, w)
		}
		for _, e := range set {
			if !e.Within(w) {
				t.Errorf("worstOf(%v) = %s, but %s is not within it", set, w, e)
			}
			if !w.Required().atLeast(e.Required()) {
				t.Errorf("worstOf(%v) = %s needs less scope than %s", set, w, e)
			}
		}
		for _, bound := range validEffects {
			if !slices.ContainsFunc(set, func(e Effect) bool { return !e.Within(bound) }) && !w.Within(bound) {
				t.Errorf("worstOf(%v) = %s is not within %s, which bounds every effect of the set", set, w, bound)
			}
		}
	}
	if worstOf(nil) != 0 {
		t.Errorf("worstOf(nil) = %s, want none", worstOf(nil))
	}
}

// TestWithinIsTheResolutionBound holds Effect.Within to the conservative bound
// of the tool-resolution extension, written in terms of the hints.
func TestWithinIsTheResolutionBound(t *testing.T) {
	for _, w := range validEffects {
		for _, e := range validEffects {
			sa, ra := w.Annotations(), e.Annotations()
			want := true
			if sa.ReadOnlyHint && !ra.ReadOnlyHint {
				want = false
			}
			if !*sa.DestructiveHint && !sa.ReadOnlyHint && *ra.DestructiveHint {
				want = false
			}
			if sa.IdempotentHint && !ra.ReadOnlyHint && !ra.IdempotentHint {
				want = false
			}
			if !*sa.OpenWorldHint && *ra.OpenWorldHint {
				want = false
			}
			if got := e.Within(w); got != want {
				t.Errorf("%s.Within(%s) = %t, the bound says %t", e, w, got, want)
			}
		}
	}
}

func TestSelectorValue(t *testing.T) {
	for _, tt := range []struct {
		args string
		want string
		ok   bool
	}{
		{`{"action":"get"}`, "get", true},
		{` { "id" : 7 , "action" : "get" } `, "get", true},
		{`{"\u0061ction":"get"}`, "get", true},
		{`{"action":"g\u0065t"}`, "get", true},
		{`{"action":"get","Action":"delete"}`, "", false},
		{`{"ACTION":"get"}`, "", false},
		{`{"action":"get","action":"get"}`, "", false},
		{`{"action":"get","\u0061ction":"delete"}`, "", false},
		// The Kelvin sign folds to k: a case-insensitive decoder matches
		// it with "kind".
		{`{"kind":"a","\u212aind":"b"}`, "", false},
		{`{"action":5}`, "", false},
		{`{"action":null}`, "", false},
		{`{"action":["get"]}`, "", false},
		{`{}`, "", false},
		{``, "", false},
		{`null`, "", false},
		{`["action","get"]`, "", false},
		{`{"action":"get"`, "", false},
		{`{"nested":{"action":"delete"},"action":"get"}`, "get", true},
	} {
		arg := "action"
		if strings.Contains(tt.args, "kind") {
			arg = "kind"
		}
		got, ok := selectorValue(json.RawMessage(tt.args), arg)
		if got != tt.want || ok != tt.ok {
			t.Errorf("selectorValue(%s, %q) = %q, %t; want %q, %t", tt.args, arg, got, ok, tt.want, tt.ok)
		}
	}
}

type (
	common struct {
		Action string `json:"action"`
	}
	untagged struct {
		Action string
	}
	deep struct {
		common
		ID string `json:"id"`
	}
	byPointer struct {
		*common
	}
	optional struct {
		Action *string `json:"action,omitempty"`
	}
	named struct {
		Action actionName `json:"action"`
	}
	decodesItself struct {
		Action lowered `json:"action"`
	}
	quoted struct {
		Action string `json:"action,string"`
	}
	notString struct {
		Action int `json:"action"`
	}
	hidden struct {
		Action string `json:"-"`
	}
	otherCase struct {
		Action string `json:"Action"`
	}
)

// Embedded is exported for reflect.StructOf.
type Embedded struct {
	Action string `json:"action"`
}

// Other is exported for reflect.StructOf.
type Other struct {
	Action string `json:"action"`
}

type actionName string

type lowered string

func (l *lowered) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*l = lowered(strings.ToLower(s))
	return nil
}

func TestCompileSelector(t *testing.T) {
	get := "get"
	for _, tt := range []struct {
		name  string
		in    any // a value of the input type, holding "get" where it can
		err   string
		raw   bool
		value string
		ok    bool
	}{
		{"tagged field", common{"get"}, "", true, "get", true},
		{"untagged field", untagged{"get"}, "no field has the JSON name", false, "", false},
		{"embedded", deep{common: common{"get"}}, "", true, "get", true},
		{"through a nil pointer", byPointer{}, "", true, "", false},
		{"through a pointer", byPointer{&common{"get"}}, "", true, "get", true},
		{"pointer field nil", optional{}, "", true, "", false},
		{"pointer field", optional{&get}, "", true, "get", true},
		{"named string", named{"get"}, "", true, "get", true},
		{"decodes itself", decodesItself{"get"}, "", false, "get", true},
		{"string option", quoted{"get"}, "", false, "get", true},
		{"not a string", notString{}, "is a int, not a string", false, "", false},
		{"hidden", hidden{"get"}, "no field", false, "", false},
		{"other case", otherCase{"get"}, "no field", false, "", false},
		{"pointer to struct", &common{"get"}, "", true, "get", true},
		{"map", map[string]any{"action": "get"}, "", true, "get", true},
		{"map without it", map[string]any{"id": "1"}, "", true, "", false},
		{"map of another type", map[string]any{"action": 1.0}, "", true, "", false},
		{"map of strings", map[string]string{"action": "get"}, "", true, "get", true},
		{"map of ints", map[string]int{}, "string keys and string or interface values", false, "", false},
		{"slice", []string{}, "not a struct or a map", false, "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			typ := reflect.TypeOf(tt.in)
			sel, err := compileSelector(typ, "action")
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("compileSelector(%s) = %v, want an error containing %q", typ, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sel.raw != tt.raw {
				t.Errorf("raw = %t, want %t", sel.raw, tt.raw)
			}
			in := reflect.New(typ)
			in.Elem().Set(reflect.ValueOf(tt.in))
			v, ok := sel.value(in, "action")
			if v != tt.value || ok != tt.ok {
				t.Errorf("value = %q, %t; want %q, %t", v, ok, tt.value, tt.ok)
			}
		})
	}
	// The shallower field wins over one of an embedded struct. (The type is
	// made at run time: go vet rightly flags a JSON name given twice.)
	shadowed := reflect.StructOf([]reflect.StructField{
		{Name: "Embedded", Type: reflect.TypeFor[Embedded](), Anonymous: true},
		{Name: "Action", Type: reflect.TypeFor[string](), Tag: `json:"action"`},
	})
	sel, err := compileSelector(shadowed, "action")
	if err != nil {
		t.Fatal(err)
	}
	in := reflect.New(shadowed)
	in.Elem().Field(0).Field(0).SetString("delete")
	in.Elem().Field(1).SetString("get")
	if v, ok := sel.value(in, "action"); v != "get" || !ok {
		t.Errorf("shadowed: %q, %t", v, ok)
	}

	// Two fields of embedded structs at the same depth: JSON decoding
	// fills neither.
	ambiguous := reflect.StructOf([]reflect.StructField{
		{Name: "Embedded", Type: reflect.TypeFor[Embedded](), Anonymous: true},
		{Name: "Other", Type: reflect.TypeFor[Other](), Anonymous: true},
	})
	if _, err := compileSelector(ambiguous, "action"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("ambiguous: %v", err)
	}

	// An input of type any holds what go-sdk decodes an object into.
	sel, err = compileSelector(reflect.TypeFor[any](), "action")
	if err != nil {
		t.Fatal(err)
	}
	var dynamic any = map[string]any{"action": "get"}
	if v, ok := sel.value(reflect.ValueOf(&dynamic), "action"); v != "get" || !ok {
		t.Errorf("any: %q, %t", v, ok)
	}
}

// BenchmarkTypedRule is the wrapper's computation of a call's effect
// from the decoded input, in the common form.
func BenchmarkTypedRule(b *testing.B) {
	effectOf, _ := typedRule[common](EffectByArgument("action", map[string]Effect{"get": Read, "delete": Destructive}), nil)
	in := common{Action: "get"}
	b.ReportAllocs()
	for b.Loop() {
		if effectOf(in).effect != Read {
			b.Fatal("not a read")
		}
	}
}

// TestHintsWithinEveryHints holds Hints.Within, on all sixteen sets of
// explicit hints (contradictory ones included, as a server may send
// them), to the conservative bound of the tool-resolution extension
// written in terms of the hints.
func TestHintsWithinEveryHints(t *testing.T) {
	var all []Hints
	for bits := range 16 {
		all = append(all, Hints{ReadOnlyHint: bits&1 != 0, DestructiveHint: bits&2 != 0, IdempotentHint: bits&4 != 0, OpenWorldHint: bits&8 != 0})
	}
	for _, bound := range all {
		for _, h := range all {
			want := !(bound.ReadOnlyHint && !h.ReadOnlyHint) &&
				!(!bound.ReadOnlyHint && !bound.DestructiveHint && !h.ReadOnlyHint && h.DestructiveHint) &&
				!(bound.IdempotentHint && !h.ReadOnlyHint && !h.IdempotentHint) &&
				!(!bound.OpenWorldHint && h.OpenWorldHint)
			if got := h.Within(bound); got != want {
				t.Errorf("%+v.Within(%+v) = %t, the bound says %t", h, bound, got, want)
			}
		}
	}
}
