package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"runtime"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/schemashare"
)

// TestSchemasShared: the schemas of Done's tools hold one copy of each
// equal part (see [schemashare.Set]), each is still a tree that
// jsonschema-go resolves, and sharing changed no schema's JSON from the
// schema inferred on its own.
func TestSchemasShared(t *testing.T) {
	shared := toolSchemas(schemashare.New())
	if len(shared) < len(readSpec(t)) {
		t.Fatalf("%d schemas shared: want at least one a tool", len(shared))
	}
	parts, distinct := 0, map[*jsonschema.Schema]bool{}
	for typ, root := range shared {
		if _, err := root.Resolve(nil); err != nil {
			t.Errorf("%v: %v", typ, err) // a part twice in one schema
		}
		schemashare.EachPart(root, func(p *jsonschema.Schema) {
			parts++
			distinct[p] = true
		})
		js, err := json.Marshal(root)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(inferSchema(typ))
		if string(js) != string(want) {
			t.Errorf("%v: shared, its schema is\n%s\nwant, as inferred,\n%s", typ, js, want)
		}
	}
	// Without sharing, every part would be an object of its own.
	if len(distinct)*2 > parts {
		t.Errorf("%d parts in the tools' schemas, %d distinct: fewer than half are shared", parts, len(distinct))
	}
	t.Logf("%d schemas: %d parts, %d distinct", len(shared), parts, len(distinct))
}

// toolSchemas returns the schemas, by their Go type, of the tools of a
// new server whose schemas set holds.
func toolSchemas(set *schemashare.Set) map[reflect.Type]*jsonschema.Schema {
	d := newDone(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), config{schemas: set})
	d.newToolServer()
	return set.All()
}

// BenchmarkSchemasHeap reports the live heap that the schemas of Done's
// tools hold: heap-bytes, with their parts shared (see
// [schemashare.Set]) and, for comparison, as jsonschema-go infers them,
// each on its own.
func BenchmarkSchemasHeap(b *testing.B) {
	var types []reflect.Type
	for typ := range toolSchemas(schemashare.New()) {
		types = append(types, typ)
	}
	for _, shared := range []bool{true, false} {
		name := map[bool]string{true: "shared", false: "inferred"}[shared]
		b.Run(name, func(b *testing.B) {
			var heap uint64
			for range b.N {
				heap += schemasHeap(types, shared)
			}
			b.ReportMetric(float64(heap)/float64(b.N), "heap-bytes")
		})
	}
}

// schemasHeap returns the live heap that the schemas of types hold, made
// anew, in one Set or each on its own.
func schemasHeap(types []reflect.Type, shared bool) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	var kept any
	if shared {
		set := schemashare.New()
		for _, typ := range types {
			set.Of(typ, func() *jsonschema.Schema { return inferSchema(typ) })
		}
		kept = set
	} else {
		alone := map[reflect.Type]*jsonschema.Schema{}
		for _, typ := range types {
			alone[typ] = inferSchema(typ)
		}
		kept = alone
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return after.HeapAlloc - before.HeapAlloc
}
