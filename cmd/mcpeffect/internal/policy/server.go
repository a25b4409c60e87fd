package policy

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
	"github.com/mcpeffect/mcpeffect/host"
	"github.com/mcpeffect/mcpeffect/manifest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// This file is the one place that reads a live server, through the
// audit's bounded session: everything else in the package works on a
// manifest.

// FromServer lists the tools of the server of target, within the target's
// limits and deadline, and returns the manifest of what it lists, issued
// at now: each tool with the effect its hints amount to (a hint left out
// counting as its worst case, as hosts take it), the outcomes it
// publishes, and the content hash of its definition as go-sdk's client
// decodes it, which is what a host pinned to the manifest hashes
// ([host.Approver.PinnedTo]). A server built with mcpeffect derives its
// hints from its effects, so that the effects read back exactly.
//
// A server that lists a tool twice, or publishes outcomes that cannot be
// read or do not agree with its hints, is refused with an error that
// names the tool: no policy can be written for it that is sure.
func FromServer(ctx context.Context, target connect.Target, names mcpeffect.ScopeNames, now time.Time) (*manifest.Manifest, error) {
	s, err := target.Connect(ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	listed, err := s.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	// The audit reads the hints as sent, before go-sdk decodes them; the
	// definitions are hashed as a host's go-sdk client decodes them.
	defs, err := definitions(ctx, s, len(listed))
	if err != nil {
		return nil, err
	}
	info := s.Server()
	m := &manifest.Manifest{ServerInfo: &manifest.ServerInfo{Name: info.Name, Version: info.Version}, IssuedAt: now.UTC().Format(time.RFC3339), Tools: []manifest.Tool{}}
	if target.URL != "" && len(target.Command) == 0 {
		m.Resource = target.URL
	}
	seen := map[string]bool{}
	for _, l := range listed {
		if seen[l.Name] {
			return nil, fmt.Errorf("tool %s is listed twice: audit it to see both", strconv.Quote(l.Name))
		}
		seen[l.Name] = true
		hints, err := host.ParseDeclared(l.Annotations)
		if err != nil {
			return nil, fmt.Errorf("tool %s: %w", strconv.Quote(l.Name), err)
		}
		rule, err := l.Rule()
		if err != nil {
			return nil, fmt.Errorf("tool %s: the outcomes it publishes cannot be read: %w", strconv.Quote(l.Name), err)
		}
		def := defs[l.Name]
		if def == nil {
			return nil, fmt.Errorf("tool %s: listed once, then not listed again: the server's tools changed while they were read", strconv.Quote(l.Name))
		}
		t, err := manifest.ToolOf(def, hints.Effect(), rule, names)
		if err != nil {
			return nil, err
		}
		m.Tools = append(m.Tools, t)
	}
	return m, nil
}

// definitions lists the tools of s again, as go-sdk's client decodes
// them, by name, bounded by the session's deadline and by want, the
// number of tools the audit's listing found.
func definitions(ctx context.Context, s *connect.Session, want int) (map[string]*mcp.Tool, error) {
	ctx, cancel := s.Bound(ctx)
	defer cancel()
	out := make(map[string]*mcp.Tool, want)
	cursors := map[string]bool{}
	for cursor := ""; ; {
		res, err := s.ClientSession().ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			return nil, s.Explain(ctx, err)
		}
		for _, t := range res.Tools {
			if t != nil {
				out[t.Name] = t
			}
		}
		if len(out) > want {
			return nil, fmt.Errorf("the server listed %d tools, then more: its tools changed while they were read", want)
		}
		if res.NextCursor == "" {
			return out, nil
		}
		if cursors[res.NextCursor] {
			return nil, fmt.Errorf("the server gave the cursor %s twice: its pages never end", strconv.Quote(res.NextCursor))
		}
		cursors[res.NextCursor] = true
		cursor = res.NextCursor
	}
}
