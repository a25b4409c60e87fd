package mcpeffect

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// CodeNotConfirmed is the JSON-RPC error code of a call that needed a
// person's confirmation and did not get it. The error's data is a
// [NotConfirmedError] in JSON.
const CodeNotConfirmed = -32051

// A NotConfirmedError describes a call that [ConfirmOptions] made ask a
// person, and that did not run: the person declined or cancelled, the
// client could not ask, or the answer was not good for this call. It is
// the data of the JSON-RPC error the caller receives, which
// [AsNotConfirmedError] reads back.
type NotConfirmedError struct {
	Tool string `json:"tool"`
	// Effect is the effect of the call.
	Effect Effect `json:"effect"`
	// Answer is what came of the question: "decline" or "cancel" as the
	// person answered, another action a client sent, "unsupported" when
	// the client cannot ask a person, "failed" when asking failed
	// (Detail says why), "invalid" when the answer the client sent is not
	// one this server asked for this call (forged, replayed, for other
	// arguments or another caller).
	Answer string `json:"answer"`
	Detail string `json:"detail,omitempty"`
}

// Error says which tool did not run, and why, in plain words.
func (n *NotConfirmedError) Error() string {
	msg := fmt.Sprintf("mcpeffect: tool %q was not run: ", n.Tool)
	switch n.Answer {
	case "decline":
		return msg + "the person declined it when asked to confirm"
	case "cancel":
		return msg + "the person dismissed the confirmation without accepting"
	case "unsupported":
		return msg + "it needs a person's confirmation, and the client cannot ask one (it supports no form elicitation)"
	case "failed":
		return msg + "asking the person to confirm failed: " + n.Detail
	case "invalid":
		return msg + "the confirmation sent with the call is not one this server asked for this call: " + n.Detail
	}
	return msg + fmt.Sprintf("the answer to the confirmation was %q, not accept", n.Answer)
}

// AsNotConfirmedError reports whether err, as returned by a client's
// CallTool, is a call refused for want of a person's confirmation, and if
// so returns its [NotConfirmedError].
func AsNotConfirmedError(err error) (*NotConfirmedError, bool) {
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != CodeNotConfirmed || len(je.Data) == 0 {
		return nil, false
	}
	var n NotConfirmedError
	if json.Unmarshal(je.Data, &n) != nil || n.Tool == "" {
		return nil, false
	}
	return &n, true
}

// JSONRPCError returns the JSON-RPC error of a call that did not run for
// want of confirmation: code [CodeNotConfirmed], the message of
// [NotConfirmedError.Error], and n in JSON as its data, which
// [AsNotConfirmedError] reads back.
func (n *NotConfirmedError) JSONRPCError() (code int64, message string, data json.RawMessage) {
	e := n.rpcError()
	return e.Code, e.Message, e.Data
}

func (n *NotConfirmedError) rpcError() *jsonrpc.Error {
	data, err := json.Marshal(n)
	if err != nil {
		// Only an invalid effect fails to marshal; send it without.
		n.Effect = 0
		data, _ = json.Marshal(n)
	}
	return &jsonrpc.Error{Code: CodeNotConfirmed, Message: n.Error(), Data: data}
}
