package mcpeffect

import (
	"crypto/rand"
	"encoding/base64"
)

// An AuthorizationDenial is the structured denial of SEP-2643 (see the
// README for the revision followed), which every refusal of this package
// carries beside its code, message and data: the same object on every
// transport, stdio and in memory included, where no HTTP challenge can
// say what a client may do about a refusal. The draft puts it in the
// _meta of the result that expresses a denial; a refusal of this package
// is a JSON-RPC error, so it is in the _meta member of the error's data,
// under [AuthorizationMetaKey], where [AsDeniedError] and
// [AsNotConfirmedError] read it back. A result that asks a person to
// confirm a call carries it in its own _meta.
type AuthorizationDenial struct {
	// Reason is "insufficient_authorization", the one reason the draft
	// defines.
	Reason string `json:"reason"`
	// Remediation says whether the refusal can be acted on:
	// [RemediationAvailable], [RemediationUnavailable] or
	// [RemediationUndisclosed].
	Remediation string `json:"remediation"`
	// AuthorizationContextID is an opaque handle of this refusal, random,
	// for a client to echo on its retry (in its _meta, under
	// [AuthorizationContextIDMetaKey]) and for logs to quote. It is no
	// authorization: a retry is decided afresh.
	AuthorizationContextID string `json:"authorizationContextId,omitempty"`
	// RemediationHints say how, when Remediation is available.
	RemediationHints []RemediationHint `json:"remediationHints,omitempty"`
}

// A RemediationHint says how a refusal may be remedied: by a credential
// with the scope string Scope ([ScopeHint]), or by a person's
// confirmation ([ConfirmationHint]).
type RemediationHint struct {
	Type  string `json:"type"`
	Scope string `json:"scope,omitempty"`
}

// newAuthorizationDenial returns an envelope with a new context handle.
func newAuthorizationDenial(remediation string, hints ...RemediationHint) *AuthorizationDenial {
	return &AuthorizationDenial{
		Reason:                 reasonInsufficientAuthorization,
		Remediation:            remediation,
		AuthorizationContextID: newContextID(),
		RemediationHints:       hints,
	}
}

// newContextID returns an opaque, random handle: it encodes nothing of
// the operation, the caller or the rule, as the draft asks.
func newContextID() string {
	var b [12]byte
	rand.Read(b[:])
	return "authz_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// authorizationMeta returns the _meta member that carries a, or nil for
// no envelope.
func authorizationMeta(a *AuthorizationDenial) map[string]*AuthorizationDenial {
	if a == nil {
		return nil
	}
	return map[string]*AuthorizationDenial{AuthorizationMetaKey: a}
}
