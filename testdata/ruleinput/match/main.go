// Package main is built by TestFuncRuleOfAnotherInputDoesNotCompile:
// a rule of EffectByFunc over podArgs, for a handler whose input is
// podArgs, which compiles.
package main

import (
	"context"

	"github.com/mcpeffect/mcpeffect"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type podArgs struct {
	Action string `json:"action"`
}

type otherArgs struct {
	Kind string `json:"kind"`
}

func main() {
	s := mcp.NewServer(&mcp.Implementation{Name: "rule", Version: "v1"}, nil)
	r := mcpeffect.NewRegistry()
	rule := mcpeffect.EffectByFunc(func(podArgs) mcpeffect.Effect { return mcpeffect.Read }, mcpeffect.Read)
	mcpeffect.AddTool(s, r, &mcp.Tool{Name: "pods"}, rule,
		func(context.Context, *mcp.CallToolRequest, podArgs) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	_ = otherArgs{}
}
