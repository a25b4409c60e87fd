package connect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/mcpeffect/mcpeffect/resolution"
)

// A PublishedOutcome is one outcome of a tool whose effect depends on its
// arguments, as the server publishes it in the tool's _meta under
// mcpeffect.OutcomesMetaKey: the effect of the calls with this outcome.
// It is a claim by the server: the audit shows it and checks it against
// the tool's hints, verify holds each call to it, and neither trusts it
// for anything else, as hosts decide from the hints.
type PublishedOutcome struct {
	// Value is the value of the tool's Argument that selects this
	// outcome, in the common form; absent from the JSON when it is "",
	// which the Argument then tells from the general form, where there is
	// no value.
	Value string `json:"value,omitempty"`
	// Effect is the effect of the calls with this outcome.
	Effect mcpeffect.Effect `json:"effect"`
	// Hints are the outcome's four hints, all explicit: those Effect
	// derives, which the server must have published with it.
	host.Declared
}

// toolResolutionMarker is where the tool-resolution extension marks a
// tool whose calls a server resolves (resolution.Extension).
const toolResolutionMarker = resolution.Extension

// Published reads the outcomes l publishes in its _meta: the argument
// that selects them (empty in the general form) and the outcomes, or none
// if its _meta does not hold mcpeffect.OutcomesMetaKey; an error says why
// what it holds cannot be read. It also reports whether the _meta marks
// the tool resolvable (the tool-resolution extension).
func (l Listed) Published() (argument string, outcomes []PublishedOutcome, resolvable bool, err error) {
	var m map[string]json.RawMessage
	if json.Unmarshal(l.Meta, &m) != nil {
		// Not an object (or absent): nothing is published there.
		return "", nil, false, nil
	}
	var marker struct {
		Resolvable bool `json:"resolvable"`
	}
	if raw, ok := m[toolResolutionMarker]; ok && json.Unmarshal(raw, &marker) == nil {
		resolvable = marker.Resolvable
	}
	raw, ok := m[mcpeffect.OutcomesMetaKey]
	if !ok {
		return "", nil, resolvable, nil
	}
	argument, outcomes, err = parsePublished(raw)
	return argument, outcomes, resolvable, err
}

// parsePublished parses the value of mcpeffect.OutcomesMetaKey, strictly:
// an object with "outcomes", a non-empty array of outcomes, and in the
// common form "argument", a non-empty string; each outcome an object with
// a valid "effect" and the four hints it derives, and, in the common form
// only, a "value" that no other outcome has. Other members are ignored.
func parsePublished(raw json.RawMessage) (string, []PublishedOutcome, error) {
	var v map[string]json.RawMessage
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return "", nil, errors.New("not a JSON object")
	}
	var argument string
	common := false
	if a, ok := v["argument"]; ok {
		if isNull(a) || json.Unmarshal(a, &argument) != nil || argument == "" {
			return "", nil, fmt.Errorf("argument is %s, not the name of an argument", short(a))
		}
		common = true
	}
	var list []json.RawMessage
	if err := json.Unmarshal(v["outcomes"], &list); err != nil || len(list) == 0 {
		return "", nil, errors.New("no outcomes: want a non-empty array")
	}
	out := make([]PublishedOutcome, 0, len(list))
	values := map[string]bool{}
	for i, raw := range list {
		o, hasValue, err := parseOutcome(raw)
		if err != nil {
			return "", nil, fmt.Errorf("outcome %d: %v", i+1, err)
		}
		switch {
		case common && !hasValue:
			return "", nil, fmt.Errorf("outcome %d: no value of %s", i+1, strconv.Quote(argument))
		case !common && hasValue:
			return "", nil, fmt.Errorf("outcome %d: a value, but no argument that it is the value of", i+1)
		case common && values[o.Value]:
			return "", nil, fmt.Errorf("outcome %d: the value %s is given twice", i+1, quoteShort(o.Value))
		}
		values[o.Value] = true
		out = append(out, o)
	}
	return argument, out, nil
}

