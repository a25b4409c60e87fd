package host

import (
	"strings"
	"sync"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// What an Approver remembers beyond a single call: the pins of the tools
// it approved, and the sessions that have taken in the output of an
// open-world tool.

// Pins returns the pins of the tools whose calls a approved: where a
// pinned tool's definition has changed since, a asks again even where its
// policy allows the call. They are a's own, and live as long as a does,
// across sessions; save them as JSON to remember between runs of the
// host, and read them back before the first call (see [Pins]).
func (a *Approver) Pins() *Pins { return a.pins }

// Tainted reports whether session s has taken in the output of an
// open-world tool, with the name of the first such tool. Only an Approver
// whose policy has AskAfterOpenWorld keeps track.
func (a *Approver) Tainted(s *mcp.ClientSession) (tool string, ok bool) {
	return a.taint.of(s)
}

// ClearTaint forgets that session s has taken in the output of an
// open-world tool, or, if s is nil, that any session has: for a host
// whose person has seen what came in, or that has started afresh (a new
// conversation on the same session). A new session starts clean in any
// case.
func (a *Approver) ClearTaint(s *mcp.ClientSession) {
	a.taint.clear(s)
}

// recall returns decision d, with its reason, made [Ask] where what a
// remembers calls for it: the definition of the tool changed since it was
// approved (the parts that changed are returned), or, with the policy's
// AskAfterOpenWorld, the session has taken in the output of an open-world
// tool and this call writes or may reach an open world. A denial stays a
// denial.
func (a *Approver) recall(s *mcp.ClientSession, name string, tool *mcp.Tool, h Declared, d Action, reason string) (Action, string, []string) {
	if d == Deny {
		return d, reason, nil
	}
	var changed []string
	if pin, ok := a.pins.Get(name); ok && tool != nil {
		changed = pin.Changed(PinOf(tool))
	}
	var why []string
	if len(changed) > 0 {
		why = append(why, "its "+strings.Join(changed, ", ")+" changed since it was approved")
	}
	e := h.Effect()
	if source, ok := a.taint.of(s); ok && a.policy.AskAfterOpenWorld && (e&mcpeffect.Write != 0 || e&mcpeffect.OpenWorld != 0) {
		why = append(why, "the session has taken in the output of open-world tool "+quote(source)+", which may carry instructions written by someone else")
	}
	if len(why) == 0 {
		return d, reason, nil
	}
	if d == Allow {
		return Ask, strings.Join(why, "; and "), changed
	}
	return d, reason + "; and " + strings.Join(why, "; and "), changed
}

func quote(s string) string { return `"` + s + `"` }

// approved pins the definition of tool, called name, as approved. A tool
// the server does not list has nothing to pin.
func (a *Approver) approved(name string, tool *mcp.Tool) {
	if tool != nil {
		a.pins.Set(name, PinOf(tool))
	}
}

// sent records that a call to the tool called name, whose hints amount to
// effect e, was sent on session s: if the tool may reach an open world,
// whatever came back, result or error, may carry someone else's words.
func (a *Approver) sent(s *mcp.ClientSession, name string, e mcpeffect.Effect) {
	if a.policy.AskAfterOpenWorld && e&mcpeffect.OpenWorld != 0 {
		a.taint.mark(s, name)
	}
}

// taints holds, for each session, the first open-world tool whose output
// it took in. A session's entry goes when the session ends.
type taints struct {
	mu     sync.Mutex
	source map[*mcp.ClientSession]string
}

func (t *taints) of(s *mcp.ClientSession) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	source, ok := t.source[s]
	return source, ok
}

func (t *taints) mark(s *mcp.ClientSession, tool string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.source[s]; ok {
		return
	}
	if t.source == nil {
		t.source = make(map[*mcp.ClientSession]string)
	}
	t.source[s] = tool
	go func() {
		// A session that ended takes nothing more in, and its pointer
		// must not keep it in memory.
		s.Wait()
		t.mu.Lock()
		delete(t.source, s)
		t.mu.Unlock()
	}()
}

func (t *taints) clear(s *mcp.ClientSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if s == nil {
		clear(t.source)
		return
	}
	delete(t.source, s)
}
