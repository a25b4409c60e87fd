package connector

import (
	"cmp"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A Folder is a [Connector] over a directory of Markdown (.md, .markdown)
// and text (.txt) files. A document's id is its path in the directory,
// with slashes, such as notes/plan.md.
//
// What a caller may reach is exactly what a search may find: a regular
// file with one of those extensions, none of whose path is hidden (no
// name starts with a dot, so not .git nor .env), reached through no
// symbolic link at all, neither the file nor a folder on its path. A
// link's target is chosen by whoever made the link, and may be hidden or
// elsewhere on the disk; so links are not followed, even those that stay
// inside. Every access also goes through an [os.Root] opened on the
// directory, so that no id reaches outside it, with .. or as an absolute
// path, even if the folder changes under a call. Nothing is opened
// before it is known to be a regular file, and then opened without
// blocking: a FIFO or a device never holds a call.
type Folder struct {
	name string
	dir  string
}

// NewFolder returns a Folder named name over the directory dir, which it
// makes if it does not exist.
func NewFolder(name, dir string) (*Folder, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &Folder{name: name, dir: dir}, nil
}

// Limits of a Folder.
const (
	// MaxFileSize is the largest file a Folder searches or reads; larger
	// ones are left out of searches, and cut when read.
	MaxFileSize = 1 << 20
	// MaxReadBytes is the most of a file that Read returns.
	MaxReadBytes = 256 << 10
	// MaxSaveBytes is the most text Save writes.
	MaxSaveBytes = 256 << 10
	// MaxSearchFiles is the most entries a search walks: a search of a
	// larger folder looks at the first ones only.
	MaxSearchFiles = 10000
	// MaxIDBytes is the longest id.
	MaxIDBytes = 1024
)

// extensions are those of the files a Folder holds.
var extensions = []string{".md", ".markdown", ".txt"}

// Info describes f. Its Location is the name of the folder, never its
// path on the server's disk, which is not the caller's to know.
func (f *Folder) Info() Info {
	return Info{
		Name:        f.name,
		Kind:        "folder",
		Description: "Markdown and text files in a folder on the server's disk",
		Location:    "the folder " + strconv.Quote(filepath.Base(f.dir)) + " of the server",
	}
}

// checkID returns an error unless id can name a document of a Folder: a
// relative path with slashes, within the folder, of a Markdown or text
// file, and not hidden.
func checkID(id string) error {
	switch {
	case id == "":
		return invalidf("the document id is empty")
	case len(id) > MaxIDBytes:
		return invalidf("document id %.40q... is longer than %d bytes", id, MaxIDBytes)
	case !utf8.ValidString(id) || strings.ContainsFunc(id, unicode.IsControl):
		return invalidf("document id %q is not valid text", id)
	case strings.HasPrefix(id, "/") || filepath.IsAbs(id) || !filepath.IsLocal(filepath.FromSlash(id)):
		return invalidf("document id %q is not a path inside the folder", id)
	case !slices.Contains(extensions, strings.ToLower(path.Ext(id))):
		return invalidf("document id %q is not a Markdown or text file (%s)", id, strings.Join(extensions, ", "))
	}
	for part := range strings.SplitSeq(id, "/") {
		if strings.HasPrefix(part, ".") {
			return invalidf("document id %q names a hidden file or folder", id)
		}
	}
	return nil
}

// openError turns an error of the os.Root into one for the caller.
func openError(id string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return notFoundf("document %q does not exist", id)
	}
	// os.Root refuses, among others, a path that escapes it through a
	// symbolic link, which the caller should hear of.
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return invalidf("document %q cannot be opened in the folder: %v", id, pe.Err)
	}
	return err
}

// checkDirs returns an error unless every folder on the way to id (all
// of its elements but the last) that exists is a directory, and not a
// symbolic link. It stops at the first that does not exist: Save makes it.
func checkDirs(root *os.Root, id string) error {
	dir := ""
	parts := strings.Split(id, "/")
	for _, part := range parts[:len(parts)-1] {
		dir = path.Join(dir, part)
		info, err := root.Lstat(filepath.FromSlash(dir))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return openError(id, err)
		case info.Mode()&fs.ModeSymlink != 0:
			return invalidf("%q is a symbolic link, which the folder does not follow", dir)
		case !info.IsDir():
			return invalidf("%q is not a folder", dir)
		}
	}
	return nil
}

