package mcpeffect

// The wire names of the drafts of the MCP specification that this package
// follows, each in one constant, so that a change of a draft is a change
// of one line. The README names the revision of each draft followed.

// SEP-2643, structured authorization denials: the envelope that every
// refusal carries (see [AuthorizationDenial]).
const (
	// AuthorizationDenialsExtension identifies the extension, in the
	// capabilities that the middleware advertises.
	AuthorizationDenialsExtension = "io.modelcontextprotocol/structured-authorization-denials"
	// AuthorizationMetaKey is the key of the envelope in a _meta object.
	AuthorizationMetaKey = "io.modelcontextprotocol/authorization"
	// AuthorizationContextIDMetaKey is the key under which a client
	// echoes the envelope's authorizationContextId in the _meta of its
	// retry.
	AuthorizationContextIDMetaKey = "io.modelcontextprotocol/authorization-context-id"

	reasonInsufficientAuthorization = "insufficient_authorization"
)

// The values of [AuthorizationDenial] Remediation.
const (
	// RemediationAvailable: a remediation exists and the client may
	// pursue it.
	RemediationAvailable = "available"
	// RemediationUnavailable: none exists; the client must not retry the
	// request unchanged, nor begin a reauthorization.
	RemediationUnavailable = "unavailable"
	// RemediationUndisclosed: one may exist and the server does not
	// describe it.
	RemediationUndisclosed = "undisclosed"
)

// The types of the remediation hints this package sends. The draft
// defines url, task and authorization_remediation (an RFC 9396 request,
// which OAuth scopes are not); a client must ignore a type it does not
// know, so the two that are not the draft's are named in this project's
// namespace.
const (
	// URLHint: the draft's own type for a person's action at a URL,
	// given in a URL-mode elicitation beside the denial (the input
	// request of a question that [ConfirmOptions] AskPerson puts on a
	// page).
	URLHint = "url"
	// ScopeHint: a credential with the scope string of the hint's Scope
	// allows the operation (the step-up that the HTTP challenge asks
	// for, on every transport).
	ScopeHint = "io.github.mcpeffect/scope"
	// ConfirmationHint: a person's yes allows the call, and calling again
	// asks them.
	ConfirmationHint = "io.github.mcpeffect/confirmation"
)
