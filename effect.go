package mcpeffect

import (
	"errors"
	"fmt"
	"strings"
)

// An Effect classifies what calling a tool does to the world. It is a set of
// flags combined with |.
//
// Every valid effect has exactly one of [Read] or [Write]. [Destructive] and
// [Idempotent] describe writes and carry the [Write] bit themselves, so
// Destructive|Idempotent is already a write. [OpenWorld] may be added to
// either.
type Effect uint8

// The flags of an [Effect].
const (
	// Read changes nothing. Reads are idempotent by nature.
	Read Effect = 1 << iota
	// Write changes something. Alone, it is an additive write: a new row,
	// a new message; repeating it adds another.
	Write
	destructiveBit
	idempotentBit
	// OpenWorld reaches outside a closed, known set of resources: another
	// application, the web, a user's files.
	OpenWorld

	// Destructive is a write that deletes or overwrites what exists.
	Destructive = destructiveBit | Write
	// Idempotent is a write that converges: repeating it with the same
	// arguments changes nothing more.
	Idempotent = idempotentBit | Write
)

// effectBits holds every bit an Effect may carry.
const effectBits = Read | Write | destructiveBit | idempotentBit | OpenWorld

// flagNames lists the flags in the order String writes them.
var flagNames = [...]struct {
	bit  Effect
	name string
}{
	{Read, "read"},
	{Write, "write"},
	{destructiveBit, "destructive"},
	{idempotentBit, "idempotent"},
	{OpenWorld, "openworld"},
}

// String returns the flags of e joined by |, such as "write|destructive" or
// "read|openworld": the form [Effect.UnmarshalText] reads back. The zero
// Effect is "none"; bits that no flag names are shown in hex.
func (e Effect) String() string {
	if e == 0 {
		return "none"
	}
	var b strings.Builder
	for _, f := range flagNames {
		if e&f.bit != 0 {
			if b.Len() > 0 {
				b.WriteByte('|')
			}
			b.WriteString(f.name)
		}
	}
	if rest := e &^ effectBits; rest != 0 {
		if b.Len() > 0 {
			b.WriteByte('|')
		}
		fmt.Fprintf(&b, "%#x", uint8(rest))
	}
	return b.String()
}

// Valid reports whether e is an effect a tool can have: it has exactly one
// of [Read] or [Write], no bits that no flag names, and no write flag
// beside Read. [Registry.Add] and [ParseEffect] refuse an invalid effect
// with an error naming the rule it breaks.
func (e Effect) Valid() bool { return e.validate() == nil }

// validate returns nil if e is valid, or an error naming the rule it
// breaks.
func (e Effect) validate() error {
	switch {
	case e&^effectBits != 0:
		return fmt.Errorf("unknown effect bits %#x", uint8(e&^effectBits))
	case e&(Read|Write) == 0:
		if e == 0 {
			return errors.New("no effect: it must have Read or Write")
		}
		return fmt.Errorf("effect %s has neither Read nor Write", e)
	case e&Read != 0 && e&(Write|destructiveBit|idempotentBit) != 0:
		// The message starts with the flag's Go name, as users write it.
		return fmt.Errorf("%s cannot be combined with %s", "Read", writeFlagName(e))
	}
	return nil
}

// writeFlagName names the most specific write flag in e, for errors.
func writeFlagName(e Effect) string {
	switch {
	case e&destructiveBit != 0:
		return "Destructive"
	case e&idempotentBit != 0:
		return "Idempotent"
	}
	return "Write"
}

// MarshalText implements [encoding.TextMarshaler]. Only valid effects
// marshal: an invalid one is an error rather than text that cannot be read
// back.
func (e Effect) MarshalText() ([]byte, error) {
	if err := e.validate(); err != nil {
		return nil, ruleErrorf(ErrInvalidEffect, "mcpeffect: cannot marshal effect %s: %v", e, err)
	}
	return []byte(e.String()), nil
}

// UnmarshalText implements [encoding.TextUnmarshaler]. It reads flag names
// separated by |, in any order and case, with spaces allowed around them:
// "read", "write|destructive", "Write | Idempotent | OpenWorld".
// "destructive" and "idempotent" imply "write". The result must be a valid
// effect (see [Effect.Valid]); on error e is left unchanged.
func (e *Effect) UnmarshalText(text []byte) error {
	v, err := ParseEffect(string(text))
	if err != nil {
		return err
	}
	*e = v
	return nil
}

// ParseEffect parses the text form of an effect; see [Effect.UnmarshalText].
func ParseEffect(s string) (Effect, error) {
	if strings.TrimSpace(s) == "" {
		return 0, ruleErrorf(ErrInvalidEffect, "mcpeffect: empty effect")
	}
	var e Effect
	for part := range strings.SplitSeq(s, "|") {
		name := strings.TrimSpace(part)
		var bit Effect
		for _, f := range flagNames {
			if strings.EqualFold(name, f.name) {
				bit = f.bit
				break
			}
		}
		switch bit {
		case 0:
			return 0, ruleErrorf(ErrInvalidEffect, "mcpeffect: effect %q: unknown flag %q (want read, write, destructive, idempotent or openworld)", s, name)
		case destructiveBit:
			bit = Destructive
		case idempotentBit:
			bit = Idempotent
		}
		e |= bit
	}
	if err := e.validate(); err != nil {
		return 0, ruleErrorf(ErrInvalidEffect, "mcpeffect: effect %q: %v", s, err)
	}
	return e, nil
}

// Required returns the least scope that may make a call of effect e:
// [ReadOnly] for a read, [NonDestructive] for a write that is not
// destructive, [Full] for a destructive one. For an invalid effect (see
// [Effect.Valid]) the result means nothing: [Scope.Allows] refuses such
// an effect whatever the scope.
func (e Effect) Required() Scope {
	switch {
	case e&destructiveBit != 0:
		return Full
	case e&Write != 0:
		return NonDestructive
	}
	return ReadOnly
}

// Allows reports whether s allows a call of effect e: the question for
// one effect, where [Registry.Allowed] asks it of a tool by name. It is
// false for an invalid effect and for the zero Scope.
func (s Scope) Allows(e Effect) bool {
	return e.Valid() && s.atLeast(e.Required())
}

// Within reports whether a call of effect e stays within bound, the
// effect its tool advertises: what hosts were told to assume is never
// less careful than what the call does. A call may be more careful than
// its tool (a read of a tool that may write), never less: not a write
// where the tool reads, not destructive where the tool is not, not a
// write that is not idempotent where the tool's writes are, not open
// world where the tool is closed. It is the one order on effects: the
// bound of a rule's outcomes by their worst case, of the tool-resolution
// extension (see [Hints.Within]), and of what verify and mcpeffecttest
// hold a call to. It is false if either effect is not valid.
func (e Effect) Within(bound Effect) bool {
	switch {
	case !e.Valid() || !bound.Valid():
		return false
	case e&OpenWorld != 0 && bound&OpenWorld == 0:
		return false
	case e&Read != 0:
		return true
	case bound&Read != 0:
		return false
	case e&destructiveBit != 0 && bound&destructiveBit == 0:
		return false
	case bound&idempotentBit != 0 && e&idempotentBit == 0:
		return false
	}
	return true
}