// openDocument opens the document id of root for reading, if it is a
// regular file reached through no symbolic link, and returns it with its
// information. It never blocks: the file is opened only once Lstat has
// said it is a regular file, without following a link and without
// waiting (O_NONBLOCK, for a FIFO put there in between), and it is
// checked again once open, so that a file swapped in between is refused.
func openDocument(root *os.Root, id string) (*os.File, fs.FileInfo, error) {
	if err := checkDirs(root, id); err != nil {
		return nil, nil, err
	}
	name := filepath.FromSlash(id)
	info, err := root.Lstat(name)
	switch {
	case err != nil:
		return nil, nil, openError(id, err)
	case info.Mode()&fs.ModeSymlink != 0:
		return nil, nil, invalidf("document %q is a symbolic link, which the folder does not follow", id)
	case !info.Mode().IsRegular():
		return nil, nil, invalidf("document %q is not a regular file", id)
	}
	file, err := root.OpenFile(name, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, nil, openError(id, err)
	}
	opened, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, nil, err
	}
	if !opened.Mode().IsRegular() || !os.SameFile(info, opened) {
		file.Close()
		return nil, nil, invalidf("document %q changed while it was opened: try again", id)
	}
	return file, opened, nil
}

// Read returns the document whose id is id, with at most MaxReadBytes of
// its text.
func (f *Folder) Read(ctx context.Context, id string) (Document, error) {
	if err := checkID(id); err != nil {
		return Document{}, err
	}
	root, err := os.OpenRoot(f.dir)
	if err != nil {
		return Document{}, err
	}
	defer root.Close()
	file, info, err := openDocument(root, id)
	if err != nil {
		return Document{}, err
	}
	defer file.Close()
	data, err := io.ReadAll(io.LimitReader(file, MaxReadBytes+1))
	if err != nil {
		return Document{}, err
	}
	d := Document{ID: id, Size: info.Size(), Modified: info.ModTime().UTC()}
	if len(data) > MaxReadBytes {
		data, d.Truncated = trimRune(data[:MaxReadBytes]), true
	}
	if !utf8.Valid(data) {
		return Document{}, invalidf("document %q is not UTF-8 text", id)
	}
	d.Text = string(data)
	d.Title = title(id, d.Text)
	return d, nil
}

// trimRune cuts the end of b back to the end of its last whole UTF-8
// sequence, so that a cut in the middle of one is not taken for binary.
func trimRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// title returns the first Markdown heading of text, or else the name of
// the file without its extension.
func title(id, text string) string {
	for line := range strings.Lines(text) {
		if h, ok := strings.CutPrefix(line, "# "); ok && strings.TrimSpace(h) != "" {
			return strings.TrimSpace(h)
		}
	}
	base := path.Base(id)
	return strings.TrimSuffix(base, path.Ext(base))
}

// Search returns at most limit documents whose title or text holds query,
// ignoring case: those whose title holds it first, then the most recently
// modified.
func (f *Folder) Search(ctx context.Context, query string, limit int) ([]Document, error) {
	query = strings.TrimSpace(query)
	if query == "" {
		return nil, invalidf("the query is empty")
	}
	root, err := os.OpenRoot(f.dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	needle := fold(query)
	type hit struct {
		doc     Document
		inTitle bool
	}
	var hits []hit
	seen := 0
	err = fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			// An entry that cannot be read is left out; the search goes
			// on with the others.
			return nil
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		if seen++; seen > MaxSearchFiles {
			return fs.SkipAll
		}
		hidden := p != "." && strings.HasPrefix(d.Name(), ".")
		switch {
		case d.IsDir() && hidden:
			return fs.SkipDir
		case d.IsDir(), hidden, !d.Type().IsRegular():
			// d.Type is that of the entry itself: a symbolic link is
			// not regular, whatever it points at.
			return nil
		case !slices.Contains(extensions, strings.ToLower(path.Ext(p))):
			return nil
		}
		info, err := d.Info()
		if err != nil || info.Size() > MaxFileSize {
			return nil
		}
		data, ok := readForSearch(root, p)
		if !ok {
			return nil
		}
		text := string(data)
		t := title(p, text)
		inTitle := strings.Contains(fold(t), needle)
		at, end := folded{text, foldBytes(text)}.indexFold(needle)
		if !inTitle && at < 0 {
			return nil
		}
		hits = append(hits, hit{Document{ID: p, Title: t, Snippet: snippet(text, at, end), Size: info.Size(), Modified: info.ModTime().UTC()}, inTitle})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.inTitle != b.inTitle {
			if a.inTitle {
				return -1
			}
			return 1
		}
		return cmp.Or(b.doc.Modified.Compare(a.doc.Modified), strings.Compare(a.doc.ID, b.doc.ID))
	})
	docs := make([]Document, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		docs = append(docs, h.doc)
	}
	return docs, nil
}

