package main

import (
	"context"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/refusal"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

func (d *done) addAccountTools(t toolbox) {
	addTool(t, "whoami", "Who am I",
		"Who is behind the token: a person or an agent, its name, and its scope (whether it may write, and delete).",
		mcpeffect.Read, d.whoami)
	addTool(t, "list_tokens", "List tokens",
		"The tokens the caller oversees: its own and, for a person, every agent's (what agents were given or minted), each with who minted it, scope, expiry, last use. Never their secrets, which Done does not keep."+paged,
		mcpeffect.Read, d.listTokens)

	addTool(t, "create_token", "Create token",
		"Mint an API token, for the caller or for an agent, with a scope no wider than what the caller may do (its token's scope, or less on a capped connection). The new token expires at the latest when the caller's does, and revoking the caller's revokes it. The secret is in the answer, once.",
		mcpeffect.Write, d.createToken)
	addTool(t, "revoke_token", "Revoke token",
		"Revoke for good a token the caller oversees (see list_tokens), with every token it minted and every calendar link those made: calls and feeds fail from the next one on.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.revokeToken)
}

type whoamiResult struct {
	TokenID string     `json:"token_id"`
	Name    string     `json:"name"`
	Kind    store.Kind `json:"kind"`
	// Scope is what the caller may call: the token's scope, or less if
	// the connection is capped (done-server serve -scope), as the
	// registry's middleware let the call through. It is absent where no
	// such check ran, as on a server built without that middleware.
	Scope mcpeffect.Scope `json:"scope,omitempty"`
	// ScopeString is the OAuth scope that grants Scope.
	ScopeString string          `json:"scope_string,omitempty"`
	ReadOnly    bool            `json:"read_only"`
	TokenScope  mcpeffect.Scope `json:"token_scope"`
	// Owner is true for the owner of the data directory, whom Done serves
	// over stdio when no DONE_TOKEN is set.
	Owner     bool   `json:"owner,omitempty"`
	ExpiresAt string `json:"expires_at,omitempty"`
}

func (d *done) whoami(ctx context.Context, _ noArgs) (whoamiResult, error) {
	k := callerToken(ctx)
	scope := mcpeffect.CallerScopeFromContext(ctx)
	return whoamiResult{
		TokenID:     k.ID,
		Name:        k.Name,
		Kind:        k.Kind,
		Scope:       scope,
		ScopeString: scopeNames.Name(scope),
		ReadOnly:    scope == mcpeffect.ReadOnly,
		TokenScope:  k.Scope,
		Owner:       k.Owner,
		ExpiresAt:   k.ExpiresAt,
	}, nil
}

type tokensResult struct {
	Tokens     []store.Token `json:"tokens"`
	NextCursor string        `json:"next_cursor,omitempty"`
}

func (d *done) listTokens(ctx context.Context, in store.Page) (tokensResult, error) {
	l, err := d.store.ListTokens(ctx, caller(ctx), in)
	return tokensResult{l.Items, l.NextCursor}, err
}

type createTokenArgs struct {
	Name          string          `json:"name" jsonschema:"whose token it is: the caller's own name, or the name of an agent"`
	Kind          store.Kind      `json:"kind"`
	Scope         mcpeffect.Scope `json:"scope" jsonschema:"at most what the caller may do: whoami's scope"`
	ExpiresInDays int             `json:"expires_in_days,omitempty" jsonschema:"how many days the token lasts (1 to 3650); left out, it lasts until revoked"`
}

type createTokenResult struct {
	Token store.Token `json:"token"`
	// Secret is the bearer token, shown this once.
	Secret string `json:"secret"`
}

func (d *done) createToken(ctx context.Context, in createTokenArgs) (createTokenResult, error) {
	if in.ExpiresInDays < 0 || in.ExpiresInDays > 3650 {
		return createTokenResult{}, refusal.New(refusal.Invalid, "expires_in_days must be between 1 and 3650")
	}
	// What the call may do, not what the token may: on a connection
	// capped below its token, a wider token would escape the cap.
	k, secret, err := d.store.CreateToken(ctx, caller(ctx), mcpeffect.CallerScopeFromContext(ctx), store.NewToken{
		Name: in.Name, Kind: in.Kind, Scope: in.Scope, TTL: time.Duration(in.ExpiresInDays) * 24 * time.Hour,
	})
	return createTokenResult{k, secret}, err
}

type tokenArg struct {
	TokenID string `json:"token_id" jsonschema:"the id of the token (from list_tokens)"`
}

func (d *done) revokeToken(ctx context.Context, in tokenArg) (store.Token, error) {
	return d.store.RevokeToken(ctx, caller(ctx), in.TokenID)
}
