// Mcpeffect checks what the tools of MCP servers declare they do, what
// hosts will do with them, and what a new version changed.
//
// Usage:
//
//	mcpeffect <command> [arguments]
//
// The commands are:
//
//	audit   check the tool annotations of any MCP server
//	diff    compare the tools of two versions of a server; fail if one may do more
//	verify  prove the hints of any MCP server's tools by calling them
//	help    show the help of a command, or of the host profiles (help hosts)
//
// # Audit
//
//	mcpeffect audit [-format text|json|sarif|markdown] [-host NAME,...|all] [-profile NAME,...|all] [-fail-on warning|error] [-timeout d] -- command [args...]
//	mcpeffect audit [-format text|json|sarif|markdown] [-host NAME,...|all] [-profile NAME,...|all] [-fail-on warning|error] [-timeout d] -url URL [-header "Name: value"]...
//
// Audit connects to an MCP server, lists all its tools, following
// pagination, and reports for each tool the four hints it declares
// (readOnlyHint, destructiveHint, idempotentHint, openWorldHint), the value
// that hosts must assume for each hint left out (the worst case), the
// effect the hints amount to, and findings:
//
//	error    no-annotations               none of the four hints
//	error    read-only-and-destructive    readOnlyHint and destructiveHint both true
//	warning  missing-destructive-hint     a write without destructiveHint
//	warning  missing-idempotent-hint      a write without idempotentHint
//	warning  missing-open-world-hint      any tool without openWorldHint
//	warning  delete-name-not-destructive  a word such as delete or remove, not destructive
//	warning  read-name-not-read-only      a word such as get or list and none that writes, not read-only
//	warning  write-name-read-only         a word such as create or update, read-only
//	error    outcome-wider-than-hints     a published outcome that may do more than the hints say
//	warning  outcomes-malformed           published outcomes that cannot be read
//	warning  recovery-malformed           a published undo (SEP-3172) that cannot be used
//	error    recovery-of-read             a read that publishes an undo
//	warning  recovery-undo-unlisted       an undo that names a tool the server does not list
//	error    recovery-undo-read-only      an undo that is a read
//	warning  recovery-undo-unhinted       an undo without readOnlyHint
//	warning  recovery-parameters          an undo whose parameters the schemas cannot bind
//	error    duplicate-name               two tools of the same name
//
// Every word of a name is read, words being separated by _ - . (any
// character that is neither a letter nor a digit) or a change of case:
// kubectl_delete, API-delete-a-block, deleteRepo and repo.remove all
// delete. A tool without any hint gets the no-annotations error and no
// other finding. A read's destructiveHint and idempotentHint, which the
// specification reads only for writes, are shown as n/a when missing.
//
// A tool whose effect depends on its arguments may publish the outcome of
// each kind of call in its _meta, as a server built with mcpeffect does
// under "io.github.mcpeffect/outcomes": by the value of one argument
// (action="get"), or as the effects its calls may have. Each outcome is
// shown under its tool, and with -host what the host does with its calls:
// what it does with the tool, since hosts decide from the tool's hints,
// the worst case. The outcomes are the server's claim, shown and checked,
// trusted for nothing else: one that may do more than the tool's hints say
// is an error, and outcomes that cannot be read a warning. A tool the
// server marks resolvable (the experimental tool-resolution extension) is
// named.
//
// A tool may publish its undo (SEP-3172): the tool whose call undoes a
// call of it, each argument bound from the call's arguments
// ($request.body#/ptr) or its result's structured content
// ($response.body#/ptr), in annotations.recovery, where the draft puts it,
// or in _meta "io.github.mcpeffect/recovery", where servers built with
// mcpeffect put it. Each undo is shown, and checked against the tools the
// server lists and their schemas (the recovery-* rules). Whether the
// server declares capabilities.tools.idempotency (SEP-3182: a call with
// an idempotency key runs at most once) is said under the summary when it
// does, and is in the JSON always.
//
// -host says what hosts (VS Code, Claude Code, Codex, GitHub Copilot,
// Gemini CLI, goose, Cursor, ChatGPT, Claude Cowork, and hosts that ignore
// hints: Cline, Continue, Zed and others) do with each tool before a
// call, mode by mode: run it without asking, ask first, ask every time
// whatever was approved before, refuse it, leave it to a language model,
// or leave it to their own settings; and whether a person reviews its
// output before the model reads it. Each profile is one row of a table in
// the code, with the host's rule as a function of the hints, read as that
// host reads a missing one, its source and the date it was read: hosts
// change, and the report shows the date.
//
// -profile checks each tool against the rules by which the Claude and
// ChatGPT app directories review servers, as far as a tool list shows
// them (claude-directory, chatgpt-directory): a title, explicit hints, a
// name of at most 64 characters, no catch-all tool whose argument chooses
// between reading and writing. A rule the directory documents as a reason
// to reject is an error. 'mcpeffect help hosts' lists every profile and
// rule with its source, date and confidence, and what cannot be checked.
//
// The server is either a command, run over stdio, given after the flags and
// best after --, so that its own flags are not read as audit's; it inherits
// the environment, and its standard error is kept, its last lines shown if
// the audit fails. Or it is a Streamable HTTP endpoint, given with -url;
// -header, repeatable, adds a header to every request, such as a bearer
// token:
//
//	mcpeffect audit -- npx -y @modelcontextprotocol/server-everything
//	mcpeffect audit -url https://example.com/mcp -header "Authorization: Bearer $TOKEN"
//
// The report is a table for people, coloured when standard output is a
// terminal and NO_COLOR is not set; a hint left out is shown in
// parentheses, with the value assumed. -format json (or -json) writes one
// JSON object
// with the server's name, version and protocol version, the tools with
// their title, description, hints as declared (a missing hint is absent)
// and as assumed, their effect, and the outcomes and the undo they
// publish, the findings, a summary (counts of tools, reads, writes,
// destructive writes, idempotent writes, open-world tools, errors,
// warnings and tools with an undo, and whether the server declares
// idempotency), and with -host and -profile what each host
// does with each tool and what each directory would reject.
// -format sarif writes the findings as a SARIF 2.1.0 log, for GitHub code
// scanning and other SARIF readers, each result at the file -location
// names, and at the tool; -format markdown writes them as a table, for a
// pull-request comment or a job summary. diff takes the same -format: its
// Markdown has one line for each tool that changed.
//
// -timeout bounds the whole audit, the server's shutdown included: when
// the time is up, a server run as a command is killed, with the processes
// it started. When the audit cannot run, the error says what happened and
// what to do: a server that stopped, with its exit status and the last
// lines of its standard error; an HTTP answer such as 401 (give a token
// with -header) or 404 (check the path of -url); an address where nothing
// listens; a limit passed; an error the server answered, its
// message quoted; a repeated cursor; a tool entry of the wrong type.
//
// What the audit reads is bounded, so that no server can make it hold
// memory without end: one message of at most 16 MiB (a line over stdio;
// over HTTP, an answer whole, JSON body or event stream) and 2000000 JSON
// values, which bound what it holds once decoded; at most 10000 tools,
// and 1000 pages of them. Past a limit the audit fails with an error that
// names it.
//
// The exit status is 0 when there is no finding at the level of -fail-on
// (error by default) or worse, 1 when there is, and 2 when the audit could
// not run, with the reason on standard error; bad usage is 2 as well.
//
// # Diff
//
//	mcpeffect diff [-format text|json|sarif|markdown] [-header "Name: value"]... [-timeout d] OLD NEW
//	mcpeffect diff [-format text|json|sarif|markdown] [-header "Name: value"]... [-timeout d] OLD -- command [args...]
//
// Diff compares the tools of two versions of a server. Each side is a
// file (the output of audit -json, or the manifest of an mcpeffect
// Registry; - for standard input), an http:// or https:// URL, or, for
// the new side only, a command after --. It reports the tools added and
// removed, and every change that widens what a tool may do, as hosts that
// assume the worst for a missing hint see it (read-to-write,
// now-destructive, now-non-idempotent, now-open-world, hint-removed), every
// narrowing, and changes of title and description, which can steer a
// model. A tool whose effect depends on its arguments is also compared
// outcome by outcome where both sides have its outcomes (a manifest lists
// them; a report or a live server has those its server publishes): an
// outcome that may do more widens, even when the tool's worst case does
// not change (outcome-added widens when the new outcome may do more than
// every one before it); removed outcomes, another argument selecting them,
// and outcomes no longer listed are reported. So are an undo that
// appeared, changed or went, and the idempotency capability declared or
// withdrawn, where both sides have them (a live server, or a report that
// has them); none of these widens. The exit status is 0 when nothing widened, 1 when something did,
// and 2 when the diff could not run: a check for CI, against a report
// saved with the last release.
//
// # Verify
//
//	mcpeffect verify -examples FILE [-json] [-timeout d] [-parallel n] [-sqlite-reader PATH] -- command [args...]
//	mcpeffect verify -examples FILE [-json] [-timeout d] [-sqlite-reader PATH] -url URL [-header "Name: value"]...
//
// Verify proves the hints of a server's tools by calling them, by the
// rules and with the engine of mcpeffecttest.Verify: for each example of
// the examples file, on a fresh instance of the server, it makes the
// example's fixtures through the server's own tools, captures the state
// (a directory tree, a SQLite database, a JSON file, what a command
// prints, or several of these), calls the tool twice with the same
// arguments, and captures the state after each call. A read must change
// nothing, a write that is not destructive may only add, and an
// idempotent write's repeat must change nothing. A tool whose effect
// depends on its arguments, one that publishes its outcomes, is held call
// by call to the outcome its arguments select, and to its hints. An
// example with "undo": true has the tool's undo checked too, on an
// instance of its own: the call, then the undo bound from it, and the
// state held to the one before the call. Each tool is proven, a lie (naming the record and field, with
// the values before and after), over-cautious (its hints claim more than
// any example showed), failed or not examined. mcpeffect help verify
// explains the examples file; the exit status is 0 when every examined
// tool is proven, 1 when not, and 2 when verify could not run.
package main
