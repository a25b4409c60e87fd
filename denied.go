package mcpeffect

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// CodeDenied is the JSON-RPC error code of a tools/call, resources/read or
// prompts/get refused by [Registry.Middleware], or by the handler wrapper
// of [AddTool] or [AddResource] and the others. The error's data
// is a [DeniedError] in JSON. It is in the range JSON-RPC leaves to
// servers, clear of the codes that go-sdk and the MCP specification use.
const CodeDenied = -32050

// A DeniedError describes a tools/call, resources/read or prompts/get
// refused by [Registry.Middleware] (or, where the arguments or the
// resource decide, by the handler wrapper of [AddTool],
// [AddResource] and the others). It is the data of the JSON-RPC error the
// caller receives, and [AsDeniedError] reads it back on the client;
// [MiddlewareOptions] OnDenied sees it on the server.
type DeniedError struct {
	// Tool is the tool that was called; Resource the URI of the resource
	// that was read; Prompt the prompt that was got. Exactly one is set.
	Tool     string `json:"tool,omitempty"`
	Resource string `json:"resource,omitempty"`
	Prompt   string `json:"prompt,omitempty"`
	// Classified is false for a tool the registry does not know, which
	// no scope may call. Resources and prompts are always classified:
	// read-only unless the server says more.
	Classified bool `json:"classified"`
	// Required is the least scope that may make the call, and
	// RequiredScopeName the scope string that grants it. Both are empty for
	// a tool that is not classified.
	Required          Scope  `json:"required"`
	RequiredScopeName string `json:"requiredScopeName,omitempty"`
	// DependsOnArguments reports a tool whose effect depends on its
	// arguments (see [EffectRule]). Selected then says what the arguments
	// of this call selected, such as `action="delete"`, or why they count
	// as the worst case; it is empty when the call was refused before its
	// arguments were read, because the caller's scope allows none of the
	// tool's calls, and Required is then the least scope that allows some.
	DependsOnArguments bool   `json:"dependsOnArguments,omitempty"`
	Selected           string `json:"selected,omitempty"`
	// Granted is the scope the caller has.
	Granted Scope `json:"granted"`
	// Unscoped reports that nothing gave the caller a scope: the request
	// carried no token, and its connection was given none with
	// [WithConnectionScope] (as over stdio or in memory, when the server
	// was started without one). Granted is then the zero Scope, and the
	// message says how to give one.
	Unscoped bool `json:"unscoped,omitempty"`

	// Authorization is the structured denial of SEP-2643 that the
	// refusal carries, in its data's _meta (see [AuthorizationDenial]):
	// for a tool, resource or prompt that a wider scope allows,
	// remediation available, with a hint of the scope string
	// ([ScopeHint]) that the HTTP challenge asks for too; for a tool that
	// no scope may call, remediation unavailable.
	Authorization *AuthorizationDenial `json:"-"`
}

// deniedFields are the fields of a DeniedError as its JSON has them, but
// the _meta member.
type deniedFields DeniedError

// MarshalJSON implements [json.Marshaler]: the fields, and the
// [AuthorizationDenial] in a _meta member, under [AuthorizationMetaKey].
func (d DeniedError) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		deniedFields
		Meta map[string]*AuthorizationDenial `json:"_meta,omitempty"`
	}{deniedFields(d), authorizationMeta(d.Authorization)})
}

// UnmarshalJSON implements [json.Unmarshaler], reading what MarshalJSON
// writes.
func (d *DeniedError) UnmarshalJSON(data []byte) error {
	v := struct {
		*deniedFields
		Meta map[string]*AuthorizationDenial `json:"_meta"`
	}{deniedFields: (*deniedFields)(d)}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	d.Authorization = v.Meta[AuthorizationMetaKey]
	return nil
}

// subject names what was refused: `tool "x"`, `resource "uri"` or
// `prompt "p"`.
func (d *DeniedError) subject() string {
	switch {
	case d.Resource != "":
		return fmt.Sprintf("resource %q", d.Resource)
	case d.Prompt != "":
		return fmt.Sprintf("prompt %q", d.Prompt)
	}
	return fmt.Sprintf("tool %q", d.Tool)
}

