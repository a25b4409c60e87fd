package mcpeffecttest_test

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/mcpeffecttest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// scopesSeen connects to s in process, as a connect function of the test's
// own would, and keeps what SessionScope says of each session's context.
type scopesSeen struct {
	mu   sync.Mutex
	seen []string
}

func (c *scopesSeen) connect(s *mcp.Server) func(context.Context) (*mcp.ClientSession, error) {
	return func(ctx context.Context) (*mcp.ClientSession, error) {
		scope, ok := mcpeffecttest.SessionScope(ctx)
		c.mu.Lock()
		if ok {
			c.seen = append(c.seen, scope.String())
		} else {
			c.seen = append(c.seen, "unsaid")
		}
		c.mu.Unlock()
		ct, st := mcp.NewInMemoryTransports()
		if _, err := s.Connect(ctx, st, nil); err != nil {
			return nil, err
		}
		return mcp.NewClient(&mcp.Implementation{Name: "t", Version: "v1"}, nil).Connect(ctx, ct, nil)
	}
}

// TestSessionScope: CheckClient tells its connect function the scope of
// each session it opens: full to list the tools, then each boundary's; and
// Verify tells an Instance's Connect the full scope of its owner, but
// nothing for a context that a Caller of the test made.
func TestSessionScope(t *testing.T) {
	s, r, ran := server(t, true, nil)
	var check scopesSeen
	mcpeffecttest.CheckClient(t, check.connect(s), r)
	if want := []string{"full", "read-only", "non-destructive"}; !slices.Equal(check.seen, want) {
		t.Errorf("CheckClient's sessions had the scopes %q, want %q", check.seen, want)
	}
	if *ran != 0 {
		t.Errorf("CheckClient ran %d handlers", *ran)
	}

	var verify scopesSeen
	newInstance := func(t testing.TB) mcpeffecttest.Instance[*tasks] {
		inst := taskServer("get_task", "complete_task")(t)
		inst.Connect, inst.Server = verify.connect(inst.Server), nil
		return inst
	}
	mcpeffecttest.Verify(t, newInstance, []mcpeffecttest.Example[*tasks]{
		{Tool: "get_task", Setup: onSeed(taskArgs{})},
		{Tool: "complete_task", Setup: onSeed(taskArgs{})},
		{Tool: "complete_task", Name: "refused to a reader", Setup: onSeed(taskArgs{}), Caller: readOnly, WantError: "refused"},
	}, nil)
	// The list, each example's owner, and the reader of the last, in the
	// order Verify takes the tools.
	slices.Sort(verify.seen)
	if want := []string{"full", "full", "full", "full", "unsaid"}; !slices.Equal(verify.seen, want) {
		t.Errorf("Verify's sessions had the scopes %q, want %q", verify.seen, want)
	}
	if _, ok := mcpeffecttest.SessionScope(mcpeffect.WithConnectionScope(context.Background(), mcpeffect.Full)); ok {
		t.Error("SessionScope reads a scope from a context that only WithConnectionScope made")
	}
}
