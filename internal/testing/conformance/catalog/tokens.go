package catalog

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// TokenFlag collects -token SECRET=SCOPE[,SCOPE...] flags: the bearer
// tokens a conformance server accepts, each with its scope strings.
type TokenFlag map[string][]string

func (f TokenFlag) String() string { return fmt.Sprintf("%d tokens", len(f)) }

// Set adds the token of v, SECRET=SCOPE[,SCOPE...].
func (f TokenFlag) Set(v string) error {
	secret, scopes, ok := strings.Cut(v, "=")
	if !ok || secret == "" {
		return errors.New("want SECRET=SCOPE[,SCOPE...]")
	}
	var list []string
	for s := range strings.SplitSeq(scopes, ",") {
		if s = strings.TrimSpace(s); s != "" {
			list = append(list, s)
		}
	}
	f[secret] = list
	return nil
}

// Verifier accepts the tokens of tokens (secret to scope strings),
// comparing each in constant time so that the time of a refusal tells
// nothing of the secrets.
func Verifier(tokens map[string][]string) auth.TokenVerifier {
	return func(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
		var scopes []string
		found := 0
		for secret, s := range tokens {
			if subtle.ConstantTimeCompare([]byte(secret), []byte(token)) == 1 {
				scopes, found = s, 1
			}
		}
		if found == 0 {
			return nil, auth.ErrInvalidToken
		}
		return &auth.TokenInfo{Scopes: scopes, Expiration: time.Now().Add(time.Hour)}, nil
	}
}
