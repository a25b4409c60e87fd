package connector

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
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
//
// One search reads a bounded amount of the folder (see MaxSearchBytes),
// and Save fills it up to a quota (see MaxDocuments and MaxFolderBytes).
type Folder struct {
	name string
	dir  string
	// saving makes Save one at a time, so that two saves cannot both
	// pass the quota with the room for one.
	saving sync.Mutex
	limits limits
}

// limits are those of a Folder: the constants below, which tests lower.
type limits struct {
	searchBytes int64
	documents   int
	folderBytes int64
}

// NewFolder returns a Folder named name over the directory dir, which it
// makes if it does not exist.
func NewFolder(name, dir string) (*Folder, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	return &Folder{name: name, dir: dir, limits: limits{MaxSearchBytes, MaxDocuments, MaxFolderBytes}}, nil
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
	// MaxSearchFiles is the most entries (files and folders) a search
	// walks, and so the most a folder may hold for Save to add to it.
	MaxSearchFiles = 10000
	// MaxSearchBytes is the most one search reads: the documents are
	// read newest first until the next would pass it, and the answer
	// says what was left out. A search reads and folds every byte it
	// searches, at each call, in a time that grows with what it reads
	// (docs/features.md says how long). A bounded scan
	// keeps nothing in memory between calls and is never stale, where an
	// index would hold a copy of the folder.
	MaxSearchBytes = 16 << 20
	// MaxDocuments and MaxFolderBytes are the quota of Save: it adds no
	// document to a folder that holds MaxDocuments documents, or whose
	// documents would then pass MaxFolderBytes. A folder that Save alone
	// fills is then always searched whole.
	MaxDocuments   = 2000
	MaxFolderBytes = MaxSearchBytes
	// MaxIDBytes is the longest id.
	MaxIDBytes = 1024
	// MaxQueryBytes is the longest query.
	MaxQueryBytes = 1000
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

// An entry is a document of the folder as its directory lists it.
type entry struct {
	id       string
	size     int64
	modified time.Time
}

// contents are the documents a walk of the folder found.
type contents struct {
	// docs are the documents of at most MaxFileSize bytes.
	docs []entry
	// bytes is the size of all the documents, large ones included.
	bytes int64
	// large counts the documents over MaxFileSize.
	large int
	// cut reports that the folder has more than MaxSearchFiles entries,
	// and that the walk stopped there.
	cut bool
}

// walk lists the documents of the folder in root, without following
// symbolic links or entering hidden folders, and without opening a file.
func walk(ctx context.Context, root *os.Root) (contents, error) {
	var l contents
	seen := 0
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			// An entry that cannot be read is left out; the walk goes on
			// with the others.
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if seen++; seen > MaxSearchFiles {
			l.cut = true
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
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		l.bytes += info.Size()
		if info.Size() > MaxFileSize {
			l.large++
			return nil
		}
		l.docs = append(l.docs, entry{id: p, size: info.Size(), modified: info.ModTime().UTC()})
		return nil
	})
	return l, err
}

