// Done is a task server for people and their agents, over MCP. It is the
// example server of mcpeffect: each tool declares its effect once, where it
// is added, and from that one declaration come both the annotations that
// hosts read and the scope that a token needs to call the tool.
//
// Usage:
//
//	done-server [serve] [-data DIR] [-http ADDR] [-scope SCOPE]
//	done-server token create [-data DIR] -scope SCOPE -kind KIND [-name NAME] [-expires DURATION]
//	done-server token list [-data DIR]
//	done-server token revoke [-data DIR] ID
//
// Without -http, Done serves one client over stdin and stdout, with the
// token whose secret is in the environment variable DONE_TOKEN or, without
// it, as the owner of the data directory; -scope caps what that connection
// may do. With -http, it serves Streamable HTTP at /mcp, each request
// carrying its token as a bearer token.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/connector"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "done-server:", err)
		}
		os.Exit(2)
	}
}

const defaultDataDir = "./done-data"

// run runs the command line args. stdout carries only what the command
// produces (a token's secret); everything for the person goes to stderr,
// which over stdio is also the only place a server may write to.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, getenv, stderr)
	case "token":
		sub := ""
		if len(args) > 0 {
			sub, args = args[0], args[1:]
		}
		switch sub {
		case "create":
			return createToken(ctx, args, getenv, stdout, stderr)
		case "list":
			return listTokens(ctx, args, stdout, stderr)
		case "revoke":
			return revokeToken(ctx, args, stdout, stderr)
		}
		return errors.New("usage: done-server token create|list|revoke (-h for each one's flags)")
	}
	return fmt.Errorf("unknown command %q (want serve or token)", cmd)
}

