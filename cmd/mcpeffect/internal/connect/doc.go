// Package connect reaches an MCP server for the commands of mcpeffect:
// a [Target], a command run over stdio or a Streamable HTTP endpoint,
// opens bounded sessions with it, every message read bounded by its
// [Limits] and everything done by its Timeout, so that no server, broken
// or hostile, can hold its client without end; [List] and
// [Session.ListTools] list its tools as sent (a [Listed] each, with what
// it publishes of its outcomes); and each failure is a [*ConnectError],
// which says what happened and what to do.
package connect
