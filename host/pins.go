package host

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Pin records the definition of a tool as it was when a call to it was
// approved: a digest of each part of the definition a server can change
// under a host, so that the host can tell that the tool changed, and which
// part. A server that changes a tool after it was approved (a "rug pull":
// a read that becomes a write, a description that now tells the model to
// send files elsewhere) gets asked about again.
type Pin struct {
	Title       string `json:"title"`
	Description string `json:"description"`
	InputSchema string `json:"inputSchema"`
	Annotations string `json:"annotations"`
}

// PinOf returns the pin of tool t as a server lists it. The annotations
// are digested from their hints and title, so that how go-sdk writes a
// false readOnlyHint (sent, or left out) makes no difference. A nil t has
// the zero Pin.
func PinOf(t *mcp.Tool) Pin {
	if t == nil {
		return Pin{}
	}
	var annotations struct {
		Declared
		Title string `json:"title,omitempty"`
	}
	annotations.Declared = DeclaredOf(t.Annotations)
	if t.Annotations != nil {
		annotations.Title = t.Annotations.Title
	}
	return Pin{
		Title:       digest(t.Title),
		Description: digest(t.Description),
		InputSchema: digest(t.InputSchema),
		Annotations: digest(annotations),
	}
}

// digest returns the SHA-256 of v's JSON: the client side of go-sdk
// decodes schemas into maps, whose JSON has its keys sorted, so the same
// schema always has the same digest.
func digest(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		// A value that cannot be written as JSON cannot be told from
		// another: give it a digest no pin holds.
		data = fmt.Appendf(nil, "unmarshalable %T: %v", v, err)
	}
	sum := sha256.Sum256(data)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Changed returns the parts of the definition that differ between p and
// q: "title", "description", "input schema" and "annotations", in that
// order; nil if none.
func (p Pin) Changed(q Pin) []string {
	var out []string
	for _, part := range []struct {
		name string
		a, b string
	}{
		{"title", p.Title, q.Title},
		{"description", p.Description, q.Description},
		{"input schema", p.InputSchema, q.InputSchema},
		{"annotations", p.Annotations, q.Annotations},
	} {
		if part.a != part.b {
			out = append(out, part.name)
		}
	}
	return out
}

// Pins holds the pin of each tool of a server approved so far, by name.
// An [Approver] keeps its own (see [Approver.Pins]); to remember between
// sessions, a host saves them as JSON when it is done, and reads them back
// into the Approver of the next session:
//
//	data, err := json.Marshal(approver.Pins()) // at the end
//	err = json.Unmarshal(data, approver.Pins()) // before the first call
//
// The JSON is an object of tool names to pins. Pins is safe for
// concurrent use; its zero value holds no pin.
type Pins struct {
	mu   sync.Mutex
	pins map[string]Pin
}

// Get returns the pin of the tool called name, and whether there is one.
func (p *Pins) Get(name string) (Pin, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	pin, ok := p.pins[name]
	return pin, ok
}

// Set pins the tool called name to pin, replacing any pin it had.
func (p *Pins) Set(name string, pin Pin) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pins == nil {
		p.pins = make(map[string]Pin)
	}
	p.pins[name] = pin
}

// Forget removes the pin of the tool called name, if any: the next call to
// it is decided as for a tool never approved.
func (p *Pins) Forget(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.pins, name)
}

// Names returns the names of the tools pinned, sorted.
func (p *Pins) Names() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Sorted(maps.Keys(p.pins))
}

// MarshalJSON writes the pins as an object of tool names to pins.
func (p *Pins) MarshalJSON() ([]byte, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pins == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(p.pins)
}

// UnmarshalJSON replaces the pins with those of data, as MarshalJSON writes
// them. On error, the pins are left as they were.
func (p *Pins) UnmarshalJSON(data []byte) error {
	var pins map[string]Pin
	if err := json.Unmarshal(data, &pins); err != nil {
		return fmt.Errorf("mcpeffect: reading pins: %w", err)
	}
	if pins == nil {
		return fmt.Errorf("mcpeffect: reading pins: want an object of tool names to pins, not %s", data)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pins = pins
	return nil
}
