//go:build unix

package store

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/mcpeffect/mcpeffect"
)

// TestOpenFileModes opens databases under a umask that leaves every bit,
// in a new directory and in one open to all: the directory made is 0700,
// and the database, its -wal and its -shm 0600; a database made 0644 by
// an older Done is narrowed to 0600.
func TestOpenFileModes(t *testing.T) {
	sqliteOnly(t)
	old := syscall.Umask(0)
	defer syscall.Umask(old)

	for _, c := range []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{"new directory", func(*testing.T, string) {}},
		{"existing directory open to all", func(t *testing.T, dir string) {
			if err := os.MkdirAll(dir, 0o777); err != nil {
				t.Fatal(err)
			}
		}},
		{"existing database made 0644", func(t *testing.T, dir string) {
			s, _, err := Open(t.Context(), dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
			for _, suffix := range []string{"", "-wal", "-shm"} {
				os.Chmod(filepath.Join(dir, FileName+suffix), 0o644)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data", "done")
			c.setup(t, dir)
			s, _, err := Open(t.Context(), dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// A write makes the -wal and -shm files, and a read through
			// the reader opens them too.
			if _, _, err := s.MintToken(t.Context(), NewToken{Name: "alice", Kind: Human, Scope: mcpeffect.Full}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.AllTokens(t.Context()); err != nil {
				t.Fatal(err)
			}
			for _, suffix := range []string{"", "-wal", "-shm"} {
				info, err := os.Stat(filepath.Join(dir, FileName+suffix))
				if err != nil {
					t.Errorf("%s: %v", FileName+suffix, err)
					continue
				}
				if info.Mode().Perm() != 0o600 {
					t.Errorf("%s has mode %v, want 0600", FileName+suffix, info.Mode().Perm())
				}
			}
			if c.name == "new directory" {
				for _, d := range []string{dir, filepath.Dir(dir)} {
					if info, err := os.Stat(d); err != nil || info.Mode().Perm() != 0o700 {
						t.Errorf("the directory %s made: %v, %v; want 0700", d, info.Mode().Perm(), err)
					}
				}
			}
		})
	}
}
