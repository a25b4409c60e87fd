// Package write writes the reports of mcpeffect's commands, each in the
// formats its -format takes: the audit's and the diff's (package audit)
// and verify's (package verify), as text for people, JSON for programs,
// SARIF for code-scanning readers, Markdown for a pull-request comment,
// and verify's justifications for app directories. Every text that came
// from a server is escaped for where it goes.
package write
