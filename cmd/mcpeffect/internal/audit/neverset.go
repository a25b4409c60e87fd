package audit

import (
	"fmt"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
	"github.com/mcpeffect/mcpeffect/host"
)

// RuleHintsNeverSet: every tool of a server of two tools or more declares
// exactly the worst case on all four hints, each explicitly: readOnlyHint
// false, destructiveHint true, idempotentHint false, openWorldHint true.
// Some SDKs preset the four hints so (mcp-go's mcp.NewTool does), and a
// server whose author never set them lists every tool that way; hosts
// that read hints then ask before every call of every tool. The hints are
// valid, and may be true, so it is a warning. One tool alone is left out:
// a single destructive, open-world write is as likely to mean it.
const RuleHintsNeverSet Rule = "hints-never-set"

// isWorstCase reports whether h declares each of the four hints, at its
// worst case.
func isWorstCase(h host.Declared) bool {
	return h.ReadOnly != nil && !*h.ReadOnly &&
		isTrue(h.Destructive) &&
		h.Idempotent != nil && !*h.Idempotent &&
		isTrue(h.OpenWorld)
}

// hintsNeverSet reports whether tools, two or more, all declare the worst
// case on every hint. A tool whose annotations cannot be read counts as
// not declaring it: [Review] fails on it anyway.
func hintsNeverSet(tools []connect.Listed) bool {
	if len(tools) < 2 {
		return false
	}
	for _, l := range tools {
		h, err := host.ParseDeclared(l.Annotations)
		if err != nil || !isWorstCase(h) {
			return false
		}
	}
	return true
}

// neverSetFinding is the finding of [RuleHintsNeverSet] for tool t of a
// server of n tools.
func neverSetFinding(t Tool, n int) Finding {
	return Finding{
		Tool:  t.Name,
		Level: RuleHintsNeverSet.Level(),
		Rule:  RuleHintsNeverSet,
		Message: fmt.Sprintf("declares the worst case on every hint (readOnlyHint false, destructiveHint true, idempotentHint false, openWorldHint true), as all %d tools of this server do: "+
			"the hints were probably never set (some SDKs preset them so, such as mcp-go's mcp.NewTool), and hosts that read them will ask before every call; set each tool's hints to what it does", n),
	}
}
