package mcpeffect

import (
	"errors"
	"fmt"
	"strings"
)

// A Scope is what a credential may call. Scopes are ordered levels, each
// allowing all that the one below allows and more:
//
//	ReadOnly        reads
//	NonDestructive  reads and writes that are not destructive
//	Full            everything classified
//
// The zero Scope allows nothing, so a caller whose scope could not be
// determined is refused.
type Scope uint8

// The scopes, from least to most.
const (
	ReadOnly Scope = iota + 1
	NonDestructive
	Full
)

var scopeNames = [...]string{"none", "read-only", "non-destructive", "full"}

// String returns "read-only", "non-destructive", "full", or "none" for the
// zero Scope: the form [ParseScope] reads.
func (s Scope) String() string {
	if int(s) < len(scopeNames) {
		return scopeNames[s]
	}
	return fmt.Sprintf("Scope(%d)", uint8(s))
}

// atLeast reports whether s is a valid scope at the level need or above.
func (s Scope) atLeast(need Scope) bool {
	return need <= s && s <= Full
}

// ParseScope parses "read-only", "non-destructive", "full" or "none", in
// any case.
func ParseScope(text string) (Scope, error) {
	for i, name := range scopeNames {
		if strings.EqualFold(text, name) {
			return Scope(i), nil
		}
	}
	return 0, fmt.Errorf("mcpeffect: unknown scope %q (want read-only, non-destructive, full or none)", text)
}

// MarshalText implements [encoding.TextMarshaler].
func (s Scope) MarshalText() ([]byte, error) {
	if s > Full {
		return nil, fmt.Errorf("mcpeffect: cannot marshal invalid scope %d", uint8(s))
	}
	return []byte(s.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler] with [ParseScope].
func (s *Scope) UnmarshalText(text []byte) error {
	v, err := ParseScope(string(text))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// The scope strings that [ScopeNames] uses for a field left empty.
const (
	DefaultReadOnlyScope       = "tools:read"
	DefaultNonDestructiveScope = "tools:write"
	DefaultFullScope           = "tools:destructive"
)

// ScopeNames maps the scope strings that credentials carry (OAuth scopes,
// as in [auth.TokenInfo]) to a [Scope], and back. Each string grants its
// level and every level below it: a token with only "tools:write" may read.
//
// An empty field takes its default name (DefaultReadOnlyScope and so on), so
// the zero ScopeNames is the default mapping.
//
// [auth.TokenInfo]: https://pkg.go.dev/github.com/modelcontextprotocol/go-sdk/auth#TokenInfo
type ScopeNames struct {
	ReadOnly       string
	NonDestructive string
	Full           string
}

// Name returns the scope string that grants s, or "" for the zero or an
// invalid Scope.
func (n ScopeNames) Name(s Scope) string {
	switch s {
	case ReadOnly:
		return orDefault(n.ReadOnly, DefaultReadOnlyScope)
	case NonDestructive:
		return orDefault(n.NonDestructive, DefaultNonDestructiveScope)
	case Full:
		return orDefault(n.Full, DefaultFullScope)
	}
	return ""
}

// orDefault returns s, or def if s is empty.
func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Strings returns the three scope strings from least to most, as a
// server lists them in its protected resource metadata (scopes_supported).
func (n ScopeNames) Strings() []string {
	return []string{n.Name(ReadOnly), n.Name(NonDestructive), n.Name(Full)}
}

// Scope returns the widest Scope that the scope strings of a credential
// grant; strings it does not know are ignored. None of its strings, or
// none at all, is the zero Scope. It allocates nothing.
func (n ScopeNames) Scope(scopes []string) Scope {
	full, write, read := n.Name(Full), n.Name(NonDestructive), n.Name(ReadOnly)
	var s Scope
	for _, str := range scopes {
		switch str {
		case full:
			return Full
		case write:
			s = NonDestructive
		case read:
			if s < ReadOnly {
				s = ReadOnly
			}
		}
	}
	return s
}

// Validate returns an error if a name is not a valid OAuth scope token
// (RFC 6749, section 3.3: printable ASCII without space, " or \) or if two
// levels share a name. [Registry.Enforcer] and [Registry.Middleware] panic
// on names it refuses.
func (n ScopeNames) Validate() error {
	names := n.Strings()
	for i, name := range names {
		if err := checkScopeToken(name); err != nil {
			return fmt.Errorf("mcpeffect: scope name for %s: %w", Scope(i+1), err)
		}
		for j := range i {
			if names[j] == name {
				return fmt.Errorf("mcpeffect: scope name %q is given to both %s and %s", name, Scope(j+1), Scope(i+1))
			}
		}
	}
	return nil
}

func checkScopeToken(s string) error {
	if s == "" {
		return errors.New("empty scope")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return fmt.Errorf("scope %q: byte %#x at %d is not allowed in a scope token", s, c, i)
		}
	}
	return nil
}