// snippet returns about 160 bytes of text around its bytes [at, end), on
// one line; the start of the text if at is negative (no match). at and
// end must be offsets of text with at <= end, or at negative; whatever
// bytes text holds, the snippet is valid UTF-8.
func snippet(text string, at, end int) string {
	const before, after = 60, 100
	if at < 0 {
		at, end = 0, 0
	}
	from, to := max(0, at-before), min(len(text), end+after)
	for from > 0 && !utf8.RuneStart(text[from]) {
		from--
	}
	for to < len(text) && !utf8.RuneStart(text[to]) {
		to++
	}
	s := strings.Join(strings.Fields(strings.ToValidUTF8(text[from:to], "\uFFFD")), " ")
	if from > 0 {
		s = "…" + s
	}
	if to < len(text) {
		s += "…"
	}
	return s
}

// readForSearch reads the document id for a search, and reports whether
// it is text to search: a regular file of at most MaxFileSize bytes, of
// valid UTF-8.
func readForSearch(root *os.Root, id string) ([]byte, bool) {
	file, _, err := openDocument(root, id)
	if err != nil {
		return nil, false
	}
	defer file.Close()
	// The file may have grown since it was listed: read no more than the
	// limit allows, and one byte to tell.
	data, err := io.ReadAll(io.LimitReader(file, MaxFileSize+1))
	if err != nil || len(data) > MaxFileSize || !utf8.Valid(data) {
		return nil, false
	}
	return data, true
}

// Save writes d as a new Markdown file, named after its title, in its
// folder, which it makes if need be. It never overwrites a file: when the
// name is taken, it adds -2, -3 and so on. It refuses a folder reached
// through a symbolic link.
func (f *Folder) Save(ctx context.Context, d Draft) (Document, error) {
	d.Title = strings.TrimSpace(d.Title)
	switch {
	case d.Title == "":
		return Document{}, invalidf("the title is empty")
	case utf8.RuneCountInString(d.Title) > 200 || strings.ContainsFunc(d.Title, unicode.IsControl):
		return Document{}, invalidf("the title must be one line of at most 200 characters")
	case len(d.Text) > MaxSaveBytes:
		return Document{}, invalidf("the text is %d bytes long; at most %d are allowed", len(d.Text), MaxSaveBytes)
	case !utf8.ValidString(d.Text+d.Title) || strings.ContainsRune(d.Text, utf8.RuneError) || strings.ContainsRune(d.Text, 0):
		return Document{}, invalidf("the title or the text is not valid UTF-8 text")
	}
	base := slug(d.Title)
	if d.Folder != "" {
		if err := checkID(d.Folder + "/" + base + ".md"); err != nil {
			return Document{}, invalidf("folder %q is not a folder inside the source", d.Folder)
		}
		base = strings.Trim(d.Folder, "/") + "/" + base
	}
	root, err := os.OpenRoot(f.dir)
	if err != nil {
		return Document{}, err
	}
	defer root.Close()
	if err := checkDirs(root, base+".md"); err != nil {
		return Document{}, invalidf("folder %q cannot be written: %v", d.Folder, err)
	}
	if d.Folder != "" {
		if err := root.MkdirAll(filepath.FromSlash(path.Dir(base)), 0o700); err != nil {
			return Document{}, openError(d.Folder, err)
		}
	}
	content := "# " + d.Title + "\n\n" + d.Text
	if !strings.HasSuffix(content, "\n") {
		content += "\n"
	}
	for n := 1; n <= 100; n++ {
		id := base + ".md"
		if n > 1 {
			id = base + "-" + strconv.Itoa(n) + ".md"
		}
		// O_EXCL makes the file new or fails, with no window between a
		// check and the creation, and refuses a symbolic link or a FIFO
		// in its place, which it does not open.
		file, err := root.OpenFile(filepath.FromSlash(id), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return Document{}, openError(id, err)
		}
		_, err = io.WriteString(file, content)
		if cerr := file.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			// The file is new: removing it leaves the folder as it was.
			root.Remove(filepath.FromSlash(id))
			return Document{}, err
		}
		info, err := root.Lstat(filepath.FromSlash(id))
		if err != nil {
			return Document{}, err
		}
		return Document{ID: id, Title: d.Title, Size: info.Size(), Modified: info.ModTime().UTC()}, nil
	}
	return Document{}, invalidf("100 documents are already named after %q: pick another title", d.Title)
}

// slug returns a file name made of the letters and digits of title, in
// lower case, words joined by dashes, at most 60 characters: "Release
// notes, v2!" is release-notes-v2.
func slug(title string) string {
	var b strings.Builder
	dash := false
	n := 0
	for _, r := range strings.ToLower(title) {
		if n == 60 {
			break
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
				n++
			}
			b.WriteRune(r)
			n++
			dash = false
			continue
		}
		dash = true
	}
	if b.Len() == 0 {
		return "note"
	}
	return b.String()
}
