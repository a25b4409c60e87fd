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

	// Authorization is the structured denial of SEP-2643 that the
	// refusal carries, in its data's _meta (see [AuthorizationDenial]),
	// set from Answer by the error's JSONRPCError when it is nil: a
	// person who declined or cancelled is not to be asked again for the
	// same call (unavailable); a client that cannot ask, or asking that
	// failed, leaves the remedy undisclosed (a client that could ask would
	// be asked); an answer that is not good for this call is remedied by
	// calling again and being asked ([ConfirmationHint]).
	Authorization *AuthorizationDenial `json:"-"`
}

// notConfirmedFields are the fields of a NotConfirmedError as its JSON
// has them, but the _meta member.
type notConfirmedFields NotConfirmedError

// MarshalJSON implements [json.Marshaler]: the fields, and the
// [AuthorizationDenial] in a _meta member, under [AuthorizationMetaKey].
func (n NotConfirmedError) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		notConfirmedFields
		Meta map[string]*AuthorizationDenial `json:"_meta,omitempty"`
	}{notConfirmedFields(n), authorizationMeta(n.Authorization)})
}

// UnmarshalJSON implements [json.Unmarshaler], reading what MarshalJSON
// writes.
func (n *NotConfirmedError) UnmarshalJSON(data []byte) error {
	v := struct {
		*notConfirmedFields
		Meta map[string]*AuthorizationDenial `json:"_meta"`
	}{notConfirmedFields: (*notConfirmedFields)(n)}
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	n.Authorization = v.Meta[AuthorizationMetaKey]
	return nil
}

// envelope returns the structured denial that Answer calls for.
func (n *NotConfirmedError) envelope() *AuthorizationDenial {
	switch n.Answer {
	case "unsupported", "failed":
		return newAuthorizationDenial(RemediationUndisclosed)
	case "invalid":
		return newAuthorizationDenial(RemediationAvailable, RemediationHint{Type: ConfirmationHint})
	}
	return newAuthorizationDenial(RemediationUnavailable)
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
	if n.Authorization == nil {
		n.Authorization = n.envelope()
	}
	data, err := json.Marshal(n)
	if err != nil {
		// Only an invalid effect fails to marshal; send it without.
		n.Effect = 0
		data, _ = json.Marshal(n)
	}
	return &jsonrpc.Error{Code: CodeNotConfirmed, Message: n.Error(), Data: data}
}
