// Done is a task server for people and their agents, over MCP. It is the
// example server of mcpeffect: each tool declares its effect once, where it
// is added, and from that one declaration come both the annotations that
// hosts read and the scope that a token needs to call the tool.
//
// Usage:
//
//	done-server [serve] [-data DIR | -db URL] [-http ADDR] [-scope SCOPE] [-confirm WHAT] [-approvals WHERE] [-hide-denied] [-metrics ADDR] [-write-rate N]
//	done-server login [-data DIR | -db URL] [-name NAME] -url URL
//	done-server token create [-data DIR | -db URL] -scope SCOPE -kind KIND [-name NAME] [-expires DURATION]
//	done-server token list [-data DIR | -db URL]
//	done-server token revoke [-data DIR | -db URL] ID
//
// Without -http, Done serves one client over stdin and stdout, with the
// token whose secret is in the environment variable DONE_TOKEN or, without
// it, as the owner of the data directory; -scope caps what that connection
// may do. -confirm destructive (or writes) makes Done ask the person,
// through the host, before each such call. The owner is a person, who may approve close requests, and so is
// whatever host connects that way: an AI host should get an agent token
// instead. With -http, it serves Streamable HTTP at /mcp, each request
// carrying its token as a bearer token, and the web page for people at
// /app/ (package web), where a person signs in with a one-time link that
// done-server login prints. -approvals page makes approve_task refuse over
// MCP, so that a person approves on the page only; -confirm url asks the
// person there, by URL elicitation. done-server -h shows all of this.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/url"
	"os"
	"os/signal"
	"os/user"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/gctune"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
	"github.com/mcpeffect/mcpeffect/examples/done-server/web"
	"golang.org/x/time/rate"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
		// -h asked for the usage, which is printed: not a failure.
	case err != nil:
		fmt.Fprintln(os.Stderr, "done-server:", err)
		os.Exit(2)
	}
}

const defaultDataDir = "./done-data"

// run runs the command line args. stdout carries only what the command
// produces (a token's secret); everything for the person goes to stderr,
// which over stdio is also the only place a server may write to.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cwd, _ := os.Getwd()
	c := &cli{prog: commandName(os.Args[0], cwd), getenv: getenv, stdout: stdout, stderr: stderr}
	cmd := "serve"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return c.serve(ctx, args)
	case "login":
		return c.login(ctx, args)
	case "help":
		c.usage()
		return flag.ErrHelp
	case "token":
		sub := ""
		if len(args) > 0 {
			sub, args = args[0], args[1:]
		}
		switch sub {
		case "create":
			return c.createToken(ctx, args)
		case "list":
			return c.listTokens(ctx, args)
		case "revoke":
			return c.revokeToken(ctx, args)
		case "-h", "-help", "--help", "help":
			c.usage()
			return flag.ErrHelp
		}
		return fmt.Errorf("usage: %s token create|list|revoke (%s -h shows every command)", c.prog, c.prog)
	}
	return fmt.Errorf("unknown command %q (want serve, login or token; %s -h shows every command)", cmd, c.prog)
}

// A cli is one run of the command line.
type cli struct {
	// prog is how the person ran this program, for the commands that its
	// messages suggest (see [commandName]).
	prog           string
	getenv         func(string) string
	stdout, stderr io.Writer
}

