package mcpgo

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/mcpeffect/mcpeffect"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// Recovery metadata on mcp-go ([mcpeffect.Registry.DeclareRecovery],
// SEP-3172): mcp-go's ToolAnnotation, like go-sdk's, has the five fields
// of the specification and no recovery, so a tool whose undo is declared
// lists it in its _meta under [mcpeffect.RecoveryMetaKey], as on go-sdk;
// and a listing fails with the error of [mcpeffect.Registry.CheckRecoveries].

// publishRecoveries gives each tool of res whose recovery is declared a
// _meta of its own with it. The tools' _meta belong to the server: they
// are copied, not changed.
func (a *adapter) publishRecoveries(res *mcp.ListToolsResult) {
	for i, t := range res.Tools {
		rec, ok := a.r.Recovery(t.Name)
		if !ok {
			continue
		}
		meta := &mcp.Meta{}
		if t.Meta != nil {
			meta.ProgressToken = t.Meta.ProgressToken
			meta.AdditionalFields = maps.Clone(t.Meta.AdditionalFields)
		}
		if meta.AdditionalFields == nil {
			meta.AdditionalFields = map[string]any{}
		}
		meta.AdditionalFields[mcpeffect.RecoveryMetaKey] = asJSONValue(rec)
		res.Tools[i].Meta = meta
	}
}

// asJSONValue returns v as the JSON types a listing decodes into.
func asJSONValue(v any) any {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if json.Unmarshal(raw, &out) != nil {
		return nil
	}
	return out
}

// checkRecoveries returns the error that refuses a listing of the tools
// of the server on ctx whose declared recoveries do not hold, or nil.
func (a *adapter) checkRecoveries(ctx context.Context) error {
	var listed []*sdk.Tool
	if s := server.ServerFromContext(ctx); s != nil {
		tools := s.ListTools()
		add := func(name string) {
			st, ok := tools[name]
			if !ok {
				return
			}
			var t sdk.Tool
			if raw, err := json.Marshal(st.Tool); err == nil && json.Unmarshal(raw, &t) == nil {
				listed = append(listed, &t)
			}
		}
		for name := range tools {
			if rec, ok := a.r.Recovery(name); ok {
				add(name)
				add(rec.CompensatingOperation.OperationID)
			}
		}
	}
	if err := a.r.CheckRecoveries(listed); err != nil {
		return fmt.Errorf("mcpeffect: the tools cannot be listed: %w", err)
	}
	return nil
}
