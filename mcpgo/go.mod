module github.com/mcpeffect/mcpeffect/mcpgo

go 1.25.5

replace github.com/mcpeffect/mcpeffect => ..
