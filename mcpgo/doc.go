// Package mcpgo brings mcpeffect to MCP servers built on
// github.com/mark3labs/mcp-go: one effect per tool, from which both the
// tool's advertised annotations and the check of every call are derived.
package mcpgo
