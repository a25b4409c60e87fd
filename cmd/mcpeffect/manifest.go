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
	"github.com/mcpeffect/mcpeffect/manifest"
)

const manifestUsage = `usage: mcpeffect manifest [-key PRIVATE-KEY] [scope names] [-timeout d] -- command [args...]
       mcpeffect manifest [-key PRIVATE-KEY] [scope names] [-timeout d] -url URL [-header "Name: value"]...
       mcpeffect manifest -check FILE -key PUBLIC-KEY [-timeout d] (-- command [args...] | -url URL [-header "Name: value"]...)
       mcpeffect manifest -new-key FILE`

func manifestCommand() *command {
	return &command{
		name:    "manifest",
		summary: "write a signed manifest of a server's tools, or hold a server to one",
		run:     runManifest,
		help:    manifestHelp,
	}
}

func manifestHelp(w io.Writer) {
	fmt.Fprintf(w, "%s\n\n", manifestUsage)
	fmt.Fprint(w, `Manifest lists the tools of a server (a command after --, or -url) and
writes, on standard output, its manifest: each tool with the effect its
hints amount to, its hints, the scope it requires, the outcomes it
publishes, its description, and the content hash of its definition (its
description, input and output schemas, hints and outcomes, in RFC 8785
canonical JSON, SHA-256), with the hash of each part. With -key, the
manifest is signed with that Ed25519 private key: a detached JWS (EdDSA)
over the canonical JSON of the rest of the manifest, after SEP-3140's
signed capability manifest. mcpeffect diff reads a manifest as it reads a
report, and mcpeffect policy -manifest writes a gateway's policy from it.

-check FILE holds the server to the signed manifest in FILE: it checks the
signature with the public key given with -key, lists the server now, and
reports each tool added, removed, or whose definition changed, naming the
parts that changed (a description rewritten, a schema widened, a hint
flipped). A manifest written for a URL is checked against that URL only.

-new-key FILE writes a new Ed25519 private key in FILE (PEM, PKCS #8,
readable by its owner only; an existing file is not overwritten), and its
public key on standard output (PEM), to give those who check. OpenSSL makes
the same: openssl genpkey -algorithm ed25519 -out FILE, and
openssl pkey -in FILE -pubout for its public key.

The exit status is 0 when the manifest was written, or the server matches
it; 1 when -check found a change; and 2 on an error: a bad key, a
signature that does not match, a server that could not be listed.

Flags:
`)
	fs, _ := manifestFlags()
	fs.SetOutput(w)
	fs.PrintDefaults()
}

type manifestOptions struct {
	key    string
	check  string
	newKey string
	names  mcpeffect.ScopeNames
	server targetFlags
}

func manifestFlags() (*flag.FlagSet, *manifestOptions) {
	o := &manifestOptions{}
	fs := flag.NewFlagSet("manifest", flag.ContinueOnError)
	fs.StringVar(&o.key, "key", "", "sign with the Ed25519 private key in `FILE` (PEM); with -check, the public key to check with")
	fs.StringVar(&o.check, "check", "", "hold the server to the signed manifest in `FILE`")
	fs.StringVar(&o.newKey, "new-key", "", "write a new Ed25519 private key in `FILE`, and its public key on standard output")
	registerScopeNames(fs, &o.names)
	o.server.register(fs, "list the tools of", 30*time.Second)
	return fs, o
}

func runManifest(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	bad := func(msg string) int { return badUsage(stderr, "manifest", manifestUsage, msg) }
	fail := func(format string, a ...any) int { return failed(stderr, "manifest", format, a...) }
	fs, o := manifestFlags()
	if code, done := parseFlags(fs, args, "manifest", manifestUsage, manifestHelp, stdout, stderr); done {
		return code
	}
	if o.newKey != "" {
		if o.check != "" || o.key != "" || o.server.url != "" || len(fs.Args()) > 0 {
			return bad("-new-key writes a key, and takes no other flag nor server")
		}
		return newKey(o.newKey, stdout, stderr)
	}
	if err := o.names.Validate(); err != nil {
		return bad(strings.TrimPrefix(err.Error(), "mcpeffect: "))
	}
	if o.check != "" {
		if o.key == "" {
			return bad("-check needs -key, the public key that signed the manifest")
		}
		return checkManifest(ctx, o, fs.Args(), stdout, stderr)
	}
	var key []byte
	if o.key != "" {
		data, err := readFile(o.key)
		if pe, ok := err.(*os.PathError); ok {
			err = pe.Err
		}
		if err != nil {
			return fail("-key %s: %v", o.key, err)
		}
		k, err := manifest.ParsePrivateKey(data)
		if err != nil {
			return fail("-key %s: %v", o.key, strings.TrimPrefix(err.Error(), "mcpeffect: "))
		}
		key = k
	}
	m, _, code := loadTools(ctx, "manifest", "", "", fs.Args(), o.server, o.names, stderr)
	if code != exitOK {
		return code
	}
	if key == nil {
		if err := m.WriteJSON(stdout); err != nil {
			return fail("writing the manifest: %v", err)
		}
		return exitOK
	}
	data, err := manifest.Sign(m, key)
	if err != nil {
		return fail("%v", err)
	}
	if _, err := stdout.Write(data); err != nil {
		return fail("writing the manifest: %v", err)
	}
	return exitOK
}

// checkManifest holds the server the flags name to the signed manifest
// of -check.
func checkManifest(ctx context.Context, o *manifestOptions, command []string, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int { return failed(stderr, "manifest", format, a...) }
	signed, source, code := loadTools(ctx, "manifest", o.check, o.key, nil, targetFlags{}, o.names, stderr)
	if code != exitOK {
		return code
	}
	if signed.Signature == "" {
		return fail("%s is not signed: check it with -key only once it is, or compare with mcpeffect diff", source)
	}
	if signed.Resource != "" && (o.server.url != signed.Resource || len(command) > 0) {
		return fail("%s was written for %s, not for %s: check that server", source, signed.Resource, targetName(o.server.url, command))
	}
	now, target, code := loadTools(ctx, "manifest", "", "", command, o.server, o.names, stderr)
	if code != exitOK {
		return code
	}
	changes := signed.Changes(now)
	if len(changes) == 0 {
		fmt.Fprintf(stdout, "%s matches %s: %d tools, none changed\n", target, source, len(now.Tools))
		return exitOK
	}
	fmt.Fprintf(stdout, "%s no longer matches %s:\n", target, source)
	for _, c := range changes {
		fmt.Fprintf(stdout, "  %s\n", c)
	}
	return exitFindings
}

func targetName(url string, command []string) string {
	if len(command) > 0 {
		return "the command " + command[0]
	}
	if url == "" {
		return "no server"
	}
	return url
}

// newKey writes a new private key in path, and its public key on stdout.
func newKey(path string, stdout, stderr io.Writer) int {
	private, public, err := manifest.NewKey()
	if err != nil {
		fmt.Fprintf(stderr, "mcpeffect manifest: %v\n", err)
		return exitError
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		fmt.Fprintf(stderr, "mcpeffect manifest: -new-key: %v\n", err)
		return exitError
	}
	if _, err := f.Write(private); err != nil {
		f.Close()
		os.Remove(path)
		fmt.Fprintf(stderr, "mcpeffect manifest: -new-key: %v\n", err)
		return exitError
	}
	if err := f.Close(); err != nil {
		os.Remove(path)
		fmt.Fprintf(stderr, "mcpeffect manifest: -new-key: %v\n", err)
		return exitError
	}
	stdout.Write(public)
	return exitOK
}
