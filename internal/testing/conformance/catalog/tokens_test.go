package catalog

import (
	"slices"
	"testing"
)

// TestTokenFlag checks how -token is read.
func TestTokenFlag(t *testing.T) {
	for _, tc := range []struct {
		arg    string
		secret string
		scopes []string
		ok     bool
	}{
		{"s=tools:read", "s", []string{"tools:read"}, true},
		{"s=tools:read, tools:write", "s", []string{"tools:read", "tools:write"}, true},
		{"s=", "s", nil, true},
		{"a=b=c", "a", []string{"b=c"}, true},
		{"=tools:read", "", nil, false},
		{"tools:read", "", nil, false},
	} {
		f := TokenFlag{}
		err := f.Set(tc.arg)
		if (err == nil) != tc.ok {
			t.Errorf("Set(%q): error %v, want ok %t", tc.arg, err, tc.ok)
			continue
		}
		if scopes, found := f[tc.secret]; tc.ok && (!found || !slices.Equal(scopes, tc.scopes)) {
			t.Errorf("Set(%q): %v, want %q: %q", tc.arg, f, tc.secret, tc.scopes)
		}
	}
}
