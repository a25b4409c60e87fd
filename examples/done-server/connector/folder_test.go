package connector

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// newFolder returns a Folder over a fresh directory, next to a directory
// outside it that holds a secret, which no id may reach.
func newFolder(t *testing.T) (f *Folder, dir, outside string) {
	t.Helper()
	base := t.TempDir()
	dir, outside = filepath.Join(base, "context"), filepath.Join(base, "outside")
	f, err := NewFolder("local", dir)
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(outside, "secret.md"), "# Secret\n\nthe password is swordfish\n")
	return f, dir, outside
}

func write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Skipf("symbolic links: %v", err)
	}
}

func code(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return 0
}

// TestFolderEscapes tries every way out of the folder that an id offers:
// none reads, finds or writes anything outside.
func TestFolderEscapes(t *testing.T) {
	f, dir, outside := newFolder(t)
	write(t, filepath.Join(dir, "notes", "plan.md"), "# Plan\n\nship it\n")
	symlink(t, filepath.Join(outside, "secret.md"), filepath.Join(dir, "notes", "link.md"))
	symlink(t, outside, filepath.Join(dir, "linked"))
	symlink(t, "../../outside/secret.md", filepath.Join(dir, "notes", "relative.md"))
	// A link that stays inside the folder is not followed either.
	symlink(t, "plan.md", filepath.Join(dir, "notes", "alias.md"))
	symlink(t, "notes", filepath.Join(dir, "inside"))
	write(t, filepath.Join(dir, ".private", "diary.md"), "# Diary\n\nthe password is swordfish\n")
	symlink(t, ".private/diary.md", filepath.Join(dir, "diary.md"))
	symlink(t, ".private", filepath.Join(dir, "public"))

	for _, c := range []struct {
		name, id string
		want     Code
	}{
		{"dot-dot", "../outside/secret.md", Invalid},
		{"dot-dot inside a path", "notes/../../outside/secret.md", Invalid},
		{"absolute path", filepath.Join(outside, "secret.md"), Invalid},
		{"absolute slash path", "/etc/passwd.txt", Invalid},
		{"symbolic link to a file outside", "notes/link.md", Invalid},
		{"relative symbolic link out", "notes/relative.md", Invalid},
		{"through a symbolically linked parent directory", "linked/secret.md", Invalid},
		{"symbolic link inside the folder", "notes/alias.md", Invalid},
		{"through a symbolically linked folder inside", "inside/plan.md", Invalid},
		{"symbolic link to a hidden file", "diary.md", Invalid},
		{"through a symbolic link to a hidden folder", "public/diary.md", Invalid},
		{"hidden file", ".private/diary.md", Invalid},
		{"hidden", ".git/config.md", Invalid},
		{"not a text file", "notes/plan.pdf", Invalid},
		{"nothing there", "notes/none.md", NotFound},
		{"empty", "", Invalid},
		{"NUL", "notes/pl\x00an.md", Invalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, err := f.Read(t.Context(), c.id)
			if code(err) != c.want {
				t.Fatalf("Read(%q) = %q, %v; want an error of code %d", c.id, d.Text, err, c.want)
			}
			if strings.Contains(err.Error(), "swordfish") {
				t.Errorf("the error shows the secret: %v", err)
			}
		})
	}
	found, err := f.Search(t.Context(), "swordfish", 10)
	if err != nil || len(found.Documents) != 0 {
		t.Errorf("Search found a secret outside or hidden: %+v, %v", found, err)
	}
	found, err = f.Search(t.Context(), "ship", 10)
	if err != nil || len(found.Documents) != 1 || found.Documents[0].ID != "notes/plan.md" {
		t.Errorf("Search ship: %+v, %v; want only notes/plan.md, not the links to it", found, err)
	}

	before, beforeHidden := listing(t, outside), listing(t, filepath.Join(dir, ".private"))
	for _, folder := range []string{"linked", "../outside", outside, "linked/deeper", "public", "inside", "public/deeper"} {
		if d, err := f.Save(t.Context(), Draft{Title: "Escape", Text: "x", Folder: folder}); err == nil {
			t.Errorf("Save into %q wrote %q", folder, d.ID)
		}
	}
	if after := listing(t, outside); !slices.Equal(before, after) {
		t.Errorf("saving changed the directory outside: %v, then %v", before, after)
	}
	if after := listing(t, filepath.Join(dir, ".private")); !slices.Equal(beforeHidden, after) {
		t.Errorf("saving changed the hidden folder: %v, then %v", beforeHidden, after)
	}
}

