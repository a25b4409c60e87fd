package host

import (
	"fmt"
	"strings"

	"github.com/mcpeffect/mcpeffect"
)

// An Action is what a host does with a call to a tool: run it, ask a
// person first, or refuse it. (The server's own decision, which refuses
// what a credential may not call, is [mcpeffect.Decision].)
type Action uint8

// The actions. The zero Action is Ask, the careful one.
const (
	// Ask has a person confirm the call before it is sent.
	Ask Action = iota
	// Allow sends the call without asking.
	Allow
	// Deny refuses the call without sending it.
	Deny
)

var actionNames = [...]string{"ask", "allow", "deny"}

// String returns "ask", "allow" or "deny": the form [ParseAction] reads.
func (d Action) String() string {
	if int(d) < len(actionNames) {
		return actionNames[d]
	}
	return fmt.Sprintf("Action(%d)", uint8(d))
}

// ParseAction parses "ask", "allow" or "deny", in any case.
func ParseAction(text string) (Action, error) {
	for i, name := range actionNames {
		if strings.EqualFold(text, name) {
			return Action(i), nil
		}
	}
	return 0, fmt.Errorf("mcpeffect: unknown action %q (want ask, allow or deny)", text)
}

// MarshalText implements [encoding.TextMarshaler].
func (d Action) MarshalText() ([]byte, error) {
	if d > Deny {
		return nil, fmt.Errorf("mcpeffect: cannot marshal invalid action %d", uint8(d))
	}
	return []byte(d.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler] with [ParseAction].
func (d *Action) UnmarshalText(text []byte) error {
	v, err := ParseAction(string(text))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// A Policy decides, from the hints a server declares for a tool and from
// whether the server is trusted, whether a host sends a call to the tool
// without asking, asks a person first, or refuses it. A hint the server
// left out counts as its worst case, as in [Declared.Effect].
//
// The zero Policy is the careful default, the one hosts follow: the hints
// of a server that is not trusted approve nothing, so every call to it is
// asked about; with Trusted, reads run without asking and writes are asked
// about, destructive ones always:
//
//	hints amount to          not trusted   trusted
//	read                     ask           allow
//	write                    ask           ask
//	idempotent write         ask           ask, or allow with AllowIdempotentWrites
//	destructive write        ask           ask
//
// (an idempotent write here is one that is not destructive). With
// DenyOpenWorldWrites, a write that may reach an open world is refused,
// trusted or not; and Tools sets the decision for the tools it names,
// whatever their hints.
//
// [NewApprover] applies a Policy to the calls of a go-sdk client.
type Policy struct {
	// Trusted says that the server's hints are believed. The MCP
	// specification tells clients never to decide from the annotations
	// of a server they do not trust, so without it every call asks.
	Trusted bool

	// AllowIdempotentWrites lets writes that are idempotent and not
	// destructive run without asking, when the server is trusted:
	// repeating them changes nothing more, and they overwrite nothing.
	AllowIdempotentWrites bool

	// DenyOpenWorldWrites refuses every write that may reach outside the
	// server's own data (a message sent, a post published), whether the
	// server is trusted or not. A write without openWorldHint may.
	DenyOpenWorldWrites bool

	// Tools sets the decision for the tools it names, whatever their
	// hints and the rules above: Allow for a tool that a person approved
	// for good, Deny for one never to be called. A value other than Ask,
	// Allow or Deny counts as Deny.
	Tools map[string]Action

	// AskAfterOpenWorld makes an [Approver] remember, for each session,
	// whether a call to an open-world tool has come back (a web page, a
	// document from outside, which may carry instructions written by
	// someone else); from then on it asks before every write and every
	// open-world call in that session, even one the rules above, or
	// Tools, would allow. A tool without openWorldHint may reach an open
	// world. It is off by default. A new session starts clean, and
	// [Approver.ClearTaint] forgets; ActionFor, which knows nothing of
	// sessions, does not apply it. Each Approver knows only its own
	// server's sessions: output that reached the model through another
	// server does not count.
	AskAfterOpenWorld bool

	// ResolveCalls has an [Approver] decide a call of a tool that the
	// server marks resolvable from the hints of that call, which it asks
	// the server for first with the experimental tool-resolution
	// extension ([resolution.Extension]; the client must be
	// prepared with [EnableToolResolution]), instead of the tool's static
	// hints, which are the worst case of its calls. Resolved hints are
	// used only if they are complete and no less careful than the static
	// ones, as the extension requires; otherwise, and whenever resolution
	// fails, the static hints decide.
	ResolveCalls bool
}

// ActionFor returns what a host does with a call to the tool called name,
// whose server declared hints h. Hints a server left out are nil, as
// [ParseDeclared] and [DeclaredOf] give them; a tool the server did not list has
// none at all.
func (p Policy) ActionFor(name string, h Declared) Action {
	d, _ := p.actionFor(name, h)
	return d
}

// actionFor is [Policy.ActionFor], with the reason for the action in a few
// words, for people: "it is destructive".
func (p Policy) actionFor(name string, h Declared) (Action, string) {
	if d, ok := p.Tools[name]; ok {
		if d > Deny {
			d = Deny
		}
		return d, "the policy names this tool: " + d.String()
	}
	e := h.Effect()
	write := e&mcpeffect.Write != 0
	if p.DenyOpenWorldWrites && write && e&mcpeffect.OpenWorld != 0 {
		return Deny, "it is a write that may reach an open world" + missing(h.OpenWorld, "openWorldHint")
	}
	if !p.Trusted {
		return Ask, "the server is not trusted, so its hints cannot approve a call"
	}
	switch {
	case h.Contradictory():
		return Ask, "its hints say both read-only and destructive"
	case e&mcpeffect.Destructive == mcpeffect.Destructive:
		return Ask, "it is destructive" + missing(h.Destructive, "destructiveHint")
	case !write:
		return Allow, "it is a read, and the server is trusted"
	case p.AllowIdempotentWrites && e&mcpeffect.Idempotent == mcpeffect.Idempotent:
		return Allow, "it is an idempotent write that destroys nothing, and the server is trusted"
	}
	return Ask, "it is a write" + missing(h.ReadOnly, "readOnlyHint")
}

// missing returns a note that hint was left out, or "" if it is set.
func missing(hint *bool, name string) string {
	if hint != nil {
		return ""
	}
	return " (" + name + " missing)"
}
