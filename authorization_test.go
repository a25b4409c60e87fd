package mcpeffect_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sameRefusal reports whether a and b are the same refusal: the same
// fields, and structured denials that differ at most in their handle,
// which each refusal draws afresh.
func sameRefusal(a, b *mcpeffect.DeniedError) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.Authorization, y.Authorization = nil, nil
	return x == y && sameEnvelope(a.Authorization, b.Authorization)
}

func sameEnvelope(a, b *mcpeffect.AuthorizationDenial) bool {
	if a == nil || b == nil {
		return a == b
	}
	x, y := *a, *b
	x.AuthorizationContextID, y.AuthorizationContextID = "", ""
	return reflect.DeepEqual(x, y)
}

// withoutEnvelope returns d without its structured denial, to compare
// its other fields.
func withoutEnvelope(d mcpeffect.DeniedError) mcpeffect.DeniedError {
	d.Authorization = nil
	return d
}

// checkEnvelope fails t unless d carries the structured denial its fields
// call for: remediation available with the scope string that allows the
// operation, or, for a tool no scope may call, unavailable; and a handle.
func checkEnvelope(t testing.TB, d *mcpeffect.DeniedError) {
	t.Helper()
	a := d.Authorization
	if a == nil {
		t.Fatalf("refusal %+v carries no structured denial", d)
	}
	want := &mcpeffect.AuthorizationDenial{Reason: "insufficient_authorization", Remediation: mcpeffect.RemediationUnavailable}
	if d.Classified {
		want.Remediation = mcpeffect.RemediationAvailable
		want.RemediationHints = []mcpeffect.RemediationHint{{Type: mcpeffect.ScopeHint, Scope: d.RequiredScopeName}}
	}
	if !sameEnvelope(a, want) || !strings.HasPrefix(a.AuthorizationContextID, "authz_") {
		t.Errorf("refusal %+v carries %+v, want %+v with a handle", d, a, want)
	}
}

// TestAuthorizationDenialEveryTransport checks that a refusal carries
// the structured denial of SEP-2643 in its data's _meta, the same in
// memory, over HTTP from the middleware and from the 403 challenge, whose
// WWW-Authenticate asks for the scope the envelope's hint names; that an
// unclassified tool's says unavailable; and that each refusal has a
// handle of its own.
func TestAuthorizationDenialEveryTransport(t *testing.T) {
	s, r, _ := newTestServer(t, nil)
	reader := connect(t, mcpeffect.WithConnectionScope(context.Background(), mcpeffect.ReadOnly), s)
	_, err := reader.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_task", Arguments: taskArgs{ID: "7"}})
	inMemory, ok := mcpeffect.AsDeniedError(err)
	if !ok {
		t.Fatalf("in memory: %v", err)
	}
	checkEnvelope(t, inMemory)
	// The wire form: the envelope in the data's _meta, under the draft's key.
	var je *jsonrpc.Error
	if !errors.As(err, &je) {
		t.Fatal(err)
	}
	var data struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if json.Unmarshal(je.Data, &data) != nil || data.Meta["io.modelcontextprotocol/authorization"] == nil {
		t.Errorf("data %s has no _meta with the envelope", je.Data)
	}

	// An unclassified tool: no scope would allow it.
	mcp.AddTool(s, &mcp.Tool{Name: "unclassified"}, func(context.Context, *mcp.CallToolRequest, taskArgs) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{}, nil, nil
	})
	_, err = reader.CallTool(context.Background(), &mcp.CallToolParams{Name: "unclassified", Arguments: taskArgs{}})
	if d, ok := mcpeffect.AsDeniedError(err); !ok || d.Authorization == nil || d.Authorization.Remediation != mcpeffect.RemediationUnavailable {
		t.Errorf("unclassified: %v, want a refusal whose remediation is unavailable", err)
	} else {
		checkEnvelope(t, d)
	}

	// Over HTTP, from the middleware and from the challenge in front of it.
	enf := r.Enforcer(nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	for _, challenged := range []bool{false, true} {
		var next http.Handler = h
		if challenged {
			next = enf.Challenge(nil)(h)
		}
		hs := httptest.NewServer(auth.RequireBearerToken(verifyTestToken, nil)(next))
		t.Cleanup(hs.Close) // after the session's own cleanup, which comes later

		body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"delete_task","arguments":{"id":"7"}}}`
		var d *mcpeffect.DeniedError
		if challenged {
			req, _ := http.NewRequest(http.MethodPost, hs.URL, strings.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tokenFor(mcpeffect.ReadOnly))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var answer struct {
				Error struct {
					Data mcpeffect.DeniedError `json:"data"`
				} `json:"error"`
			}
			json.NewDecoder(resp.Body).Decode(&answer)
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Fatalf("challenge: status %d", resp.StatusCode)
			}
			d = &answer.Error.Data
			if ch := resp.Header.Get("WWW-Authenticate"); d.Authorization == nil || len(d.Authorization.RemediationHints) != 1 ||
				!strings.Contains(ch, d.Authorization.RemediationHints[0].Scope+`"`) {
				t.Errorf("the challenge %s and the envelope %+v disagree on the scope", ch, d.Authorization)
			}
		} else {
			cs := connectHTTP(t, hs.URL, tokenFor(mcpeffect.ReadOnly), nil)
			_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_task", Arguments: taskArgs{ID: "7"}})
			var ok bool
			if d, ok = mcpeffect.AsDeniedError(err); !ok {
				t.Fatalf("over HTTP: %v", err)
			}
		}
		checkEnvelope(t, d)
		if !sameRefusal(d, inMemory) {
			t.Errorf("challenged %t: over HTTP %+v, in memory %+v", challenged, d, inMemory)
		}
		if d.Authorization.AuthorizationContextID == inMemory.Authorization.AuthorizationContextID {
			t.Errorf("two refusals share the handle %s", d.Authorization.AuthorizationContextID)
		}
	}
}