// listing returns the files under dir, with their sizes.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out = append(out, p+" "+info.Mode().String()+" "+strings.Repeat("*", int(info.Size())))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestFolderSaveNeverOverwrites saves three documents with the same title:
// three files, the first left as it was.
func TestFolderSaveNeverOverwrites(t *testing.T) {
	f, dir, _ := newFolder(t)
	var ids []string
	for _, text := range []string{"first", "second", "third"} {
		d, err := f.Save(t.Context(), Draft{Title: "Release notes, v2!", Text: text, Folder: "notes/2025"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	if want := []string{"notes/2025/release-notes-v2.md", "notes/2025/release-notes-v2-2.md", "notes/2025/release-notes-v2-3.md"}; !slices.Equal(ids, want) {
		t.Fatalf("saved as %v, want %v", ids, want)
	}
	first, err := os.ReadFile(filepath.Join(dir, "notes", "2025", "release-notes-v2.md"))
	if err != nil || string(first) != "# Release notes, v2!\n\nfirst\n" {
		t.Errorf("the first document: %q, %v", first, err)
	}
	// A symbolic link where the name would go is not written through.
	symlink(t, filepath.Join(t.TempDir(), "target.md"), filepath.Join(dir, "dangling.md"))
	d, err := f.Save(t.Context(), Draft{Title: "Dangling", Text: "x"})
	if err != nil || d.ID != "dangling-2.md" {
		t.Errorf("saving over a dangling link: %+v, %v; want dangling-2.md", d, err)
	}
	for _, c := range []struct {
		draft Draft
		want  string
	}{
		{Draft{Title: " ", Text: "x"}, "title is empty"},
		{Draft{Title: "two\nlines", Text: "x"}, "one line"},
		{Draft{Title: "big", Text: strings.Repeat("x", MaxSaveBytes+1)}, "at most"},
		{Draft{Title: "bad", Text: "caf\xe9"}, "not valid UTF-8"},
		{Draft{Title: "hidden", Folder: ".git"}, "not a folder inside"},
	} {
		if _, err := f.Save(t.Context(), c.draft); code(err) != Invalid || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Save(%+v): %v, want an error saying %q", c.draft.Title, err, c.want)
		}
	}
}

// TestFolderSearchAndRead finds documents by title and text, newest first
// after those with the query in their title, and reads them back.
func TestFolderSearchAndRead(t *testing.T) {
	f, dir, _ := newFolder(t)
	write(t, filepath.Join(dir, "old.md"), "# Budget\n\nThe launch costs little.\n")
	write(t, filepath.Join(dir, "new.txt"), "notes on the launch party, "+strings.Repeat("with more words ", 20))
	write(t, filepath.Join(dir, "launch.md"), "# Launch plan\n\nSteps.\n")
	write(t, filepath.Join(dir, "image.png"), "launch")
	write(t, filepath.Join(dir, ".hidden", "launch.md"), "launch")
	old := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "old.md"), old, old); err != nil {
		t.Fatal(err)
	}
	res, err := f.Search(t.Context(), "LAUNCH", 10)
	if err != nil {
		t.Fatal(err)
	}
	found := res.Documents
	if res.Incomplete != "" {
		t.Errorf("a small folder was not searched whole: %s", res.Incomplete)
	}
	var ids []string
	for _, d := range found {
		ids = append(ids, d.ID)
	}
	if want := []string{"launch.md", "new.txt", "old.md"}; !slices.Equal(ids, want) {
		t.Errorf("Search: %v, want %v", ids, want)
	}
	if s := found[1].Snippet; !strings.HasPrefix(s, "notes on the launch party") || !strings.HasSuffix(s, "…") || len(s) > 200 {
		t.Errorf("snippet %q", s)
	}
	if found, _ := f.Search(t.Context(), "launch", 1); len(found.Documents) != 1 {
		t.Errorf("Search with limit 1: %d documents", len(found.Documents))
	}
	d, err := f.Read(t.Context(), "new.txt")
	if err != nil || d.Title != "new" || !strings.HasPrefix(d.Text, "notes on the launch party") || d.Truncated {
		t.Errorf("Read: %+v, %v", d, err)
	}

	// A long file is cut on a rune boundary.
	write(t, filepath.Join(dir, "long.md"), strings.Repeat("é", MaxReadBytes))
	d, err = f.Read(t.Context(), "long.md")
	if err != nil || !d.Truncated || len(d.Text) != MaxReadBytes || d.Size != 2*MaxReadBytes {
		t.Errorf("Read of a long file: %d bytes, truncated %t, size %d, %v", len(d.Text), d.Truncated, d.Size, err)
	}
	write(t, filepath.Join(dir, "binary.md"), "\xff\xfe")
	if _, err := f.Read(t.Context(), "binary.md"); code(err) != Invalid {
		t.Errorf("Read of a file that is not UTF-8: %v", err)
	}
}

