package telemetry

import (
	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.39.0"
)

// The names this package puts on the wire, each in one place, so that a
// change of the conventions is one line. Those of the OpenTelemetry MCP
// semantic conventions come from semconv v1.39.0, whose names agree with
// the conventions' current text (see the README for the revision); those
// of mcpeffect's own are namespaced "mcpeffect.".
const (
	// ScopeName is the instrumentation scope of the tracer and the meter.
	ScopeName = "github.com/mcpeffect/mcpeffect/telemetry"

	// AttrDecision is what mcpeffect decided of the operation:
	// [DecisionAllow], [DecisionDeny] or [DecisionConfirm].
	AttrDecision = attribute.Key("mcpeffect.decision")
	// AttrAnswer is what came of a confirmation, as [mcpeffect.Decision]
	// Answer words it ("accept", "decline", "cancel", "unasked", ...).
	AttrAnswer = attribute.Key("mcpeffect.confirm.answer")
	// AttrEffect is the effect of a tools/call, as [mcpeffect.Effect]
	// writes it ("read", "write|destructive|idempotent").
	AttrEffect = attribute.Key("mcpeffect.effect")
	// AttrScope is the caller's scope ("none", "read-only",
	// "non-destructive", "full").
	AttrScope = attribute.Key("mcpeffect.scope")
	// AttrRequired is the scope a refused operation needs.
	AttrRequired = attribute.Key("mcpeffect.scope.required")

	// The values of AttrDecision.
	DecisionAllow   = "allow"
	DecisionDeny    = "deny"
	DecisionConfirm = "confirm"

	// MetricDecisions counts the decisions, by method, tool, decision and
	// scope: each once, a confirmation that is asked as "confirm".
	MetricDecisions = "mcpeffect.decisions"
	// MetricConfirmations counts the answers to confirmations, by method,
	// tool, answer and scope.
	MetricConfirmations = "mcpeffect.confirmations"

	// EventDecision marks on an operation's span each decision of a call
	// that needs a person's confirmation, when it was made: that it needs
	// one (AttrDecision confirm), then the answer (with AttrAnswer).
	EventDecision = "mcpeffect.decision"

	// ErrorTool is the error.type of a tools/call whose result is an
	// error (isError), as the conventions name it.
	ErrorTool = "tool_error"
)

// The keys of the conventions that this package sets.
const (
	keyMethod          = semconv.McpMethodNameKey
	keyTool            = semconv.GenAIToolNameKey
	keyPrompt          = semconv.GenAIPromptNameKey
	keyOperationName   = semconv.GenAIOperationNameKey
	keyResource        = semconv.McpResourceURIKey
	keySession         = semconv.McpSessionIDKey
	keyProtocolVersion = semconv.McpProtocolVersionKey
	keyRequestID       = semconv.JSONRPCRequestIDKey
	keyStatusCode      = semconv.RPCResponseStatusCodeKey
	keyErrorType       = semconv.ErrorTypeKey
	keyTransport       = semconv.NetworkTransportKey
)

// The values of the conventions that this package sets.
var (
	executeTool = semconv.GenAIOperationNameExecuteTool
	errorOther  = semconv.ErrorTypeOther.Value.AsString()
)

// The MCP methods whose target this package names.
const (
	methodCallTool     = "tools/call"
	methodGetPrompt    = "prompts/get"
	methodReadResource = "resources/read"
	methodSubscribe    = "resources/subscribe"
	methodUnsubscribe  = "resources/unsubscribe"
	methodComplete     = "completion/complete"
)

// durationBuckets are the bucket boundaries, in seconds, that the
// conventions advise for mcp.server.operation.duration.
var durationBuckets = []float64{0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300}
