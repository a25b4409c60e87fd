package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"runtime"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestSchemasShared: the schemas of Done's tools hold one copy of each
// equal part (see share), each is still a tree that jsonschema-go
// resolves, and sharing changed no schema's JSON.
func TestSchemasShared(t *testing.T) {
	inferred := toolSchemas(t, false)
	shared := toolSchemas(t, true)
	if len(shared) < 84 || len(shared) != len(inferred) {
		t.Fatalf("%d schemas shared, %d inferred: want as many, at least one a tool", len(shared), len(inferred))
	}
	parts, distinct := 0, map[*jsonschema.Schema]bool{}
	for typ, root := range shared {
		if _, err := root.Resolve(nil); err != nil {
			t.Errorf("%v: %v", typ, err) // a part twice in one schema
		}
		eachPart(root, func(p *jsonschema.Schema) {
			parts++
			distinct[p] = true
		})
		js, err := json.Marshal(root)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(inferred[typ])
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

// toolSchemas returns the schemas of the tools of a new server, made
// anew, shared or as jsonschema-go infers them, by their Go type.
func toolSchemas(t *testing.T, shared bool) map[reflect.Type]*jsonschema.Schema {
	t.Helper()
	defer freshSchemas(shared)()
	d := newDone(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), config{})
	d.newToolServer()
	out := map[reflect.Type]*jsonschema.Schema{}
	schemas.Range(func(typ, s any) bool {
		out[typ.(reflect.Type)] = s.(*jsonschema.Schema)
		return true
	})
	return out
}

// freshSchemas makes schemaFor infer every schema anew, and share them
// or not, until the function it returns is called.
func freshSchemas(shared bool) (restore func()) {
	clear := func() {
		schemas.Clear()
		sharedParts.Lock()
		sharedParts.byKey = nil
		sharedParts.Unlock()
	}
	clear()
	was := dontShareSchemas.Swap(!shared)
	return func() {
		dontShareSchemas.Store(was)
		clear()
	}
}

// BenchmarkSchemasHeap reports the live heap that one server's tools
// hold, their schemas most of it: heap-bytes, with the schemas shared
// (see share) and, for comparison, as jsonschema-go infers them.
func BenchmarkSchemasHeap(b *testing.B) {
	for _, shared := range []bool{true, false} {
		name := map[bool]string{true: "shared", false: "inferred"}[shared]
		b.Run(name, func(b *testing.B) {
			var heap uint64
			for range b.N {
				heap += toolServerHeap(shared)
			}
			b.ReportMetric(float64(heap)/float64(b.N), "heap-bytes")
		})
	}
}

// toolServerHeap returns the live heap that a new server of Done's tools
// holds, with its schemas shared or not, made anew for it.
func toolServerHeap(shared bool) uint64 {
	defer freshSchemas(shared)()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	d := newDone(nil, slog.New(slog.NewTextHandler(io.Discard, nil)), config{})
	server, registry := d.newToolServer()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(server)
	runtime.KeepAlive(registry)
	return after.HeapAlloc - before.HeapAlloc
}