// Search returns at most limit documents whose title or text holds query,
// ignoring case: those whose title holds it first, then the most recently
// modified. It reads the documents newest first, up to MaxSearchBytes in
// all; the result's Incomplete says what it left out.
func (f *Folder) Search(ctx context.Context, query string, limit int) (SearchResult, error) {
	query = strings.TrimSpace(query)
	switch {
	case query == "":
		return SearchResult{}, invalidf("the query is empty")
	case len(query) > MaxQueryBytes:
		return SearchResult{}, invalidf("the query is %d bytes long; at most %d are allowed", len(query), MaxQueryBytes)
	case !utf8.ValidString(query):
		return SearchResult{}, invalidf("the query is not valid UTF-8 text")
	}
	root, err := os.OpenRoot(f.dir)
	if err != nil {
		return SearchResult{}, err
	}
	defer root.Close()
	l, err := walk(ctx, root)
	if err != nil {
		return SearchResult{}, err
	}
	slices.SortFunc(l.docs, func(a, b entry) int {
		return cmp.Or(b.modified.Compare(a.modified), strings.Compare(a.id, b.id))
	})

	needle := fold(query)
	type hit struct {
		doc     Document
		inTitle bool
	}
	var hits []hit
	budget := f.limits.searchBytes
	searched := 0
	for _, e := range l.docs {
		if err := ctx.Err(); err != nil {
			return SearchResult{}, err
		}
		if e.size > budget {
			break
		}
		data, info, ok := readForSearch(root, e.id, budget)
		budget -= int64(len(data))
		searched++
		if !ok {
			continue
		}
		text := string(data)
		t := title(e.id, text)
		inTitle := strings.Contains(fold(t), needle)
		at, end := folded{text, foldBytes(text)}.indexFold(needle)
		if !inTitle && at < 0 {
			continue
		}
		doc := Document{ID: e.id, Title: t, Snippet: snippet(text, at, end), Size: info.Size(), Modified: info.ModTime().UTC()}
		hits = append(hits, hit{doc, inTitle})
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
	res := SearchResult{Documents: make([]Document, 0, min(limit, len(hits)))}
	for _, h := range hits[:min(limit, len(hits))] {
		res.Documents = append(res.Documents, h.doc)
	}
	res.Incomplete = incomplete(l, searched, f.limits.searchBytes)
	return res, nil
}

// readForSearch reads the document id for a search that may still read
// budget bytes, and reports whether it is text to search: a regular file,
// at most MaxFileSize and budget bytes long, of valid UTF-8. Whatever it
// read counts against the budget, text or not.
func readForSearch(root *os.Root, id string, budget int64) ([]byte, fs.FileInfo, bool) {
	file, info, err := openDocument(root, id)
	if err != nil {
		return nil, nil, false
	}
	defer file.Close()
	// The file may have grown since it was listed: read no more than the
	// limits allow, and one byte to tell.
	limit := min(MaxFileSize, budget)
	data, err := io.ReadAll(io.LimitReader(file, limit+1))
	if err != nil || int64(len(data)) > limit || !utf8.Valid(data) {
		return data[:min(int64(len(data)), limit)], nil, false
	}
	return data, info, true
}

// incomplete says what a search of l that read its searched newest
// documents, with a budget of searchBytes, left out, or "" if nothing.
func incomplete(l contents, searched int, searchBytes int64) string {
	var parts []string
	if rest := len(l.docs) - searched; rest > 0 {
		parts = append(parts, fmt.Sprintf("only the %d most recently modified documents were searched, the most one search reads (%s); the %d older ones were not", searched, sizeText(searchBytes), rest))
	}
	if l.large > 0 {
		parts = append(parts, fmt.Sprintf("%d documents larger than %d MiB are never searched", l.large, MaxFileSize>>20))
	}
	if l.cut {
		parts = append(parts, fmt.Sprintf("the folder has more than %d files and folders, and those after the first %d were not looked at", MaxSearchFiles, MaxSearchFiles))
	}
	if len(parts) == 0 {
		return ""
	}
	return strings.Join(parts, "; ") + ": a narrower query does not help, moving old documents out of the folder does"
}

// sizeText returns n bytes for people: in MiB, KiB or bytes.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
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

// Save writes d as a new Markdown file, named after its title, in its
// folder, which it makes if need be. It never overwrites a file: when the
// name is taken, it adds -2, -3 and so on. It refuses a folder reached
// through a symbolic link, and a document that would pass the quota
// (MaxDocuments, MaxFolderBytes).
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
	content := "# " + d.Title + "\n\n" + d.Text
	if !strings.HasSuffix(content, "\n") {
		content += "\n"
	}

	f.saving.Lock()
	defer f.saving.Unlock()
	root, err := os.OpenRoot(f.dir)
	if err != nil {
		return Document{}, err
	}
	defer root.Close()
	if err := f.checkQuota(ctx, root, len(content)); err != nil {
		return Document{}, err
	}
	if err := checkDirs(root, base+".md"); err != nil {
		return Document{}, invalidf("folder %q cannot be written: %v", d.Folder, err)
	}
	if d.Folder != "" {
		if err := root.MkdirAll(filepath.FromSlash(path.Dir(base)), 0o700); err != nil {
			return Document{}, openError(d.Folder, err)
		}
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

// checkQuota returns an error unless the folder in root has room for one
// more document of size bytes.
func (f *Folder) checkQuota(ctx context.Context, root *os.Root, size int) error {
	l, err := walk(ctx, root)
	if err != nil {
		return err
	}
	docs, bytes := len(l.docs)+l.large, l.bytes
	switch {
	case l.cut:
		return invalidf("the folder holds more than %d files and folders, more than a search looks at: nothing more is saved into it until some are moved out", MaxSearchFiles)
	case docs >= f.limits.documents:
		return invalidf("the folder holds %d documents, its quota: nothing more is saved into it until some are moved out", docs)
	case bytes+int64(size) > f.limits.folderBytes:
		return invalidf("the folder's documents take %s, and this one (%d bytes) would pass its quota of %s: nothing more is saved into it until some are moved out",
			sizeText(bytes), size, sizeText(f.limits.folderBytes))
	}
	return nil
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
