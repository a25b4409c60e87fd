package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/policy"
	"github.com/mcpeffect/mcpeffect/manifest"
)

const policyUsage = `usage: mcpeffect policy -format cedar|rego|cel [-claim NAME] [scope names] [-timeout d] -- command [args...]
       mcpeffect policy -format cedar|rego|cel [-claim NAME] [scope names] [-timeout d] -url URL [-header "Name: value"]...
       mcpeffect policy -format cedar|rego|cel [-claim NAME] [scope names] -manifest FILE [-key PUBLIC-KEY]`

func policyCommand() *command {
	return &command{
		name:    "policy",
		summary: "write mcpeffect's decision as a gateway's policy: Cedar, Rego or CEL",
		run:     runPolicy,
		help:    policyHelp,
	}
}

func policyHelp(w io.Writer) {
	fmt.Fprintf(w, "%s\n\n", policyUsage)
	fmt.Fprint(w, `Policy writes, for a gateway that decides before the server does, the
policy that makes mcpeffect's decision for each tool and each scope: a tool
needs the read-only, non-destructive or full scope by its effect, a tool
the server does not list is refused. The effects are written into the
policy, pinned: the gateway never reads the hints the server sends, so a
server that changes them later changes no decision (and 'mcpeffect diff'
against a manifest of it, or 'mcpeffect manifest -check', says so).

-format says which:

  cedar  ToolHive's authorization configuration (its --authz-config file):
         Cedar policies in the vocabulary of ToolHive's Cedar authorizer,
         Tool::"name", Action::"call_tool", the arguments as context
         "arg_<name>", the token's scopes as the set "claimset_<claim>"
         (the configuration lists the claim in multi_valued_claims).
  rego   a Rego module for OPA, package mcpeffect, decision
         data.mcpeffect.allow, over the input document it documents: the
         method, the tool's or prompt's name or the resource's URI, the
         arguments and the caller's scope strings.
  cel    the mcpAuthorization rules of agentgateway, one per scope, over
         mcp.tool.name and the token's claims (jwt.<claim>).

A tool whose effect depends on its arguments is decided by them in Cedar
and Rego, as mcpeffect reads them; agentgateway's rules see no arguments,
so there it is given its worst case, and the output says so. So is a tool
whose effect the server computes with a function of its own, in all three.

The tools come from a server, listed now (a command after --, or -url), or
from a manifest (-manifest FILE): 'mcpeffect manifest' writes one from a
server, and manifest.Of one from a registry; -key checks its signature. A
live server does not publish the scopes of its resources and prompts: a
policy from one lets any caller with a scope reach them, and leaves them to
the server. A manifest of the registry holds them, and its policy decides
them: resources by URI and template, prompts by name.

The scope strings are the server's (mcpeffect.ScopeNames): give them with
-read-only-scope, -non-destructive-scope and -full-scope if they are not
the defaults. -claim names the token's claim that holds them (scope).

The exit status is 0 when the policy was written, and 2 when it could not
be. Notes about the policy go to standard error.

Flags:
`)
	fs, _ := policyFlags()
	fs.SetOutput(w)
	fs.PrintDefaults()
}

type policyOptions struct {
	format   string
	manifest string
	key      string
	claim    string
	names    mcpeffect.ScopeNames
	server   targetFlags
}

func policyFlags() (*flag.FlagSet, *policyOptions) {
	o := &policyOptions{}
	fs := flag.NewFlagSet("policy", flag.ContinueOnError)
	fs.StringVar(&o.format, "format", "", "write the policy in `cedar` (ToolHive), rego (OPA) or cel (agentgateway)")
	fs.StringVar(&o.manifest, "manifest", "", "read the tools from the manifest `FILE` rather than from a server")
	fs.StringVar(&o.key, "key", "", "check the signature of -manifest with the public key in `FILE` (PEM)")
	fs.StringVar(&o.claim, "claim", "scope", "the `name` of the token's claim that holds its scopes")
	registerScopeNames(fs, &o.names)
	o.server.register(fs, "list the tools of", 30*time.Second)
	return fs, o
}

// registerScopeNames defines the flags of the scope strings on fs.
func registerScopeNames(fs *flag.FlagSet, n *mcpeffect.ScopeNames) {
	fs.StringVar(&n.ReadOnly, "read-only-scope", mcpeffect.DefaultReadOnlyScope, "the scope `string` that grants read-only")
	fs.StringVar(&n.NonDestructive, "non-destructive-scope", mcpeffect.DefaultNonDestructiveScope, "the scope `string` that grants non-destructive")
	fs.StringVar(&n.Full, "full-scope", mcpeffect.DefaultFullScope, "the scope `string` that grants full")
}

