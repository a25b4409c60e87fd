package mcpeffect_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpeffect/mcpeffect"
)

// hints parses the JSON of an annotations object.
func hints(t *testing.T, annotations string) mcpeffect.Hints {
	t.Helper()
	h, err := mcpeffect.ParseHints([]byte(annotations))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestPolicyDecide(t *testing.T) {
	const (
		read           = `{"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}`
		openRead       = `{"readOnlyHint": true, "openWorldHint": true}`
		bareRead       = `{"readOnlyHint": true}` // no openWorldHint: a read that may reach an open world
		write          = `{"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}`
		idempotent     = `{"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}`
		openIdempotent = `{"readOnlyHint": false, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true}`
		destructive    = `{"readOnlyHint": false, "destructiveHint": true, "idempotentHint": true, "openWorldHint": false}`
		noDestructive  = `{"readOnlyHint": false, "idempotentHint": true, "openWorldHint": false}`
		noReadOnly     = `{"destructiveHint": false, "idempotentHint": true, "openWorldHint": false}`
		openWrite      = `{"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": true}`
		noOpenWorld    = `{"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false}`
		contradictory  = `{"readOnlyHint": true, "destructiveHint": true, "openWorldHint": false}`
		none           = ``
	)
	var (
		careful      = mcpeffect.Policy{}
		trusted      = mcpeffect.Policy{Trusted: true}
		idempotents  = mcpeffect.Policy{Trusted: true, AllowIdempotentWrites: true}
		untrustedIde = mcpeffect.Policy{AllowIdempotentWrites: true}
		noOpenWrites = mcpeffect.Policy{DenyOpenWorldWrites: true}
		strict       = mcpeffect.Policy{Trusted: true, AllowIdempotentWrites: true, DenyOpenWorldWrites: true}
		named        = mcpeffect.Policy{Trusted: true, Tools: map[string]mcpeffect.Decision{
			"wipe": mcpeffect.Allow, "peek": mcpeffect.Deny, "look": mcpeffect.Ask, "odd": mcpeffect.Decision(9),
		}}
		namedCareful = mcpeffect.Policy{Tools: map[string]mcpeffect.Decision{"wipe": mcpeffect.Allow}}
	)
	for _, tc := range []struct {
		name   string
		policy mcpeffect.Policy
		tool   string
		hints  string
		want   mcpeffect.Decision
	}{
		// An untrusted server's hints approve nothing.
		{"careful/read", careful, "t", read, mcpeffect.Ask},
		{"careful/write", careful, "t", write, mcpeffect.Ask},
		{"careful/destructive", careful, "t", destructive, mcpeffect.Ask},
		{"careful/no hints", careful, "t", none, mcpeffect.Ask},
		{"careful/idempotent, allowed for trusted servers", untrustedIde, "t", idempotent, mcpeffect.Ask},

		// A trusted server's reads run; its writes ask.
		{"trusted/read", trusted, "t", read, mcpeffect.Allow},
		{"trusted/open-world read", trusted, "t", openRead, mcpeffect.Allow},
		{"trusted/read without other hints", trusted, "t", bareRead, mcpeffect.Allow},
		{"trusted/write", trusted, "t", write, mcpeffect.Ask},
		{"trusted/idempotent", trusted, "t", idempotent, mcpeffect.Ask},
		{"trusted/destructive", trusted, "t", destructive, mcpeffect.Ask},
		{"trusted/no readOnlyHint", trusted, "t", noReadOnly, mcpeffect.Ask},
		{"trusted/read-only and destructive", trusted, "t", contradictory, mcpeffect.Ask},
		{"trusted/no hints", trusted, "t", none, mcpeffect.Ask},

		// AllowIdempotentWrites: idempotent writes that destroy nothing.
		{"idempotent/idempotent", idempotents, "t", idempotent, mcpeffect.Allow},
		{"idempotent/open-world idempotent", idempotents, "t", openIdempotent, mcpeffect.Allow},
		{"idempotent/destructive", idempotents, "t", destructive, mcpeffect.Ask},
		{"idempotent/no destructiveHint", idempotents, "t", noDestructive, mcpeffect.Ask},
		{"idempotent/not idempotent", idempotents, "t", write, mcpeffect.Ask},
		{"idempotent/no readOnlyHint", idempotents, "t", noReadOnly, mcpeffect.Allow},
		{"idempotent/read", idempotents, "t", read, mcpeffect.Allow},

		// DenyOpenWorldWrites, trusted or not.
		{"no open writes/open-world write", noOpenWrites, "t", openWrite, mcpeffect.Deny},
		{"no open writes/no openWorldHint", noOpenWrites, "t", noOpenWorld, mcpeffect.Deny},
		{"no open writes/no hints", noOpenWrites, "t", none, mcpeffect.Deny},
		{"no open writes/closed write", noOpenWrites, "t", write, mcpeffect.Ask},
		{"no open writes/open-world read", noOpenWrites, "t", openRead, mcpeffect.Ask},
		{"strict/open-world idempotent", strict, "t", openIdempotent, mcpeffect.Deny},
		{"strict/idempotent", strict, "t", idempotent, mcpeffect.Allow},
		{"strict/open-world read", strict, "t", openRead, mcpeffect.Allow},

		// Tools names tools whatever their hints.
		{"named/allowed destructive", named, "wipe", destructive, mcpeffect.Allow},
		{"named/allowed, untrusted", namedCareful, "wipe", none, mcpeffect.Allow},
		{"named/denied read", named, "peek", read, mcpeffect.Deny},
		{"named/asked read", named, "look", read, mcpeffect.Ask},
		{"named/invalid decision", named, "odd", read, mcpeffect.Deny},
		{"named/another tool", named, "other", read, mcpeffect.Allow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.policy.Decide(tc.tool, hints(t, tc.hints)); got != tc.want {
				t.Errorf("Decide(%q, %s) = %s, want %s", tc.tool, tc.hints, got, tc.want)
			}
		})
	}
}

func TestDecisionText(t *testing.T) {
	for _, d := range []mcpeffect.Decision{mcpeffect.Ask, mcpeffect.Allow, mcpeffect.Deny} {
		text, err := d.MarshalText()
		if err != nil {
			t.Fatalf("%v.MarshalText: %v", d, err)
		}
		var back mcpeffect.Decision
		if err := back.UnmarshalText(text); err != nil || back != d {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", text, back, err, d)
		}
	}
	if d, err := mcpeffect.ParseDecision("DENY"); err != nil || d != mcpeffect.Deny {
		t.Errorf(`ParseDecision("DENY") = %v, %v; want deny`, d, err)
	}
	if _, err := mcpeffect.ParseDecision("maybe"); err == nil {
		t.Error(`ParseDecision("maybe") succeeded, want an error`)
	}
	if _, err := mcpeffect.Decision(3).MarshalText(); err == nil {
		t.Error("Decision(3).MarshalText succeeded, want an error")
	}
	if s := mcpeffect.Decision(3).String(); s != "Decision(3)" {
		t.Errorf("Decision(3).String() = %q", s)
	}

	// Per-tool decisions read from a host's configuration.
	var p mcpeffect.Policy
	if err := json.Unmarshal([]byte(`{"Trusted": true, "Tools": {"drop_database": "deny", "send_email": "ask"}}`), &p); err != nil {
		t.Fatal(err)
	}
	if !p.Trusted || p.Tools["drop_database"] != mcpeffect.Deny || p.Tools["send_email"] != mcpeffect.Ask {
		t.Errorf("policy %+v", p)
	}
}
