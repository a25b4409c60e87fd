package manifest

import (
	"fmt"
	"strconv"
	"strings"
)

// A Change is one way in which the tools of a server differ from a
// manifest written before: a tool added, removed, or whose definition
// changed.
type Change struct {
	Tool string
	// Kind is "added", "removed" or "changed".
	Kind string
	// Parts names, for a tool changed, the parts of its definition that
	// changed ([Digests.Changed]); "definition" when the manifest has no
	// digests to tell them apart.
	Parts []string
}

// String says what changed, for people: `tool "pods": its description
// changed`.
func (c Change) String() string {
	name := "tool " + strconv.Quote(c.Tool)
	switch c.Kind {
	case "added":
		return name + ": added: the manifest does not list it"
	case "removed":
		return name + ": removed: the manifest lists it, the server no longer does"
	}
	return fmt.Sprintf("%s: its %s changed since the manifest was written", name, strings.Join(c.Parts, ", "))
}

// Changes returns how the tools of now, a manifest written from a server
// as it is, differ from those of m, by their content hashes: each tool of
// m that now lacks or whose hash differs, then each tool of now that m
// lacks, in the order of each manifest. A tool of m without a content
// hash (a manifest of a registry) is compared by its effect and outcomes
// alone.
func (m *Manifest) Changes(now *Manifest) []Change {
	var out []Change
	for _, old := range m.Tools {
		cur := now.Tool(old.Name)
		switch {
		case cur == nil:
			out = append(out, Change{Tool: old.Name, Kind: "removed"})
		case old.ContentHash == "":
			if old.Effect != cur.Effect || !sameOutcomes(old, *cur) {
				out = append(out, Change{Tool: old.Name, Kind: "changed", Parts: []string{"effect"}})
			}
		case old.ContentHash != cur.ContentHash:
			parts := old.Digests.Changed(cur.Digests)
			if old.Digests == nil || len(parts) == 0 {
				parts = []string{"definition"}
			}
			out = append(out, Change{Tool: old.Name, Kind: "changed", Parts: parts})
		}
	}
	for _, cur := range now.Tools {
		if m.Tool(cur.Name) == nil {
			out = append(out, Change{Tool: cur.Name, Kind: "added"})
		}
	}
	return out
}

func sameOutcomes(a, b Tool) bool {
	if a.Argument != b.Argument || len(a.Outcomes) != len(b.Outcomes) {
		return false
	}
	for i := range a.Outcomes {
		if a.Outcomes[i].Value != b.Outcomes[i].Value || a.Outcomes[i].Effect != b.Outcomes[i].Effect {
			return false
		}
	}
	return true
}
