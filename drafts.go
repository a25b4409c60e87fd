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

// SEP-3182, request idempotency: a tools/call that carries a key runs at
// most once (see [IdempotencyOptions]).
const (
	// IdempotencyKeyParam is the member of the params of a tools/call
	// that carries the caller's key.
	IdempotencyKeyParam = "idempotencyKey"
	// IdempotencyCapability is the member of a server's
	// capabilities.tools by which it declares that it honors keys.
	IdempotencyCapability = "idempotency"
	// IdempotencyKeyConflict is the type, in the error data, of a key
	// sent again with another tool or other arguments.
	IdempotencyKeyConflict = "idempotency_key_conflict"
	// IdempotencyKeyInProgress is the type, in the error data, of a key
	// sent again while the call that first carried it still runs.
	IdempotencyKeyInProgress = "idempotency_key_in_progress"
)

// SEP-3172, recovery metadata: the operation that undoes a tool's effect
// (see [Recovery]).
const (
	// RecoveryAnnotation is the member of a tool's annotations that holds
	// its [Recovery].
	RecoveryAnnotation = "recovery"
	// RecoveryCompensation is the one strategy the draft defines: a call
	// of another tool of the same server undoes the effect.
	RecoveryCompensation = "compensation"
	// ResponseBodyExpression begins a runtime expression (OpenAPI 3.0's,
	// which the draft adopts) that reads the response of the original
	// call: here, the structured content of its result.
	ResponseBodyExpression = "$response.body#"
	// RequestBodyExpression begins a runtime expression that reads the
	// original call's request: here, its arguments.
	RequestBodyExpression = "$request.body#"
)
