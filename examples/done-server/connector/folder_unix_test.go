//go:build unix

package connector

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFolderNeverBlocks puts what is not a regular file where a document
// would be: a FIFO (which blocks an open for reading until a writer
// comes), a directory, and links. Read refuses each at once, Search
// passes them by, and Save makes its file beside them.
func TestFolderNeverBlocks(t *testing.T) {
	f, dir, _ := newFolder(t)
	write(t, filepath.Join(dir, "plan.md"), "# Plan\n\nthe plan\n")
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o600); err != nil {
		t.Skipf("FIFOs: %v", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder.md"), 0o700); err != nil {
		t.Fatal(err)
	}
	symlink(t, "pipe.md", filepath.Join(dir, "link-to-pipe.md"))
	symlink(t, "/dev/zero", filepath.Join(dir, "zero.md"))

	within := func(name string, fn func()) {
		t.Helper()
		done := make(chan struct{})
		go func() { defer close(done); fn() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			// Unblock the open, so that the test can end.
			if w, err := os.OpenFile(filepath.Join(dir, "pipe.md"), os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
			t.Fatalf("%s blocked", name)
		}
	}
	for _, id := range []string{"pipe.md", "folder.md", "link-to-pipe.md", "zero.md"} {
		within("Read("+id+")", func() {
			if d, err := f.Read(t.Context(), id); code(err) != Invalid {
				t.Errorf("Read(%q) = %+v, %v; want it refused", id, d, err)
			}
		})
	}
	within("Search", func() {
		res, err := f.Search(t.Context(), "plan", 10)
		if err != nil || len(res.Documents) != 1 || res.Documents[0].ID != "plan.md" {
			t.Errorf("Search: %+v, %v", res, err)
		}
	})
	within("Save", func() {
		d, err := f.Save(t.Context(), Draft{Title: "Pipe", Text: "x"})
		if err != nil || d.ID != "pipe-2.md" {
			t.Errorf("Save next to a FIFO: %+v, %v; want pipe-2.md", d, err)
		}
	})
}
