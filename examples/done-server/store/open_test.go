package store

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mcpeffect/mcpeffect"
)

// TestOpenOddPaths opens data directories whose names mean something in
// a URI: the database lands inside each, nothing lands beside it, and no
// name sets a parameter of the driver.
func TestOpenOddPaths(t *testing.T) {
	sqliteOnly(t)
	for _, name := range []string{
		"a?b", "a#b", "100%", "%41", "%zz", "sp ace", "semi;colon&and=equals", "ünï 日本",
		// A name that would be the driver's parameters, pasted into
		// the URI: the journal would no longer be a WAL.
		"x?_journal_mode=DELETE&_foreign_keys=off&",
		"file:x", "#", "?",
	} {
		t.Run(name, func(t *testing.T) {
			parent := t.TempDir()
			dir := filepath.Join(parent, name)
			s, created, err := Open(t.Context(), dir, nil)
			if err != nil {
				t.Fatalf("Open(%q): %v", dir, err)
			}
			defer s.Close()
			if !created {
				t.Error("a new database was not reported created")
			}
			if _, _, err := s.MintToken(t.Context(), NewToken{Name: "alice", Kind: Human, Scope: mcpeffect.Full}); err != nil {
				t.Fatal(err)
			}
			if info, err := os.Stat(filepath.Join(dir, FileName)); err != nil || info.Size() == 0 {
				t.Errorf("the database is not in the directory: %v", err)
			}
			entries, err := os.ReadDir(parent)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if want := []string{filepath.Base(dir)}; !slices.Equal(names, want) {
				t.Errorf("beside the data directory: %q, want only %q", names, want)
			}
			var mode string
			var fk int
			if err := s.reader.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
				t.Errorf("journal_mode %q (%v), want wal", mode, err)
			}
			if err := s.writer.QueryRow("PRAGMA foreign_keys").Scan(&fk); err != nil || fk != 1 {
				t.Errorf("foreign_keys %d (%v), want 1", fk, err)
			}
		})
	}
}