// usage prints every command, and the environment variable.
func (c *cli) usage() {
	fmt.Fprintf(c.stderr, `Done serves tasks for people and their agents over MCP.

Usage:
  %[1]s [serve] [-data DIR | -db URL] [-http ADDR] [-scope SCOPE] [-confirm WHAT] [-approvals WHERE] [-hide-denied] [-metrics ADDR] [-write-rate N]
      serve MCP: by default over stdin and stdout, to one MCP host that
      starts this program (it is not typed into); with -http, over
      Streamable HTTP at http://ADDR/mcp, each request with a bearer token,
      and the web page for people at http://ADDR/app/
  %[1]s login [-data DIR | -db URL] [-name NAME] -url URL
      print a one-time link that signs the person NAME in to the web page
  %[1]s token create [-data DIR | -db URL] -scope SCOPE -kind KIND [-name NAME] [-expires DURATION]
      mint a token, and print its secret alone on stdout
  %[1]s token list [-data DIR | -db URL]
      list the tokens, never their secrets
  %[1]s token revoke [-data DIR | -db URL] ID
      revoke a token, at once

SCOPE is read-only, non-destructive or full; KIND is human or agent.
WHAT is off (the default), destructive or writes: Done asks the person,
through the MCP host (elicitation), before each such call, whatever the
host does; a host that cannot ask has those calls refused. url (or
url-writes) asks on Done's web page instead, where the host cannot
answer for the person (serve -http only).
WHERE is mcp (the default) or page: with page, approve_task refuses over
MCP, and a person approves on the web page only, out of any host's reach:
the setup that keeps an AI host, however connected, from approving.

Environment:
  DONE_TOKEN        over stdio, the secret of the token to serve. Without
                    it, Done serves the owner of the data directory: a
                    person with full scope, who may approve close requests.
                    Give an AI host an agent token instead.
  DONE_DB           the default of -db, for every command: a PostgreSQL
                    URL, postgres://done@127.0.0.1:5432/done?sslmode=disable,
                    whose database any number of replicas of Done share.
  DONE_CONFIRM_KEY  at least 32 random bytes that sign the confirmations
                    of -confirm on the 2026-07-28 protocol: the same on
                    every replica of a shared store, so that any of them
                    verifies what another asked. Unset, each process makes
                    its own; on a shared store, -confirm needs it.

%[1]s COMMAND -h shows the flags of a command.
`, c.prog)
}

// flags returns the flag set of the command name (such as "token list"),
// whose usage is about, followed by its flags.
func (c *cli) flags(name, about string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() {
		if name == "serve" {
			c.usage()
		} else {
			fmt.Fprintf(c.stderr, "%s %s\n", c.prog, about)
		}
		fmt.Fprintf(c.stderr, "\nFlags of %s:\n", name)
		fs.PrintDefaults()
	}
	return fs
}