// parseOutcome parses one published outcome, and reports whether it has
// a value.
func parseOutcome(raw json.RawMessage) (PublishedOutcome, bool, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return PublishedOutcome{}, false, errors.New("not a JSON object")
	}
	var o PublishedOutcome
	v, hasValue := m["value"]
	if hasValue && (isNull(v) || json.Unmarshal(v, &o.Value) != nil) {
		return o, false, fmt.Errorf("value is %s, not a string", short(v))
	}
	var text string
	if isNull(m["effect"]) || json.Unmarshal(m["effect"], &text) != nil || len(text) > 100 {
		return o, false, fmt.Errorf("effect is %s, not an effect such as \"write|destructive\"", short(m["effect"]))
	}
	e, err := mcpeffect.ParseEffect(text)
	if err != nil {
		return o, false, errors.New(strings.TrimPrefix(err.Error(), "mcpeffect: "))
	}
	o.Effect = e
	want := host.DeclaredOf(e.Annotations())
	for _, c := range []struct {
		name string
		dst  **bool
		want bool
	}{
		{"readOnlyHint", &o.ReadOnly, *want.ReadOnly},
		{"destructiveHint", &o.Destructive, *want.Destructive},
		{"idempotentHint", &o.Idempotent, *want.Idempotent},
		{"openWorldHint", &o.OpenWorld, *want.OpenWorld},
	} {
		v, ok := m[c.name]
		var b bool
		switch {
		case !ok:
			return o, false, fmt.Errorf("effect %s without %s", e, c.name)
		case isNull(v) || json.Unmarshal(v, &b) != nil:
			return o, false, fmt.Errorf("%s is %s, not a boolean", c.name, short(v))
		case b != c.want:
			return o, false, fmt.Errorf("effect %s with %s %t: the effect derives %t", e, c.name, b, c.want)
		}
		*c.dst = &b
	}
	return o, hasValue, nil
}

// isNull reports whether raw is JSON null, which encoding/json decodes
// into any type without an error, leaving it unchanged; or is missing.
func isNull(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) == 0 || bytes.Equal(raw, []byte("null"))
}

// short returns raw JSON for a message, cut to 40 bytes and made
// printable.
func short(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "missing"
	}
	s := string(raw)
	if len(s) > 40 {
		s = strings.ToValidUTF8(s[:40], "") + "…"
	}
	return printable(s)
}

// Rule returns the rule of the outcomes l publishes (see
// [Listed.Published]), as mcpeffect would build it: by the argument, with
// each value's effect, in the common form; in the general form, a rule of
// the outcomes' effects whose function is the server's own, so that no
// call's effect is certain from outside. It returns nil for a tool that
// publishes none, and an error if what it publishes cannot be read.
func (l Listed) Rule() (*mcpeffect.EffectRule, error) {
	argument, outcomes, _, err := l.Published()
	if err != nil || outcomes == nil {
		return nil, err
	}
	if argument != "" {
		effects := make(map[string]mcpeffect.Effect, len(outcomes))
		for _, o := range outcomes {
			effects[o.Value] = o.Effect
		}
		return mcpeffect.EffectByArgument(argument, effects), nil
	}
	effects := make([]mcpeffect.Effect, len(outcomes))
	for i, o := range outcomes {
		effects[i] = o.Effect
	}
	// The function is never called: a general form over a type of its
	// own is never certain in CallEffect, where only the raw arguments
	// are known.
	return mcpeffect.EffectByFunc(func(struct{}) mcpeffect.Effect { return 0 }, effects...).EffectRule, nil
}

// Recovery reads the recovery that l publishes (SEP-3172): in its
// annotations, as annotations.recovery, where the draft puts it, or else
// in its _meta under mcpeffect.RecoveryMetaKey, where servers built with
// mcpeffect put it, since neither SDK can carry the draft's member (read
// by host.ParseRecovery, as any host built with mcpeffect reads it). It
// returns nil and no error for a tool that publishes none, and in, the
// member it was read from ("annotations.recovery", or "_meta" and the
// key). A recovery that cannot be read, or is not valid, is an error that
// says why; the recovery, if it could be decoded, is returned with it.
func (l Listed) Recovery() (rec *mcpeffect.Recovery, in string, err error) {
	// A listing holds only objects there (readPage checks it); anything
	// else publishes nothing.
	tool := map[string]json.RawMessage{}
	if jsonKind(l.Annotations) == "an object" {
		tool["annotations"] = l.Annotations
	}
	if jsonKind(l.Meta) == "an object" {
		tool["_meta"] = l.Meta
	}
	raw, err := json.Marshal(tool)
	if err != nil {
		return nil, "", err
	}
	rec, err = host.ParseRecovery(raw)
	if rec == nil && err == nil {
		return nil, "", nil
	}
	in, where := "_meta "+strconv.Quote(mcpeffect.RecoveryMetaKey), "_meta."+mcpeffect.RecoveryMetaKey
	var a map[string]json.RawMessage
	if json.Unmarshal(l.Annotations, &a) == nil && !isNull(a[mcpeffect.RecoveryAnnotation]) {
		in = "annotations." + mcpeffect.RecoveryAnnotation
		where = in
	}
	if err != nil {
		// host's words name where it read the recovery, which in says.
		msg := strings.TrimPrefix(err.Error(), "host: ")
		msg = strings.TrimPrefix(msg, where+": ")
		msg = strings.TrimPrefix(msg, mcpeffect.ErrInvalidRecovery.Error()+": ")
		err = errors.New(msg)
	}
	return rec, in, err
}