// TestFolderSearchHostileText searches documents whose case mapping
// changes byte lengths, the crash of issue 9: a document of U+023A before
// the match made the snippet slice past the end of the text.
func TestFolderSearchHostileText(t *testing.T) {
	f, dir, _ := newFolder(t)
	write(t, filepath.Join(dir, "grow.md"), strings.Repeat("Ⱥ", 1000)+" the launch plan")
	write(t, filepath.Join(dir, "shrink.md"), strings.Repeat("\u212a", 1000)+" the launch plan")
	write(t, filepath.Join(dir, "edge.md"), "plan")
	write(t, filepath.Join(dir, "binary.md"), "plan \xff\xfe")
	for _, query := range []string{"PLAN", "plan", "ⱥ the launch", "ȺȺȺ", "\u212a the", "k the"} {
		res, err := f.Search(t.Context(), query, 10)
		if err != nil {
			t.Fatalf("Search(%q): %v", query, err)
		}
		if len(res.Documents) == 0 {
			t.Errorf("Search(%q) found nothing", query)
		}
		for _, d := range res.Documents {
			if d.ID == "binary.md" {
				t.Errorf("Search(%q) found a file that is not UTF-8 text", query)
			}
			if !utf8.ValidString(d.Snippet) || !strings.Contains(strings.ToLower(d.Snippet), strings.ToLower(strings.TrimPrefix(query, "\u212a"))) {
				t.Errorf("Search(%q): snippet of %s is %q", query, d.ID, d.Snippet)
			}
		}
	}
}

// TestFolderSearchIsBounded fills a folder past what one search reads: the
// newest documents are searched, and the answer says what was left out.
func TestFolderSearchIsBounded(t *testing.T) {
	f, dir, _ := newFolder(t)
	f.limits.searchBytes = 1000
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 10 {
		name := filepath.Join(dir, fmt.Sprintf("note-%d.md", i))
		write(t, name, "needle "+strings.Repeat("x", 193)) // 200 bytes
		at := base.Add(time.Duration(i) * time.Hour)
		if err := os.Chtimes(name, at, at); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(dir, "huge.md"), strings.Repeat("needle ", MaxFileSize/7+1))

	res, err := f.Search(t.Context(), "needle", 50)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range res.Documents {
		ids = append(ids, d.ID)
	}
	if want := []string{"note-9.md", "note-8.md", "note-7.md", "note-6.md", "note-5.md"}; !slices.Equal(ids, want) {
		t.Errorf("found %v, want the five newest, %v", ids, want)
	}
	for _, want := range []string{"only the 5 most recently modified documents were searched", "the 5 older ones were not", "1 documents larger than 1 MiB"} {
		if !strings.Contains(res.Incomplete, want) {
			t.Errorf("Incomplete %q does not say %q", res.Incomplete, want)
		}
	}
}

// TestFolderSaveQuota saves up to the quota of documents and of bytes:
// the save past it is refused with the reason, and writes nothing.
func TestFolderSaveQuota(t *testing.T) {
	for _, c := range []struct {
		name   string
		limits limits
		text   string
		saves  int // that succeed
		want   string
	}{
		{"documents", limits{MaxSearchBytes, 3, MaxFolderBytes}, "x", 3, "holds 3 documents, its quota"},
		{"bytes", limits{MaxSearchBytes, MaxDocuments, 1000}, strings.Repeat("x", 300), 3, "would pass its quota of 1000 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, dir, _ := newFolder(t)
			f.limits = c.limits
			for i := range c.saves {
				if _, err := f.Save(t.Context(), Draft{Title: fmt.Sprintf("Note %d", i), Text: c.text}); err != nil {
					t.Fatalf("save %d: %v", i, err)
				}
			}
			before := listing(t, dir)
			_, err := f.Save(t.Context(), Draft{Title: "One too many", Text: c.text})
			if code(err) != Invalid || !strings.Contains(err.Error(), c.want) {
				t.Errorf("the save past the quota: %v, want an error saying %q", err, c.want)
			}
			if after := listing(t, dir); !slices.Equal(before, after) {
				t.Errorf("the refused save changed the folder: %v, then %v", before, after)
			}
		})
	}
}

// TestFolderInfoShowsNoPath: list_connectors shows Info to every caller,
// read-only ones included, who have no business knowing the server's disk.
func TestFolderInfoShowsNoPath(t *testing.T) {
	f, dir, _ := newFolder(t)
	info := f.Info()
	if strings.Contains(info.Location, dir) || strings.Contains(info.Location, string(filepath.Separator)) || !strings.Contains(info.Location, `"context"`) {
		t.Errorf("Location %q: want the folder's name and no path", info.Location)
	}
}