func (c *cli) serve(ctx context.Context, args []string) error {
	getenv, stderr := c.getenv, c.stderr
	fs := c.flags("serve", "")
	sf := addStoreFlags(fs, getenv)
	dataDir := sf.dataDir
	contextDir := fs.String("context", "", "the `folder` of the local connector's documents, or off (default: context in -data; on a shared -db, required)")
	httpAddr := fs.String("http", "", "serve Streamable HTTP on this `address` (such as 127.0.0.1:8080) instead of stdio")
	scopeCap := fs.String("scope", "full", "over stdio, the most the connection may do, whatever its token allows: read-only, non-destructive or full")
	confirmMode := fs.String("confirm", "off", "ask the person before these calls run, whatever the host does: off, destructive or writes through the MCP client, url or url-writes on the web page (a client that cannot ask has them refused)")
	approvals := fs.String("approvals", "mcp", "where a person approves close requests: mcp (approve_task) or page (the web page only; approve_task refuses)")
	metricsAddr := fs.String("metrics", "", "serve Prometheus metrics (operations' durations, decisions by tool and outcome) at /metrics on this `address`, on loopback unless it names a host (such as 9464); off unless given")
	writeRate := fs.String("write-rate", strconv.FormatFloat(float64(defaultWriteRate), 'g', -1, 64), "how many writes a second each tree of tokens (a command-line token and those minted from it) may make, kept up, after a burst of three seconds' worth; off for no limit")
	hideDenied := fs.Bool("hide-denied", false, "list to each caller only the tools, resources and prompts its token's scope allows (by default all are listed, so that a host can see what a wider scope would allow and ask for it)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	confirm, ok := confirmModes[*confirmMode]
	confirmURL, viaPage := urlConfirmModes[*confirmMode]
	if !ok && !viaPage {
		return fmt.Errorf("serve: -confirm must be off, destructive, writes, url or url-writes (got %q)", *confirmMode)
	}
	if viaPage && *httpAddr == "" {
		return errors.New("serve: -confirm url needs -http: the person confirms on the web page, which Done serves over HTTP")
	}
	if *approvals != "mcp" && *approvals != "page" {
		return fmt.Errorf("serve: -approvals must be mcp or page (got %q)", *approvals)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve: unexpected argument %q", fs.Arg(0))
	}
	writes, burst, err := parseWriteRate(*writeRate)
	if err != nil {
		return err
	}
	maxScope, err := mcpeffect.ParseScope(*scopeCap)
	if err != nil || maxScope == 0 {
		return fmt.Errorf("serve: -scope must be read-only, non-destructive or full (got %q)", *scopeCap)
	}
	if *httpAddr != "" && maxScope != mcpeffect.Full {
		return errors.New("serve: -scope caps a stdio connection; over HTTP each request has the scope of its own token (mint a read-only one for a read-only client)")
	}

	logger := slog.New(slog.NewTextHandler(stderr, nil))
	defer gctune.Tune(getenv)()
	st, created, err := sf.open(ctx, storeOptions())
	if err != nil {
		return err
	}
	defer st.Close()
	// The default source of documents of the connector tools: Markdown
	// and text files next to the database.
	folders, err := sf.folder(st, *contextDir)
	if err != nil {
		return err
	}
	key, err := confirmKey(getenv)
	if err != nil {
		return err
	}
	if st.Shared() && (confirm != nil || confirmURL != nil) && key == nil {
		return errors.New("serve: -confirm on a shared database (-db) needs DONE_CONFIRM_KEY, the same on every replica: " +
			"a person's answer to a question one replica asked may reach another, which must verify it (such as the output of: openssl rand -base64 32)")
	}
	tel, stopTelemetry, err := startTelemetry(ctx, getenv, *metricsAddr, logger) // OTLP from OTEL_EXPORTER_OTLP_*; -metrics
	if err != nil {
		return err
	}
	defer stopTelemetry()
	// Replicas of a shared store serve HTTP without sessions: the next
	// request of a client may reach another replica.
	d := newDone(st, logger, config{connectors: folders, confirm: confirm, stateless: st.Shared(), writeRate: writes, writeBurst: burst,
		confirmURL: confirmURL, pageApprovals: *approvals == "page", confirmKey: key, hideDenied: *hideDenied, telemetry: tel})

	data := shellQuote(*dataDir)
	if *httpAddr != "" {
		if created {
			fmt.Fprintf(stderr, `Done created its data in %s. Every request over HTTP needs a token; mint the first with:

	%s token create %s -scope full -kind human -name "$USER"

It prints the token's secret, for the header "Authorization: Bearer <secret>".
Give an AI host an agent token (-kind agent): it cannot approve. To keep any host,
however connected, from approving, serve with -approvals page: a person then approves
on the web page only, signed in with a link from the command below.

`, *dataDir, c.prog, sf.where())
		}
		// The page's address is the one actually bound (-http
		// 127.0.0.1:0 takes any port): the sign-in command says it.
		return d.serveHTTP(ctx, *httpAddr, func(base string) {
			fmt.Fprintf(stderr, "The page for people is at %s%s/; a person signs in with a link from:\n\n\t%s login %s -name \"$USER\" -url %s\n\n",
				base, web.Prefix, c.prog, sf.where(), base)
		})
	}

	if secret := getenv("DONE_TOKEN"); secret != "" {
		cred := stdioCredential{secret: secret}
		k, err := d.authenticate(ctx, cred)
		if err != nil {
			return fmt.Errorf("DONE_TOKEN: %w", err)
		}
		c.waiting()
		return d.serveStdio(ctx, k, cred, maxScope)
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
	%s token create -data %s -scope full -kind human -name %s`, k.ID, k.Name, k.RevokedAt, c.prog, data, shellQuote(k.Name))
	}
	if ownerCreated {
		where, err := filepath.Abs(*dataDir)
		if err != nil {
			where = *dataDir
		}
		// The safe way first: the convenience of owner mode makes any
		// host a person, who may approve close requests.
		fmt.Fprintf(stderr, `Done keeps its data in %s.

For an AI host (Claude Desktop, Cursor, VS Code...), mint it a token of its own, an agent's:

	%s token create -data %s -scope non-destructive -kind agent -name my-agent

and set the secret it prints as DONE_TOKEN in the host's configuration.

Without DONE_TOKEN, as now, Done serves you as the owner of that directory: %q, a person
with full scope, who may approve the close requests of agents. Whatever host connects this
way is that person: an AI host in owner mode can approve its own close requests, past the
approval gate. Keep owner mode for yourself, or cap it with -scope read-only or -scope
non-destructive, or serve with -approvals page: approve_task then refuses over MCP, and
you approve on the web page of '%s serve -http', out of any host's reach.

To serve over HTTP, where every request needs a token (sent as "Authorization: Bearer <secret>"):

	%s serve -data %s -http 127.0.0.1:8080

`, where, c.prog, data, k.Name, c.prog, c.prog, data)
	}
	c.waiting()
	return d.serveStdio(ctx, k, stdioCredential{owner: true}, maxScope)
}

// parseWriteRate reads serve -write-rate: a number of writes a second
// above zero, with a burst of three seconds of them, or off, rate.Inf.
func parseWriteRate(text string) (rate.Limit, int, error) {
	if text == "off" {
		return rate.Inf, 1, nil
	}
	r, err := strconv.ParseFloat(text, 64)
	if err != nil || !(r > 0) || math.IsInf(r, 0) {
		return 0, 0, fmt.Errorf("serve: -write-rate must be a number of writes a second above zero, or off (got %q)", text)
	}
	return rate.Limit(r), max(1, int(math.Ceil(3*r))), nil
}

// confirmKey returns the key of DONE_CONFIRM_KEY, which signs the request
// states of confirmations (see [config] confirmKey), or nil when it is
// unset: each process then makes its own.
func confirmKey(getenv func(string) string) ([]byte, error) {
	key := getenv("DONE_CONFIRM_KEY")
	switch {
	case key == "":
		return nil, nil
	case len(key) < 32:
		return nil, fmt.Errorf("DONE_CONFIRM_KEY has %d bytes; it needs at least 32 random ones (such as the output of: openssl rand -base64 32)", len(key))
	}
	return []byte(key), nil
}

// waiting says, on every start over stdio, what the process waits for:
// someone who starts it by hand sees a silent terminal otherwise, and
// may try to type into it.
func (c *cli) waiting() {
	fmt.Fprintf(c.stderr, "Done is waiting for an MCP host on stdin: a host (Claude Desktop, Cursor, VS Code...) starts it\n"+
		"and speaks MCP to it; it is not typed into. Ctrl-D or Ctrl-C stops it; %s -h shows every command.\n", c.prog)
}

// commandName returns how to run this program again, for the commands its
// messages suggest: arg0 (os.Args[0]) as the person typed it, or, under
// go run, the go run command that works from cwd. go run runs a binary it
// built in a temporary go-build directory, or since Go 1.24 one from its
// build cache, by default a go-build directory too.
func commandName(arg0, cwd string) string {
	if !underGoBuild(arg0) {
		return shellQuote(arg0)
	}
	pkg := mainPackage()
	// The package is "." in its own directory, and ./examples/done-server
	// from the root of the repository; elsewhere, its import path.
	for _, rel := range []string{".", "./examples/done-server"} {
		mod, err := os.ReadFile(filepath.Join(cwd, rel, "go.mod"))
		if err == nil && strings.HasPrefix(string(mod), "module "+pkg+"\n") {
			return "go run " + rel
		}
	}
	return "go run " + pkg
}

// mainPackage returns the import path of this program's package.
func mainPackage() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Path != "" {
		// A test binary's is the package's, with .test added.
		return strings.TrimSuffix(bi.Path, ".test")
	}
	return "github.com/mcpeffect/mcpeffect/examples/done-server"
}

// underGoBuild reports whether the program at path is one that go run
// built: in a directory named go-build*, or under $GOCACHE.
func underGoBuild(path string) bool {
	if cache := os.Getenv("GOCACHE"); cache != "" && strings.HasPrefix(path, filepath.Clean(cache)+string(filepath.Separator)) {
		return true
	}
	for dir := filepath.Dir(path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
		if strings.HasPrefix(filepath.Base(dir), "go-build") {
			return true
		}
	}
	return false
}

// shellQuote returns s quoted for a POSIX shell if it needs to be.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@%=,", r))
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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

func (c *cli) createToken(ctx context.Context, args []string) error {
	getenv, stdout, stderr := c.getenv, c.stdout, c.stderr
	fs := c.flags("token create", "token create [-data DIR | -db URL] -scope SCOPE -kind KIND [-name NAME] [-expires DURATION]: mint a token, and print its secret alone on stdout.")
	sf := addStoreFlags(fs, getenv)
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

	st, _, err := sf.open(ctx, nil)
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

func (c *cli) listTokens(ctx context.Context, args []string) error {
	stdout, getenv := c.stdout, c.getenv
	fs := c.flags("token list", "token list [-data DIR | -db URL]: list the tokens, never their secrets.")
	sf := addStoreFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	st, _, err := sf.open(ctx, nil)
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

func (c *cli) revokeToken(ctx context.Context, args []string) error {
	stdout, getenv := c.stdout, c.getenv
	fs := c.flags("token revoke", "token revoke [-data DIR | -db URL] ID: revoke a token, at once (token list shows the ids).")
	sf := addStoreFlags(fs, getenv)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return fmt.Errorf("usage: %s token revoke [-data DIR | -db URL] ID (token list shows the ids)", c.prog)
	}
	st, _, err := sf.open(ctx, nil)
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

func (c *cli) login(ctx context.Context, args []string) error {
	getenv, stdout, stderr := c.getenv, c.stdout, c.stderr
	fs := c.flags("login", "login [-data DIR | -db URL] [-name NAME] -url URL: print a one-time link that signs a person in to the web page.")
	sf := addStoreFlags(fs, getenv)
	name := fs.String("name", "", "the person to sign in, who must have a live human token (default: $USER)")
	base := fs.String("url", "", "the address where done-server serve -http serves the page, which serve prints when it starts (required)")
	ttl := fs.Duration("expires", web.DefaultLinkTTL, "how long the link may wait to be opened")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("login: unexpected argument %q", fs.Arg(0))
	}
	if *ttl <= 0 || *ttl > time.Hour {
		return fmt.Errorf("login: -expires must be above zero and at most an hour (got %s): a link is for now", *ttl)
	}
	if *base == "" {
		// No address is guessed: a link to a port nothing serves is
		// worse than none. serve -http prints the command with its own.
		return fmt.Errorf("login: -url is required: the address where done-server serve -http serves the page, which serve prints when it starts, such as\n\t%s login %s -name %s -url http://127.0.0.1:8080",
			c.prog, sf.where(), shellQuote(cmp.Or(*name, defaultName(store.Human, getenv))))
	}
	u, err := url.Parse(*base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("login: -url must be an http or https address, such as http://127.0.0.1:8080 (got %q)", *base)
	}
	if *name == "" {
		*name = defaultName(store.Human, getenv)
	}
	st, _, err := sf.open(ctx, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	k, err := st.PersonToken(ctx, *name)
	if err != nil {
		return fmt.Errorf("login: %w\n\t%s token create %s -scope full -kind human -name %s", err, c.prog, sf.where(), shellQuote(*name))
	}
	secret, expires, err := st.CreateSignInLink(ctx, k.ID, *ttl)
	if err != nil {
		return fmt.Errorf("login: %w", err)
	}
	fmt.Fprintf(stderr, "a link that signs in %q (token %s, scope %s) once, until %s:\n", k.Name, k.ID, k.Scope, expires.UTC().Format(time.RFC3339))
	_, err = fmt.Fprintln(stdout, strings.TrimSuffix(u.String(), "/")+web.SignInPath+"?link="+url.QueryEscape(secret))
	return err
}
