package main

import (
	"fmt"
	"io"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/audit"
)

// hostsHelp writes every host and directory profile, with its source,
// the date it was read and its confidence.
func hostsHelp(w io.Writer) {
	fmt.Fprint(w, `Host profiles (audit -host): what each host does with a tool before a call,
from the tool's hints, mode by mode. Hosts change: each profile names its
source and the date it was read. Confidence is high where the code was read,
medium for official documentation, code quoted by a survey that names its
commit, or code read in copies that name no commit of the host's repository,
low for changelogs, issue and forum threads, third-party readings of binaries,
and pages whose rule could not be found again.

`)
	for _, p := range audit.HostProfiles() {
		def := ""
		if p.Default {
			def = ", the default"
		}
		fmt.Fprintf(w, "%s (-host %s), %s%s: read %s, %s confidence\n", p.HostName, p.Host, p.ModeName, def, p.Read, p.Confidence)
		if p.IgnoresHints {
			fmt.Fprintf(w, "    ignores the hints; what decides: %s\n", p.Instead)
		} else {
			fmt.Fprintf(w, "    rule: %s\n", p.Rule)
		}
		for _, n := range p.Notes {
			fmt.Fprintf(w, "    - %s\n", n)
		}
		fmt.Fprintf(w, "    source: %s\n", p.Source)
	}
	fmt.Fprint(w, `
Not profiled: Devin (Windsurf), whose changelogs first limited plan mode to
readOnlyHint true tools and then gave it the normal permission system; Copilot
CLI, whose current native builds were not read; Cursor's Agent mode.

Directory profiles (audit -profile): the rules by which app directories review
servers, as far as a tool list shows them. An error is a rule the directory
documents as a reason to reject.

`)
	for _, p := range audit.DirectoryProfiles() {
		fmt.Fprintf(w, "%s (-profile %s):\n", p.Title, p.Name)
		for _, r := range p.Rules {
			fmt.Fprintf(w, "  %-8s %-40s %s\n", r.Level, r.Rule, r.Summary)
			fmt.Fprintf(w, "           read %s, %s confidence: %s\n", r.Read, r.Confidence, r.Source)
		}
	}
	fmt.Fprint(w, `
A catch-all tool is found by its input schema: an argument whose enum (or
oneOf/anyOf of consts, or the enum of its items) mixes safe HTTP methods (GET,
HEAD, OPTIONS) with unsafe ones (POST, PUT, PATCH, DELETE), or values that read
(list, get) with values that write or delete (create, delete). A tool list
cannot show: whether hints match what tools really do; whether a description
is accurate, or steers the model; a catch-all whose arguments choose between
reading and writing in free text (SQL, GraphQL, a shell command, a URL, an
HTTP method without an enum) or in its description only; schemas behind $ref.
No title or name-length rule was found for the ChatGPT directory.
`)
}
