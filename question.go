package mcpeffect

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The question put to a person: worded by the server's Message or by
// default, and shown with what a person would not see for what it is
// written as escapes, whoever worded it.

// A ConfirmCall is a call that needs a person's confirmation, as
// [ConfirmOptions] Message and AskPerson see it.
type ConfirmCall struct {
	Tool string
	// Title is the tool's title for people, such as "Delete task": its
	// Title, or else its annotations' Title; "" if it has neither.
	Title string
	// Effect is the effect of this call.
	Effect Effect
	// Arguments are the call's arguments as the client sent them (see
	// [ConfirmCall.CanonicalArguments] for them as the Binding reads
	// them).
	Arguments json.RawMessage
	// Request is the request, for its session and extra information.
	Request *mcp.CallToolRequest

	// Binding is the SHA-256 digest of what a person's answer about this
	// call is bound to: its tool, its arguments in canonical form (see
	// [ConfirmCall.CanonicalArguments]), its caller (see
	// [ConfirmOptions] Caller) and the caller's scope. Two calls have the
	// same Binding only when the same caller makes the same call: a
	// server that keeps a person's answer (AskPerson) keeps it with the
	// Binding, and uses it only for a call of the same one. The wrappers
	// of [AddTool] set it for AskPerson; zero elsewhere.
	Binding [sha256.Size]byte
	// State and Reply are, for AskPerson, the question that this call
	// answers and the answer: the State of the [ConfirmReply] that asked
	// it, and what the client answered, nil if it sent no answer. Both
	// are empty on the call that asks first. From 2026-07-28 they come
	// from the client, which may send anything: a State that AskPerson
	// did not give for a call of this Binding answers nothing.
	State string
	Reply *mcp.ElicitResult
}

// toolTitle returns the title of t for people: its Title, or else its
// annotations' Title.
func toolTitle(t *mcp.Tool) string {
	if t.Title == "" && t.Annotations != nil {
		return t.Annotations.Title
	}
	return t.Title
}

// question returns the elicitation that asks the person about the call
// req of tool t, of effect e, worded by message if it words one.
func question(ctx context.Context, message func(context.Context, *ConfirmCall) string, req *mcp.CallToolRequest, t *mcp.Tool, e Effect) *mcp.ElicitParams {
	msg := wordQuestion(ctx, message, &ConfirmCall{Tool: t.Name, Title: toolTitle(t), Effect: e, Arguments: req.Params.Arguments, Request: req})
	return &mcp.ElicitParams{
		Mode:    "form",
		Message: msg,
		// A form with no fields: the person only accepts, declines or
		// cancels. The properties object must be there, empty: the
		// TypeScript SDK refuses a form schema without one.
		RequestedSchema: &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{}},
	}
}

// wordQuestion words the question about call, by message if it words
// one, with what a person would not see for what it is written as
// escapes.
func wordQuestion(ctx context.Context, message func(context.Context, *ConfirmCall) string, call *ConfirmCall) string {
	var msg string
	if message != nil {
		msg = message(ctx, call)
	}
	if msg == "" {
		msg = defaultQuestion(call.Tool, call.Effect, call.Arguments)
	}
	return visible(msg)
}

// defaultQuestion words the question about a call to tool of effect e
// with args.
func defaultQuestion(tool string, e Effect, args json.RawMessage) string {
	var does string
	switch {
	case e&destructiveBit != 0:
		does = "It changes or deletes what exists"
	case e&Write != 0:
		does = "It adds data"
	default:
		does = "It reads data"
	}
	if e&OpenWorld != 0 {
		does += ", outside this server"
	}
	shown := "none"
	if a := bytes.TrimSpace(args); len(a) > 0 && !bytes.Equal(a, []byte("{}")) && !bytes.Equal(a, []byte("null")) {
		shown = clip(string(a), 500)
	}
	return fmt.Sprintf("Allow the tool %q to run? %s. Arguments: %s", tool, does, shown)
}

// visible returns s with each rune that a person would not see for what
// it is written as a Go escape: controls (but tab and newline), format
// characters such as U+202E and U+200B, invalid UTF-8, and what Unicode
// leaves unassigned.
func visible(s string) string {
	clean := true
	for _, r := range s {
		if !shows(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case shows(r):
			b.WriteRune(r)
		case r == utf8.RuneError:
			// The rune of a byte that is not UTF-8 (or U+FFFD itself).
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				fmt.Fprintf(&b, `\x%02x`, s[i])
			} else {
				b.WriteString(`\ufffd`)
			}
		case r > 0xffff:
			fmt.Fprintf(&b, `\U%08x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// shows reports whether r shows as itself: a letter, mark, number,
// punctuation, symbol or space separator (unicode.IsGraphic), a tab or
// a newline.
func shows(r rune) bool {
	return r == '\n' || r == '\t' || (r != utf8.RuneError && unicode.IsGraphic(r))
}
