package host_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpeffect/mcpeffect/host"
)

// hints parses the JSON of an annotations object.
func hints(t *testing.T, annotations string) host.Declared {
	t.Helper()
	h, err := host.ParseDeclared([]byte(annotations))
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
		careful      = host.Policy{}
		trusted      = host.Policy{Trusted: true}
		idempotents  = host.Policy{Trusted: true, AllowIdempotentWrites: true}
		untrustedIde = host.Policy{AllowIdempotentWrites: true}
		noOpenWrites = host.Policy{DenyOpenWorldWrites: true}
		strict       = host.Policy{Trusted: true, AllowIdempotentWrites: true, DenyOpenWorldWrites: true}
		named        = host.Policy{Trusted: true, Tools: map[string]host.Action{
			"wipe": host.Allow, "peek": host.Deny, "look": host.Ask, "odd": host.Action(9),
		}}
		namedCareful = host.Policy{Tools: map[string]host.Action{"wipe": host.Allow}}
	)
	for _, tc := range []struct {
		name   string
		policy host.Policy
		tool   string
		hints  string
		want   host.Action
	}{
		// An untrusted server's hints approve nothing.
		{"careful/read", careful, "t", read, host.Ask},
		{"careful/write", careful, "t", write, host.Ask},
		{"careful/destructive", careful, "t", destructive, host.Ask},
		{"careful/no hints", careful, "t", none, host.Ask},
		{"careful/idempotent, allowed for trusted servers", untrustedIde, "t", idempotent, host.Ask},

		// A trusted server's reads run; its writes ask.
		{"trusted/read", trusted, "t", read, host.Allow},
		{"trusted/open-world read", trusted, "t", openRead, host.Allow},
		{"trusted/read without other hints", trusted, "t", bareRead, host.Allow},
		{"trusted/write", trusted, "t", write, host.Ask},
		{"trusted/idempotent", trusted, "t", idempotent, host.Ask},
		{"trusted/destructive", trusted, "t", destructive, host.Ask},
		{"trusted/no readOnlyHint", trusted, "t", noReadOnly, host.Ask},
		{"trusted/read-only and destructive", trusted, "t", contradictory, host.Ask},
		{"trusted/no hints", trusted, "t", none, host.Ask},

		// AllowIdempotentWrites: idempotent writes that destroy nothing.
		{"idempotent/idempotent", idempotents, "t", idempotent, host.Allow},
		{"idempotent/open-world idempotent", idempotents, "t", openIdempotent, host.Allow},
		{"idempotent/destructive", idempotents, "t", destructive, host.Ask},
		{"idempotent/no destructiveHint", idempotents, "t", noDestructive, host.Ask},
		{"idempotent/not idempotent", idempotents, "t", write, host.Ask},
		{"idempotent/no readOnlyHint", idempotents, "t", noReadOnly, host.Allow},
		{"idempotent/read", idempotents, "t", read, host.Allow},

		// DenyOpenWorldWrites, trusted or not.
		{"no open writes/open-world write", noOpenWrites, "t", openWrite, host.Deny},
		{"no open writes/no openWorldHint", noOpenWrites, "t", noOpenWorld, host.Deny},
		{"no open writes/no hints", noOpenWrites, "t", none, host.Deny},
		{"no open writes/closed write", noOpenWrites, "t", write, host.Ask},
		{"no open writes/open-world read", noOpenWrites, "t", openRead, host.Ask},
		{"strict/open-world idempotent", strict, "t", openIdempotent, host.Deny},
		{"strict/idempotent", strict, "t", idempotent, host.Allow},
		{"strict/open-world read", strict, "t", openRead, host.Allow},

		// Tools names tools whatever their hints.
		{"named/allowed destructive", named, "wipe", destructive, host.Allow},
		{"named/allowed, untrusted", namedCareful, "wipe", none, host.Allow},
		{"named/denied read", named, "peek", read, host.Deny},
		{"named/asked read", named, "look", read, host.Ask},
		{"named/invalid decision", named, "odd", read, host.Deny},
		{"named/another tool", named, "other", read, host.Allow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.policy.ActionFor(tc.tool, hints(t, tc.hints)); got != tc.want {
				t.Errorf("Decide(%q, %s) = %s, want %s", tc.tool, tc.hints, got, tc.want)
			}
		})
	}
}

func TestDecisionText(t *testing.T) {
	for _, d := range []host.Action{host.Ask, host.Allow, host.Deny} {
		text, err := d.MarshalText()
		if err != nil {
			t.Fatalf("%v.MarshalText: %v", d, err)
		}
		var back host.Action
		if err := back.UnmarshalText(text); err != nil || back != d {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", text, back, err, d)
		}
	}
	if d, err := host.ParseAction("DENY"); err != nil || d != host.Deny {
		t.Errorf(`ParseDecision("DENY") = %v, %v; want deny`, d, err)
	}
	if _, err := host.ParseAction("maybe"); err == nil {
		t.Error(`ParseDecision("maybe") succeeded, want an error`)
	}
	if _, err := host.Action(3).MarshalText(); err == nil {
		t.Error("Action(3).MarshalText succeeded, want an error")
	}
	if s := host.Action(3).String(); s != "Action(3)" {
		t.Errorf("Action(3).String() = %q", s)
	}

	// Per-tool decisions read from a host's configuration.
	var p host.Policy
	if err := json.Unmarshal([]byte(`{"Trusted": true, "Tools": {"drop_database": "deny", "send_email": "ask"}}`), &p); err != nil {
		t.Fatal(err)
	}
	if !p.Trusted || p.Tools["drop_database"] != host.Deny || p.Tools["send_email"] != host.Ask {
		t.Errorf("policy %+v", p)
	}
}