func runPolicy(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	bad := func(msg string) int { return badUsage(stderr, "policy", policyUsage, msg) }
	fail := func(format string, a ...any) int { return failed(stderr, "policy", format, a...) }
	fs, o := policyFlags()
	if code, done := parseFlags(fs, args, "policy", policyUsage, policyHelp, stdout, stderr); done {
		return code
	}
	switch o.format {
	case "cedar", "rego", "cel":
	case "":
		return bad("give -format cedar, rego or cel")
	default:
		return bad(fmt.Sprintf("-format %q: want cedar, rego or cel", o.format))
	}
	if err := o.names.Validate(); err != nil {
		return bad(strings.TrimPrefix(err.Error(), "mcpeffect: "))
	}
	if o.claim == "" || strings.ContainsAny(o.claim, "\x00\r\n") {
		return bad(fmt.Sprintf("-claim %q is not the name of a claim", o.claim))
	}
	m, source, code := loadTools(ctx, "policy", o.manifest, o.key, fs.Args(), o.server, o.names, stderr)
	if code != exitOK {
		return code
	}
	set, err := policy.FromManifest(m, o.names, source)
	if err != nil {
		return fail("%s: %v", source, err)
	}
	switch o.format {
	case "cedar":
		err = set.WriteToolHive(stdout, policy.CedarOptions{Claim: o.claim})
	case "rego":
		err = set.WriteRego(stdout)
	case "cel":
		err = set.WriteAgentgateway(stdout, policy.CELOptions{Claim: o.claim})
	}
	if err != nil {
		return fail("writing the policy: %v", err)
	}
	for _, t := range set.Tools {
		switch {
		case !t.DependsOnArguments():
		case t.Computed:
			fmt.Fprintf(stderr, "mcpeffect policy: note: tool %q computes its effect from its arguments with the server's own function: every call has its worst case (%v) in the policy\n", t.Name, t.Effect)
		case o.format == "cel":
			fmt.Fprintf(stderr, "mcpeffect policy: note: tool %q depends on its argument %q, which agentgateway's rules do not see: every call has its worst case (%v) in the policy\n", t.Name, t.Argument, t.Effect)
		}
	}
	if set.Unscoped {
		fmt.Fprintf(stderr, "mcpeffect policy: note: a live server does not publish the scopes of its resources and prompts: the policy lets any caller with a scope reach them, and the server decides; write it from a manifest of the registry (-manifest) to decide them\n")
	}
	return exitOK
}

// loadTools reads the manifest of the tools that the flags of the command
// name: a manifest file, checked with the public key in key if given, or
// a server listed now. It returns the exit code and writes the error if
// it could not.
func loadTools(ctx context.Context, cmd, file, key string, command []string, server targetFlags, names mcpeffect.ScopeNames, stderr io.Writer) (*manifest.Manifest, string, int) {
	bad := func(msg string) (*manifest.Manifest, string, int) { return nil, "", badUsage(stderr, cmd, "", msg) }
	fail := func(format string, a ...any) (*manifest.Manifest, string, int) {
		return nil, "", failed(stderr, cmd, format, a...)
	}
	if file != "" {
		if len(command) > 0 || server.url != "" || len(server.header) > 0 {
			return bad("give either -manifest or a server (a command, or -url), not both")
		}
		data, err := readFile(file)
		if pe, ok := err.(*os.PathError); ok {
			err = pe.Err
		}
		if err != nil {
			return fail("%s: %v", file, err)
		}
		var m *manifest.Manifest
		if key != "" {
			pub, err := readPublicKey(key)
			if err != nil {
				return fail("%v", err)
			}
			if m, err = manifest.Verify(data, pub); err != nil {
				return fail("%s: %v", file, strings.TrimPrefix(err.Error(), "mcpeffect: "))
			}
		} else {
			if m, err = manifest.Parse(data); err != nil {
				return fail("%s: %v", file, strings.TrimPrefix(err.Error(), "mcpeffect: "))
			}
			if m.Signature != "" {
				fmt.Fprintf(stderr, "mcpeffect %s: note: %s is signed, and its signature was not checked: give -key\n", cmd, file)
			}
		}
		return m, file, exitOK
	}
	if key != "" {
		return bad("-key checks the signature of -manifest: give -manifest")
	}
	target, msg := server.target(command)
	if msg != "" {
		return bad(msg)
	}
	m, err := policy.FromServer(ctx, target, names, time.Now())
	if err != nil {
		return fail("%s: %v", target, err)
	}
	return m, target.String(), exitOK
}

// readPublicKey reads the Ed25519 public key in the PEM file path (or the
// private key it belongs to).
func readPublicKey(path string) ([]byte, error) {
	data, err := readFile(path)
	if pe, ok := err.(*os.PathError); ok {
		err = pe.Err
	}
	if err != nil {
		return nil, fmt.Errorf("-key %s: %v", path, err)
	}
	pub, err := manifest.ParsePublicKey(data)
	if err != nil {
		return nil, fmt.Errorf("-key %s: %v", path, strings.TrimPrefix(err.Error(), "mcpeffect: "))
	}
	return pub, nil
}