func serve(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data", defaultDataDir, "the data `directory`, created if missing")
	httpAddr := fs.String("http", "", "serve Streamable HTTP on this `address` (such as 127.0.0.1:8080) instead of stdio")
	scopeCap := fs.String("scope", "full", "over stdio, the most the connection may do, whatever its token allows: read-only, non-destructive or full")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	maxScope, err := mcpeffect.ParseScope(*scopeCap)
	if err != nil || maxScope == 0 {
		return fmt.Errorf("serve: -scope must be read-only, non-destructive or full (got %q)", *scopeCap)
	}
	if *httpAddr != "" && maxScope != mcpeffect.Full {
		return errors.New("serve: -scope caps a stdio connection; over HTTP each request has the scope of its own token (mint a read-only one for a read-only client)")
	}

	logger := slog.New(slog.NewTextHandler(stderr, nil))
	st, created, err := store.Open(ctx, *dataDir, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	// The default source of documents of the connector tools: Markdown
	// and text files next to the database.
	folder, err := connector.NewFolder("local", filepath.Join(*dataDir, "context"))
	if err != nil {
		return err
	}
	cfg := config{connectors: []connector.Connector{folder}}

	if *httpAddr != "" {
		if created {
			fmt.Fprintf(stderr, `Done created its data in %s. Every request over HTTP needs a token; mint the first with:

	done-server token create -data %s -scope full -kind human -name "$USER"

It prints the token's secret, for the header "Authorization: Bearer <secret>".

`, *dataDir, *dataDir)
		}
		return serveHTTP(ctx, st, logger, cfg, *httpAddr)
	}

	if secret := getenv("DONE_TOKEN"); secret != "" {
		k, err := st.Authenticate(ctx, secret)
		if err != nil {
			return fmt.Errorf("DONE_TOKEN: %w", err)
		}
		return serveStdio(ctx, st, logger, cfg, k, stdioCredential{secret: secret}, maxScope)
	}

	// Without DONE_TOKEN, the person who runs the process on the data
	// directory is its owner: they could read the database anyway.
	k, ownerCreated, err := st.Owner(ctx, ownerName(getenv))
	if err != nil {
		return fmt.Errorf("making the owner token: %w", err)
	}
	if k.RevokedAt != "" {
		return fmt.Errorf(`the owner token %s of %q was revoked on %s, so without DONE_TOKEN Done no longer serves over stdio.
Set DONE_TOKEN to the secret of a live token, such as one from:
	done-server token create -data %s -scope full -kind human -name %q`, k.ID, k.Name, k.RevokedAt, *dataDir, k.Name)
	}
	if ownerCreated {
		where, err := filepath.Abs(*dataDir)
		if err != nil {
			where = *dataDir
		}
		fmt.Fprintf(stderr, `Done keeps its data in %s.
Over stdio without DONE_TOKEN, it serves you as the owner of that directory: %q, a person with
full scope (add -scope read-only or -scope non-destructive to allow less). To give an agent a
token of its own, or to serve over HTTP, where every request needs a token:

	done-server token create -data %s -scope non-destructive -kind agent -name my-agent
	done-server serve -data %s -http 127.0.0.1:8080

token create prints the secret: set it as DONE_TOKEN, or send it as "Authorization: Bearer <secret>".

`, where, k.Name, *dataDir, *dataDir)
	}
	return serveStdio(ctx, st, logger, cfg, k, stdioCredential{owner: true}, maxScope)
}

// ownerName is the name of the owner token: the person running the
// process.
func ownerName(getenv func(string) string) string {
	if name := getenv("USER"); name != "" {
		return name
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "owner"
}

func createToken(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("token create", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data", defaultDataDir, "the data `directory`")
	scope := fs.String("scope", "", "what the token may call: read-only, non-destructive or full")
	kind := fs.String("kind", "", "whose token it is: human or agent")
	name := fs.String("name", "", "the name of the person or agent (default: $USER for a human, \"agent\" for an agent)")
	expires := fs.Duration("expires", 0, "how long the token lasts, such as 720h (default: until revoked)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("token create: unexpected argument %q", fs.Arg(0))
	}
	s, err := mcpeffect.ParseScope(*scope)
	if err != nil || s == 0 {
		return fmt.Errorf("token create: -scope must be read-only, non-destructive or full (got %q)", *scope)
	}
	k, err := store.ParseKind(*kind)
	if err != nil {
		return fmt.Errorf("token create: -kind must be human or agent (got %q)", *kind)
	}
	if *name == "" {
		*name = defaultName(k, getenv)
	}

	st, _, err := store.Open(ctx, *dataDir, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	tok, secret, err := st.MintToken(ctx, store.NewToken{Name: *name, Kind: k, Scope: s, TTL: *expires})
	if err != nil {
		return fmt.Errorf("token create: %w", err)
	}
	expiry := "never expires"
	if !tok.Expiry().IsZero() {
		expiry = "expires " + tok.Expiry().Format(time.RFC3339)
	}
	fmt.Fprintf(stderr, "token %s for %s %q, scope %s (%s), %s\n", tok.ID, tok.Kind, tok.Name, tok.Scope, scopeNames.Name(tok.Scope), expiry)
	_, err = fmt.Fprintln(stdout, secret)
	return err
}

// defaultName is the name of a token made without -name.
func defaultName(k store.Kind, getenv func(string) string) string {
	if k == store.Agent {
		return "agent"
	}
	if name := getenv("USER"); name != "" {
		return name
	}
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "me"
}

func listTokens(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("token list", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data", defaultDataDir, "the data `directory`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	st, _, err := store.Open(ctx, *dataDir, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	tokens, err := st.AllTokens(ctx)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tNAME\tKIND\tSCOPE\tCREATED\tEXPIRES\tREVOKED\tLAST USED\tOWNER")
	for _, k := range tokens {
		owner := "-"
		if k.Owner {
			owner = "yes"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.ID, k.Name, k.Kind, k.Scope,
			k.CreatedAt, orDash(k.ExpiresAt), orDash(k.RevokedAt), orDash(k.LastUsedAt), owner)
	}
	return w.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func revokeToken(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("token revoke", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dataDir := fs.String("data", defaultDataDir, "the data `directory`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("usage: done-server token revoke [-data DIR] ID (token list shows the ids)")
	}
	st, _, err := store.Open(ctx, *dataDir, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	k, err := st.RevokeAnyToken(ctx, fs.Arg(0))
	if err != nil {
		return fmt.Errorf("token revoke: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "token %s of %s %q revoked at %s\n", k.ID, k.Kind, k.Name, k.RevokedAt)
	return err
}
