package main

import (
	"bufio"
	"cmp"
	"os"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

// specRow is one tool of testdata/tools.tsv, the specification of Done's
// tools (a copy of the design's done/tools.tsv).
type specRow struct {
	name, group                              string
	read, destructive, idempotent, openWorld bool
}

func readSpec(t *testing.T) []specRow {
	t.Helper()
	f, err := os.Open("testdata/tools.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []specRow
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for line := 2; sc.Scan(); line++ {
		f := strings.Split(sc.Text(), "\t")
		if len(f) != 7 {
			t.Fatalf("tools.tsv:%d: %d fields, want 7", line, len(f))
		}
		yes := func(i int) bool {
			if f[i] != "yes" && f[i] != "no" {
				t.Fatalf("tools.tsv:%d: field %d is %q, want yes or no", line, i+1, f[i])
			}
			return f[i] == "yes"
		}
		if f[2] != "read" && f[2] != "write" {
			t.Fatalf("tools.tsv:%d: effect %q, want read or write", line, f[2])
		}
		rows = append(rows, specRow{f[0], f[1], f[2] == "read", yes(3), yes(4), yes(5)})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// toolCounts counts tools by effect. The counts are never written out by
// hand: they come from the registry, or from the specification to hold the
// registry against.
type toolCounts struct {
	Tools, Reads, Writes               int
	Destructive, DestructiveIdempotent int
	NonDestructive, AdditiveIdempotent int
	OpenWorld                          int
}

func (c *toolCounts) add(read, destructive, idempotent, openWorld bool) {
	c.Tools++
	switch {
	case read:
		c.Reads++
	case destructive:
		c.Writes++
		c.Destructive++
		if idempotent {
			c.DestructiveIdempotent++
		}
	default:
		c.Writes++
		c.NonDestructive++
		if idempotent {
			c.AdditiveIdempotent++
		}
	}
	if openWorld {
		c.OpenWorld++
	}
}

// registryCounts counts the tools of r.
func registryCounts(r *mcpeffect.Registry) toolCounts {
	var c toolCounts
	for _, e := range r.All() {
		has := func(flag mcpeffect.Effect) bool { return e&flag == flag }
		c.add(has(mcpeffect.Read), has(mcpeffect.Destructive), has(mcpeffect.Idempotent), has(mcpeffect.OpenWorld))
	}
	return c
}

// TestToolsMatchSpec holds what the server advertises in tools/list, the
// names and the four hints of each tool, against the specification.
func TestToolsMatchSpec(t *testing.T) {
	rows := readSpec(t)
	var spec toolCounts
	for _, r := range rows {
		spec.add(r.read, r.destructive, r.idempotent, r.openWorld)
	}

	e := newEnv(t)
	cs := e.connect(e.mint("alice", store.Human, mcpeffect.ReadOnly))
	listed := map[string]bool{}
	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		listed[tool.Name] = true
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			t.Errorf("%s: annotations %+v are missing hints", tool.Name, a)
		}
		if strings.TrimSpace(tool.Description) == "" {
			t.Errorf("%s: no description", tool.Name)
		}
	}

	byName := map[string]specRow{}
	for _, r := range rows {
		byName[r.name] = r
		if !listed[r.name] {
			t.Errorf("%s (group %s) is in the specification but not on the server", r.name, r.group)
		}
	}

	for tool, err := range cs.Tools(t.Context(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		r, ok := byName[tool.Name]
		if !ok {
			t.Errorf("%s is on the server but not in the specification", tool.Name)
			continue
		}
		a := tool.Annotations
		if a == nil || a.DestructiveHint == nil || a.OpenWorldHint == nil {
			continue // reported above
		}
		want := specRow{r.name, r.group, r.read, r.destructive, r.idempotent, r.openWorld}
		got := specRow{tool.Name, r.group, a.ReadOnlyHint, *a.DestructiveHint, a.IdempotentHint, *a.OpenWorldHint}
		if got != want {
			t.Errorf("%s: hints readOnly=%t destructive=%t idempotent=%t openWorld=%t, the specification says %t %t %t %t",
				tool.Name, got.read, got.destructive, got.idempotent, got.openWorld, want.read, want.destructive, want.idempotent, want.openWorld)
		}
		// The hints come from the registry, which also decides who may
		// call: check that the two agree as well.
		if e, ok := e.registry.Effect(tool.Name); !ok || (e&mcpeffect.Read != 0) != r.read {
			t.Errorf("%s: registry effect %v (classified %t) disagrees with the specification", tool.Name, e, ok)
		}
	}
	if len(listed) != len(rows) || e.registry.Len() != len(rows) {
		t.Errorf("the server lists %d tools and classifies %d, want %d", len(listed), e.registry.Len(), len(rows))
	}
	if got := registryCounts(e.registry); got != spec {
		t.Errorf("the registry counts %+v, the specification %+v", got, spec)
	}
}

// TestToolTitles holds every tool to a title for people, as app
// directories require (Claude's rejects a tool without one): a few words,
// capitalised, without a final period, none shared by two tools, and the
// same in the tool's title and in its annotations, where clients of the
// 2025-03-26 protocol, which had no other, find it.
func TestToolTitles(t *testing.T) {
	e := newEnv(t)
	secret := e.mint("alice", store.Human, mcpeffect.ReadOnly)
	for _, version := range []string{"", "2025-11-25", "2025-03-26"} {
		t.Run("protocol "+cmp.Or(version, "default"), func(t *testing.T) {
			cs := connectServer(t, e, e.server, secret, nil, version)
			seen := map[string]string{}
			n := 0
			for tool, err := range cs.Tools(t.Context(), nil) {
				if err != nil {
					t.Fatal(err)
				}
				n++
				title := tool.Title
				switch first, _ := utf8.DecodeRuneInString(title); {
				case tool.Annotations == nil || tool.Annotations.Title != title:
					t.Errorf("%s: title %q, annotations %+v: want the same title in both", tool.Name, title, tool.Annotations)
				case strings.TrimSpace(title) != title || title == "" || utf8.RuneCountInString(title) > 32:
					t.Errorf("%s: title %q: want 1 to 32 characters, not padded", tool.Name, title)
				case !unicode.IsUpper(first) || strings.HasSuffix(title, "."):
					t.Errorf("%s: title %q: want it capitalised, without a final period", tool.Name, title)
				case seen[title] != "":
					t.Errorf("%s and %s share the title %q", seen[title], tool.Name, title)
				}
				seen[title] = tool.Name
			}
			if n != e.registry.Len() {
				t.Errorf("%d tools listed, %d classified", n, e.registry.Len())
			}
		})
	}
}
