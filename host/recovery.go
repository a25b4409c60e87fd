package host

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ParseRecovery reads the recovery that a tool publishes, from the tool's
// JSON as a listing has it (one element of the tools of tools/list): its
// annotations.recovery, where SEP-3172 puts it, or else its _meta under
// [mcpeffect.RecoveryMetaKey], where servers built with mcpeffect put it
// (see [mcpeffect.RecoveryMetaKey] for why). It returns nil and no error
// for a tool that publishes none.
//
// A recovery is a claim by the server: a host should hold the undo to
// the approval any call of that tool gets. One that is not valid
// ([mcpeffect.Recovery.Validate]: another strategy, a bad expression) is
// returned with the error that says why, for an audit to report; use it
// only when the error is nil.
func ParseRecovery(tool []byte) (*mcpeffect.Recovery, error) {
	var t struct {
		Annotations struct {
			Recovery json.RawMessage `json:"recovery"`
		} `json:"annotations"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if err := json.Unmarshal(tool, &t); err != nil {
		return nil, fmt.Errorf("host: the tool is not JSON: %v", err)
	}
	raw, where := t.Annotations.Recovery, "annotations.recovery"
	if isAbsent(raw) {
		raw, where = t.Meta[mcpeffect.RecoveryMetaKey], "_meta."+mcpeffect.RecoveryMetaKey
	}
	if isAbsent(raw) {
		return nil, nil
	}
	return decodeRecovery(raw, where)
}

// RecoveryOf reads the recovery that t, a tool listed by a go-sdk client,
// publishes in its _meta under [mcpeffect.RecoveryMetaKey], as
// [ParseRecovery] does. go-sdk's client decodes a tool's annotations into
// a struct without recovery, so a recovery that a server publishes only in
// annotations.recovery is lost before RecoveryOf sees it, unless the
// session's transport is a [Transport] (or its HTTP client's a
// [RoundTripper]), which copies it into the _meta of each listed tool
// that lacks one.
func RecoveryOf(t *mcp.Tool) (*mcpeffect.Recovery, error) {
	if t == nil {
		return nil, nil
	}
	v, ok := t.Meta[mcpeffect.RecoveryMetaKey]
	if !ok || v == nil {
		return nil, nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("host: tool %q: _meta.%s: %v", t.Name, mcpeffect.RecoveryMetaKey, err)
	}
	rec, err := decodeRecovery(raw, "_meta."+mcpeffect.RecoveryMetaKey)
	if err != nil {
		err = fmt.Errorf("tool %q: %w", t.Name, err)
	}
	return rec, err
}

func isAbsent(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || string(raw) == "null"
}

// errNotRecovery is wrapped by the error of a recovery that is not an
// object of the draft's shape.
var errNotRecovery = errors.New("not a recovery object")

// decodeRecovery decodes the recovery raw, found at where, and validates
// it.
func decodeRecovery(raw json.RawMessage, where string) (*mcpeffect.Recovery, error) {
	var rec mcpeffect.Recovery
	if err := json.Unmarshal(raw, &rec); err != nil {
		return nil, fmt.Errorf("host: %s: %w: %v", where, errNotRecovery, err)
	}
	if err := rec.Validate(); err != nil {
		return &rec, fmt.Errorf("host: %s: %w", where, err)
	}
	return &rec, nil
}