// Error says in plain words what was refused, which scope it needs and
// which scope the caller has; when nothing gave the caller a scope
// (Unscoped), it also says how to give one.
func (d *DeniedError) Error() string {
	if !d.Classified {
		return fmt.Sprintf("mcpeffect: %s is refused: it has no effect classification, so no scope may call it", d.subject())
	}
	var msg string
	switch {
	case d.Selected != "":
		msg = fmt.Sprintf("mcpeffect: %s is refused: with %s, it needs the %s scope (%q), and the caller has ", d.subject(), d.Selected, d.Required, d.RequiredScopeName)
	case d.DependsOnArguments:
		msg = fmt.Sprintf("mcpeffect: %s is refused: whatever its arguments, it needs at least the %s scope (%q), and the caller has ", d.subject(), d.Required, d.RequiredScopeName)
	default:
		msg = fmt.Sprintf("mcpeffect: %s is refused: it needs the %s scope (%q), and the caller has ", d.subject(), d.Required, d.RequiredScopeName)
	}
	switch {
	case d.Unscoped:
		// The first call of a server copied without a connection scope
		// ends here: say what to do about it.
		// One sentence for every SDK: go-sdk serves a connection with
		// Server.Run or Server.Connect, the mcp-go adapter with
		// mcpgo.ServeStdio or mcpgo.Listen, and each takes the context.
		return msg + fmt.Sprintf("no scope, since the request carried no token and its connection was given none: "+
			"serve the connection with a context from mcpeffect.WithConnectionScope(ctx, scope) (stdio, in memory), "+
			"or over HTTP send a bearer token with the scope %q", d.RequiredScopeName)
	case d.Granted == 0:
		return msg + "no scope"
	}
	return msg + "only " + d.Granted.String()
}

// LogValue implements [slog.LogValuer]: a refusal logs as a group of its
// fields, scopes by name, and the handle of its structured denial, such as
//
//	denied.tool=delete_task denied.classified=true denied.required=full denied.requiredScopeName=tools:destructive denied.granted=read-only
func (d *DeniedError) LogValue() slog.Value {
	if d == nil {
		return slog.Value{}
	}
	attrs := make([]slog.Attr, 0, 8)
	switch {
	case d.Resource != "":
		attrs = append(attrs, slog.String("resource", d.Resource))
	case d.Prompt != "":
		attrs = append(attrs, slog.String("prompt", d.Prompt))
	default:
		attrs = append(attrs, slog.String("tool", d.Tool))
	}
	attrs = append(attrs, slog.Bool("classified", d.Classified))
	if d.Classified {
		attrs = append(attrs, slog.String("required", d.Required.String()), slog.String("requiredScopeName", d.RequiredScopeName))
	}
	if d.Selected != "" {
		attrs = append(attrs, slog.String("selected", d.Selected))
	} else if d.DependsOnArguments {
		attrs = append(attrs, slog.Bool("dependsOnArguments", true))
	}
	attrs = append(attrs, slog.String("granted", d.Granted.String()))
	if d.Unscoped {
		attrs = append(attrs, slog.Bool("unscoped", true))
	}
	if d.Authorization != nil && d.Authorization.AuthorizationContextID != "" {
		attrs = append(attrs, slog.String("authorizationContextId", d.Authorization.AuthorizationContextID))
	}
	return slog.GroupValue(attrs...)
}

// AsDeniedError reports whether err, as returned by a client's CallTool,
// ReadResource or GetPrompt, is a refusal by [Registry.Middleware] (or a
// handler wrapper of this package), and if so returns its [DeniedError].
// Any other error, nil included, gives nil and false.
func AsDeniedError(err error) (*DeniedError, bool) {
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != CodeDenied || len(je.Data) == 0 {
		return nil, false
	}
	var d DeniedError
	if json.Unmarshal(je.Data, &d) != nil || d.Tool == "" && d.Resource == "" && d.Prompt == "" {
		return nil, false
	}
	return &d, true
}

func newDeniedError(name string, need Scope, classified bool, granted Scope, names ScopeNames) *DeniedError {
	d := &DeniedError{Tool: name, Granted: granted}
	if classified {
		d.Classified = true
		d.Required = need
		d.RequiredScopeName = names.Name(need)
		d.Authorization = newAuthorizationDenial(RemediationAvailable, RemediationHint{Type: ScopeHint, Scope: d.RequiredScopeName})
	} else {
		d.Authorization = newAuthorizationDenial(RemediationUnavailable)
	}
	return d
}

// JSONRPCError returns the JSON-RPC error that refuses the operation, as
// [Registry.Middleware] sends it: code [CodeDenied], the message of
// [DeniedError.Error], and d in JSON as its data, which [AsDeniedError]
// reads back. An adapter for an SDK with its own error types sends
// these three.
func (d *DeniedError) JSONRPCError() (code int64, message string, data json.RawMessage) {
	e := d.rpcError()
	return e.Code, e.Message, e.Data
}

func (d *DeniedError) rpcError() *jsonrpc.Error {
	data, err := json.Marshal(d)
	if err != nil {
		// A DeniedError holds strings and valid scopes only.
		panic(err)
	}
	return &jsonrpc.Error{Code: CodeDenied, Message: d.Error(), Data: data}
}
