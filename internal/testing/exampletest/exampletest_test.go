package exampletest

import (
	"slices"
	"testing"
)

// TestBlocks: the blocks of one language, in order, each whole; a fence
// inside a line, or of another language, is not a block.
func TestBlocks(t *testing.T) {
	md := "# Title\n\n```go\npackage main\n```\n\ntext ```go not a fence\n\n```sh\necho hi\n```\n\n```go\n// two\n\nlines\n```\n\n```go\nunclosed\n"
	for _, tc := range []struct {
		lang string
		want []string
	}{
		{"go", []string{"package main\n", "// two\n\nlines\n"}},
		{"sh", []string{"echo hi\n"}},
		{"text", nil},
	} {
		if got := Blocks([]byte(md), tc.lang); !slices.Equal(got, tc.want) {
			t.Errorf("Blocks(%q) = %q, want %q", tc.lang, got, tc.want)
		}
	}
}
