package web

import (
	"fmt"
	"testing"
)

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"ship v2":              "ship v2",
		"invoice\u202egnp.exe": "invoice⟨U+202E⟩gnp.exe",
		"a\u200bb\u2066c":      "a⟨U+200B⟩b⟨U+2066⟩c",
		"line\nnext\ttab":      "line\nnext\ttab",
		"bell\a\x00\x7f\u0085": "bell⟨U+0007⟩⟨U+0000⟩⟨U+007F⟩⟨U+0085⟩",
		"bad \xff byte":        "bad ⟨U+FFFD⟩ byte",
		"para\u2029sep":        "para⟨U+2029⟩sep",
		"<b>é</b> İ":           "<b>é</b> İ", // html/template escapes markup; letters stay
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}

func ExampleVisible() {
	fmt.Println(Visible("invoice\u202egnp.exe"))
	// Output: invoice⟨U+202E⟩gnp.exe
}