// TestAuthorizationDenialConfirmation checks the structured denial of the
// calls that need a person's yes: the result that asks carries one in its
// own _meta (remediation available, by a confirmation), and each refusal
// of an answer carries the one its answer calls for.
func TestAuthorizationDenialConfirmation(t *testing.T) {
	ctx := mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)
	s, _, _ := newConfirmServer(t, &mcpeffect.ConfirmOptions{})
	noLoop := &mcp.ClientOptions{
		ElicitationHandler: (&person{answer: "accept"}).handler,
		MultiRoundTrip:     &mcp.MultiRoundTripOptions{Disabled: true},
	}
	cs := connectAs(t, ctx, s, noLoop, modernProtocol)
	res, err := rawCall(t, cs, "delete_task", taskArgs{ID: "7"}, "", "")
	if err != nil || !res.NeedsInput() {
		t.Fatalf("%+v, %v; want an input request", res, err)
	}
	raw, _ := json.Marshal(res.Meta[mcpeffect.AuthorizationMetaKey])
	var asking mcpeffect.AuthorizationDenial
	if json.Unmarshal(raw, &asking) != nil || !sameEnvelope(&asking, &mcpeffect.AuthorizationDenial{
		Reason: "insufficient_authorization", Remediation: mcpeffect.RemediationAvailable,
		RemediationHints: []mcpeffect.RemediationHint{{Type: mcpeffect.ConfirmationHint}},
	}) || asking.AuthorizationContextID == "" {
		t.Errorf("the asking result's _meta %s, want the envelope of a confirmation", raw)
	}
	state := res.RequestState
	for _, tt := range []struct {
		answer, state, remediation string
	}{
		{"decline", state, mcpeffect.RemediationUnavailable},
		{"accept", "trust-me", mcpeffect.RemediationAvailable},
	} {
		_, err := rawCall(t, cs, "delete_task", taskArgs{ID: "7"}, tt.state, tt.answer)
		n, ok := mcpeffect.AsNotConfirmedError(err)
		if !ok || n.Authorization == nil || n.Authorization.Remediation != tt.remediation || n.Authorization.AuthorizationContextID == "" {
			t.Errorf("%s: %v (%+v), want remediation %s", tt.answer, err, n, tt.remediation)
		}
	}
	// A client that cannot ask: undisclosed, as a client that could would
	// be asked.
	mute := connectAs(t, ctx, s, nil, modernProtocol)
	_, err = mute.CallTool(context.Background(), &mcp.CallToolParams{Name: "delete_task", Arguments: taskArgs{ID: "7"}})
	if n, ok := mcpeffect.AsNotConfirmedError(err); !ok || n.Authorization == nil || n.Authorization.Remediation != mcpeffect.RemediationUndisclosed {
		t.Errorf("a client that cannot ask: %v, want remediation undisclosed", err)
	}
}

// TestAuthorizationDenialsAdvertised checks that the middleware
// advertises the extension of SEP-2643 in its capabilities, beside the
// server's own, on both protocols.
func TestAuthorizationDenialsAdvertised(t *testing.T) {
	s, _, _ := newTestServer(t, nil)
	for _, protocol := range []string{legacyProtocol, modernProtocol} {
		cs := connectAs(t, context.Background(), s, nil, protocol)
		caps := cs.InitializeResult().Capabilities
		if _, ok := caps.Extensions[mcpeffect.AuthorizationDenialsExtension]; !ok || caps.Tools == nil {
			t.Errorf("%s: capabilities %+v, want the extension beside the tools", protocol, caps)
		}
	}
}
