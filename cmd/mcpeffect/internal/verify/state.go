package verify

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/mcpeffect/mcpeffect/cmd/mcpeffect/internal/connect"
	"github.com/mcpeffect/mcpeffect/internal/effectproof"
)

// A state is records by key, each its fields by name, as
// effectproof.Canonical reads them.
type state map[string]map[string]any

// Bounds on what one capture of the state may make verify hold and read,
// so that a hostile or broken server cannot exhaust its memory, or its
// time, through its state. Bytes alone do not bound what JSON holds once
// decoded: "[0,0,…]" takes some 40 bytes of memory a value of 2 bytes, so
// values are counted too. Variables, so that a test can pass them
// without reading as much.
var (
	// maxStateBytes bounds the bytes held: a JSON file and the output of a
	// command (the SQLite reader's included), read whole, and the contents
	// kept and the paths of a tree.
	maxStateBytes = 16 << 20
	// maxStateValues bounds the values that JSON decodes to, the name of
	// each member of an object counted as one, and the fields of a tree's
	// records.
	maxStateValues = 1_000_000
	// maxTreeBytes bounds the bytes read of a tree's files, those only
	// digested included.
	maxTreeBytes = 256 << 20
)

const (
	maxRecords      = 200_000
	maxContentBytes = 1 << 20 // a file's contents kept as they are; past this, its digest
)

// A BoundError is a capture of the state that went past one of its
// bounds: nothing more of it was read, and verify, which can prove
// nothing of a server whose state it cannot read, stops.
type BoundError struct {
	// Source is the source of the state that went past it: dir, sqlite,
	// json or command.
	Source string
	// What says what went past which bound.
	What string
}

func (e *BoundError) Error() string { return fmt.Sprintf("the %s state: %s", e.Source, e.What) }

// A budget is what is left of the bounds of one capture, shared by its
// sources.
type budget struct {
	bytes  int64 // of maxStateBytes
	values int   // of maxStateValues
	tree   int64 // of maxTreeBytes
}

func newBudget() *budget {
	return &budget{bytes: int64(maxStateBytes), values: maxStateValues, tree: int64(maxTreeBytes)}
}

// hold takes n bytes held out of the budget, or fails naming the bound;
// what is where they are.
func (b *budget) hold(n int64, what string) error {
	if b.bytes -= n; b.bytes < 0 {
		return &BoundError{What: fmt.Sprintf("%s: more than %d bytes held (the bound of one capture)", what, maxStateBytes)}
	}
	return nil
}

// count takes n values out of the budget, or fails naming the bound.
func (b *budget) count(n int, what string) error {
	if b.values -= n; b.values < 0 {
		return &BoundError{What: fmt.Sprintf("%s: more than %d values once decoded (the bound of one capture)", what, maxStateValues)}
	}
	return nil
}

// builtinLeftOut is what each kind of state source leaves out by itself,
// with the reason; help and the report show it.
var builtinLeftOut = map[string][]LeaveOut{
	"dir": {
		{Record: "*", Field: "mtime, atime, ctime", Reason: "times are bookkeeping: a file rewritten with the same contents is the same data"},
		{Record: "*", Field: "owner, group, inode, links", Reason: "who owns a file and where the disk keeps it are the system's, not the data"},
		{Record: "*", Field: "size of a directory", Reason: "a directory's size is how the file system stores its entries; its entries are records of their own"},
	},
	"sqlite": {
		{Record: "sqlite_*", Reason: "SQLite's own tables (sqlite_sequence counts AUTOINCREMENT ids, sqlite_stat* the planner's statistics): the engine's, not the data"},
	},
	"json": {
		{Record: "*", Field: "order of an object's members", Reason: "JSON objects are unordered; the order of arrays is kept, as it is data"},
	},
}

// capture reads the state spec describes, with placeholders replaced:
// each of its sources, and with more than one, each record's key
// prefixed with its source's name.
//
// It holds to the bounds of one capture, failing with a [*BoundError]
// past one, and stops when ctx is done.
func capture(ctx context.Context, spec StateSpec, v vars, sqliteReader []string) (state, error) {
	kinds := spec.kinds()
	b := newBudget()
	if len(kinds) == 1 {
		return captureSource(ctx, spec, kinds[0], v, sqliteReader, b)
	}
	all := state{}
	for _, kind := range kinds {
		s, err := captureSource(ctx, spec, kind, v, sqliteReader, b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		if len(all)+len(s) > maxRecords {
			return nil, &BoundError{Source: kind, What: fmt.Sprintf("more than %d records in all (the bound of one capture)", maxRecords)}
		}
		for key, rec := range s {
			all[kind+":"+key] = rec
		}
	}
	return all, nil
}

// kinds returns the names of the sources spec gives, in a fixed order.
func (s StateSpec) kinds() []string {
	var kinds []string
	for _, k := range []struct {
		name string
		set  bool
	}{{"dir", s.Dir != ""}, {"sqlite", s.SQLite != ""}, {"json", s.JSON != nil}, {"command", len(s.Command) > 0}} {
		if k.set {
			kinds = append(kinds, k.name)
		}
	}
	return kinds
}

// sources names the sources of s as the examples file gives them, in the
// order of kinds: "dir {dir}/root", "json {dir}/db.json at /notes".
func (s StateSpec) sources() []string {
	var out []string
	for _, kind := range s.kinds() {
		switch kind {
		case "dir":
			out = append(out, "dir "+s.Dir)
		case "sqlite":
			out = append(out, "sqlite "+s.SQLite)
		case "json":
			text := "json " + s.JSON.File
			if s.JSON.Lines {
				text = "json lines " + s.JSON.File
			}
			if s.JSON.At != "" {
				text += " at " + s.JSON.At
			}
			out = append(out, text)
		default:
			out = append(out, "command "+strings.Join(s.Command, " "))
		}
	}
	return out
}

// captureSource reads the source of spec called kind, within b. A bound
// passed is a [*BoundError] that names the source.
func captureSource(ctx context.Context, spec StateSpec, kind string, v vars, sqliteReader []string, b *budget) (s state, err error) {
	defer func() {
		var be *BoundError
		if errors.As(err, &be) {
			be.Source = kind
		}
	}()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	switch kind {
	case "dir":
		root, err := v.text(spec.Dir)
		if err != nil {
			return nil, err
		}
		return dirState(ctx, root, b)
	case "json":
		file, err := v.text(spec.JSON.File)
		if err != nil {
			return nil, err
		}
		return jsonState(ctx, file, spec.JSON, b)
	case "sqlite":
		file, err := v.text(spec.SQLite)
		if err != nil {
			return nil, err
		}
		if len(sqliteReader) == 0 {
			return nil, ErrNoSQLiteReader
		}
		s, err := commandState(ctx, append(slices.Clone(sqliteReader), file), "", b)
		var ce *commandError
		var ee *exec.ExitError
		if errors.As(err, &ce) && errors.As(ce.err, &ee) && ee.ExitCode() == sqliteReaderBound {
			// The reader names the bound it met.
			return nil, &BoundError{What: file + ": " + ce.stderr}
		}
		return s, err
	default:
		args, err := v.texts(spec.Command)
		if err != nil {
			return nil, err
		}
		dir, _ := v["dir"].(string)
		return commandState(ctx, args, dir, b)
	}
}

// sqliteReaderBound is the exit code of mcpeffect-sqlite for a database
// past one of its bounds.
const sqliteReaderBound = 3

// ErrNoSQLiteReader is the error of a SQLite state without the command
// that reads it: a setup problem, which the examples cannot fix.
var ErrNoSQLiteReader = errors.New("no SQLite reader: the state has a SQLite source, which mcpeffect-sqlite reads: " +
	"install it beside mcpeffect, from a clone of mcpeffect, with go install ./cmd/mcpeffect ./cmd/mcpeffect-sqlite, or give its path with -sqlite-reader")

// dirState reads the tree under root: a record for each path, relative
// and with slashes ("." for root), with its kind and mode, a file's
// contents, and a symbolic link's target. Links are never followed, and
// special files (FIFOs, devices, sockets) never opened: both are reported
// as what they are.
func dirState(ctx context.Context, root string, b *budget) (state, error) {
	fi, err := os.Lstat(root)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", root)
	}
	s := state{}
	var walk func(dir, rel string) error
	walk = func(dir, rel string) error {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if err := ctx.Err(); err != nil {
				return err
			}
			if len(s) >= maxRecords {
				return &BoundError{What: fmt.Sprintf("%s: more than %d entries (the bound of one capture)", root, maxRecords)}
			}
			path := filepath.Join(dir, e.Name())
			key := e.Name()
			if rel != "." {
				key = rel + "/" + e.Name()
			}
			if err := b.hold(int64(len(key)), root); err != nil {
				return err
			}
			info, err := os.Lstat(path)
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed since the listing: absent, as it is now
			}
			if err != nil {
				return err
			}
			rec, err := fileRecord(ctx, path, info, b)
			var be *BoundError
			switch {
			case errors.As(err, &be):
				be.What = root + ": " + be.What
				return be
			case err != nil:
				return fmt.Errorf("%s: %w", key, err)
			}
			if err := b.count(len(rec), root); err != nil {
				return err
			}
			s[key] = rec
			if info.IsDir() {
				if err := walk(path, key); err != nil {
					return err
				}
			}
		}
		return nil
	}
	s["."] = map[string]any{"kind": "dir", "mode": modeText(fi.Mode())}
	if err := walk(root, "."); err != nil {
		return nil, err
	}
	return s, nil
}

func modeText(m fs.FileMode) string {
	n := uint32(m.Perm())
	if m&fs.ModeSetuid != 0 {
		n |= 0o4000
	}
	if m&fs.ModeSetgid != 0 {
		n |= 0o2000
	}
	if m&fs.ModeSticky != 0 {
		n |= 0o1000
	}
	return fmt.Sprintf("%04o", n)
}

func fileRecord(ctx context.Context, path string, info fs.FileInfo, b *budget) (map[string]any, error) {
	rec := map[string]any{"mode": modeText(info.Mode())}
	switch m := info.Mode(); {
	case m.IsDir():
		rec["kind"] = "dir"
	case m&fs.ModeSymlink != 0:
		rec["kind"] = "symlink"
		target, err := os.Readlink(path)
		if err != nil {
			return nil, err
		}
		if err := b.hold(int64(len(target)), "a link's target"); err != nil {
			return nil, err
		}
		rec["target"] = target
	case m.IsRegular():
		rec["kind"] = "file"
		if err := readContent(ctx, path, rec, b); err != nil {
			return nil, err
		}
	case m&fs.ModeNamedPipe != 0:
		rec["kind"] = "fifo"
	case m&fs.ModeSocket != 0:
		rec["kind"] = "socket"
	case m&fs.ModeDevice != 0:
		rec["kind"] = "device"
	default:
		rec["kind"] = "other"
	}
	return rec, nil
}

// readContent sets the contents of the regular file at path: as text if
// it is UTF-8, in base64 otherwise, and as its size and SHA-256 past
// maxContentBytes. It opens the file without following a link and
// without blocking, and checks it is still a regular file, since it may
// have been replaced since it was listed. What it reads comes out of b's
// tree, what it keeps out of its bytes.
func readContent(ctx context.Context, path string, rec map[string]any, b *budget) error {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		rec["kind"] = "other"
		return nil
	}
	h := sha256.New()
	var kept bytes.Buffer
	n, err := io.Copy(io.MultiWriter(h, &limitedBuffer{&kept, maxContentBytes}), io.LimitReader(ctxReader{ctx, f}, max(b.tree, 0)+1))
	if err != nil {
		return err
	}
	if b.tree -= n; b.tree < 0 {
		return &BoundError{What: fmt.Sprintf("the tree holds more than %d bytes (the bound of one capture's reading)", maxTreeBytes)}
	}
	switch {
	case n > maxContentBytes:
		rec["size"] = n
		rec["sha256"] = hex.EncodeToString(h.Sum(nil))
	case utf8.Valid(kept.Bytes()):
		if err := b.hold(n, "the contents kept"); err != nil {
			return err
		}
		rec["content"] = kept.String()
		if n == 0 {
			rec["size"] = 0 // an empty file is a value, not an empty field
		}
	default:
		text := base64.StdEncoding.EncodeToString(kept.Bytes())
		if err := b.hold(int64(len(text)), "the contents kept"); err != nil {
			return err
		}
		rec["base64"] = text
	}
	return nil
}

// A ctxReader reads r until ctx is done, so that reading a large file
// or a slow one holds to the deadline.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p[:min(len(p), 1<<20)])
}

// A limitedBuffer keeps the first n bytes written to it and drops the
// rest, without failing the write.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n + 1 - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// A valueCounter counts the values of the JSON text written to it (see
// connect.ValueCounter), and fails the write that passes max.
type valueCounter struct {
	connect.ValueCounter
	max  int
	what string // where the text is, for the error
}

func newValueCounter(b *budget, what string) *valueCounter {
	return &valueCounter{max: b.values, what: what}
}

func (c *valueCounter) Write(p []byte) (int, error) {
	c.ValueCounter.Write(p)
	if c.over() {
		return 0, c.err()
	}
	return len(p), nil
}

func (c *valueCounter) over() bool { return c.Count() > c.max }

func (c *valueCounter) err() error {
	return &BoundError{What: fmt.Sprintf("%s: more than %d values once decoded (the bound of one capture)", c.what, maxStateValues)}
}

// readBounded reads r whole, until ctx is done, its bytes and values
// taken out of b: nothing more is read once it passes either.
func readBounded(ctx context.Context, r io.Reader, b *budget, what string) ([]byte, error) {
	var data bytes.Buffer
	count := newValueCounter(b, what)
	_, err := io.Copy(io.MultiWriter(&data, count), io.LimitReader(ctxReader{ctx, r}, max(b.bytes, 0)+1))
	if err != nil {
		return nil, err
	}
	if err := b.hold(int64(data.Len()), what); err != nil {
		return nil, err
	}
	b.values -= count.Count()
	return data.Bytes(), nil
}

// jsonState reads a JSON document, or JSON Lines, as records: each member
// of the collection at spec.At.
func jsonState(ctx context.Context, file string, spec *JSONState, b *budget) (state, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return state{}, nil // no file yet: nothing stored
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", file)
	}
	data, err := readBounded(ctx, f, b, file)
	if err != nil {
		return nil, err
	}
	var doc any
	if spec.Lines {
		var lines []any
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, len(data)+1)
		for i := 1; sc.Scan(); i++ {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			v, err := decodeJSON(line)
			if err != nil {
				return nil, fmt.Errorf("%s, line %d: %v", file, i, err)
			}
			lines = append(lines, v)
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		doc = lines
	} else if len(bytes.TrimSpace(data)) == 0 {
		return state{}, nil
	} else if doc, err = decodeJSON(data); err != nil {
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	coll, err := pointer(doc, spec.At)
	if err != nil {
		return nil, fmt.Errorf("%s: at %q: %v", file, spec.At, err)
	}
	s := state{}
	add := func(ptr string, member any) error {
		if len(s) >= maxRecords {
			return &BoundError{What: fmt.Sprintf("%s: more than %d records (the bound of one capture)", file, maxRecords)}
		}
		key := ptr
		if len(spec.Key) > 0 {
			var parts []string
			for _, k := range spec.Key {
				if v, err := pointer(member, k); err == nil {
					if str, ok := v.(string); ok {
						parts = append(parts, str)
					} else {
						raw, _ := json.Marshal(v)
						parts = append(parts, string(raw))
					}
				}
			}
			key = strings.Join(parts, "/")
		}
		if _, dup := s[key]; dup {
			return fmt.Errorf("two records have the key %q: give a key that tells them apart", key)
		}
		if obj, ok := member.(map[string]any); ok {
			s[key] = obj
			for _, set := range spec.Sets {
				elems, ok := obj[set].([]any)
				if !ok {
					continue
				}
				delete(obj, set)
				for _, el := range elems {
					text, ok := el.(string)
					if !ok {
						raw, _ := json.Marshal(el)
						text = string(raw)
					}
					s[key+"/"+set+"/"+text] = map[string]any{"member": set}
				}
			}
		} else {
			s[key] = map[string]any{"value": member}
		}
		return nil
	}
	switch c := coll.(type) {
	case []any:
		for i, m := range c {
			if err := add(spec.At+"/"+strconv.Itoa(i), m); err != nil {
				return nil, err
			}
		}
	case map[string]any:
		for name, m := range c {
			if err := add(spec.At+"/"+escapePointer(name), m); err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("%s: at %q is neither an array nor an object", file, spec.At)
	}
	return s, nil
}

func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("more than one JSON value")
	}
	return v, nil
}

func escapePointer(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// pointer returns the value at the JSON pointer p (RFC 6901) in doc.
func pointer(doc any, p string) (any, error) {
	if p == "" {
		return doc, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("JSON pointer %q does not start with /", p)
	}
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch d := doc.(type) {
		case map[string]any:
			v, ok := d[tok]
			if !ok {
				return nil, fmt.Errorf("no member %q", tok)
			}
			doc = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(d) {
				return nil, fmt.Errorf("no element %q", tok)
			}
			doc = d[i]
		default:
			return nil, fmt.Errorf("%q is inside a value that is neither an object nor an array", tok)
		}
	}
	return doc, nil
}

// commandState runs args, in dir if it is not "", and reads what it
// prints, within b: one JSON object of records by key, each a JSON object
// of fields.
func commandState(ctx context.Context, args []string, dir string, b *budget) (state, error) {
	if len(args) == 0 || args[0] == "" {
		return nil, errors.New("no state command")
	}
	var stdout bytes.Buffer
	var stderr tailBuffer
	out := &boundedWriter{b: &stdout, max: int(max(b.bytes, 0))}
	count := newValueCounter(b, printable(args[0])+" printed")
	err := runBounded(ctx, args, dir, io.MultiWriter(out, count), &stderr)
	switch {
	case out.over:
		return nil, &BoundError{What: fmt.Sprintf("%s printed more than %d bytes held (the bound of one capture)", printable(args[0]), maxStateBytes)}
	case count.over():
		return nil, count.err()
	case err != nil:
		return nil, &commandError{args[0], err, stderr.String()}
	}
	b.bytes -= int64(stdout.Len())
	b.values -= count.Count()
	var s state
	dec := json.NewDecoder(&stdout)
	dec.UseNumber()
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("%s printed what is not records by key (a JSON object of JSON objects): %v", args[0], err)
	}
	if len(s) > maxRecords {
		return nil, &BoundError{What: fmt.Sprintf("%s printed more than %d records (the bound of one capture)", printable(args[0]), maxRecords)}
	}
	if s == nil {
		s = state{}
	}
	return s, nil
}

// A commandError is a state command that failed: its name, how, and the
// end of what it wrote on its standard error, made printable.
type commandError struct {
	name   string
	err    error
	stderr string
}

func (e *commandError) Error() string { return fmt.Sprintf("%s: %v: %s", e.name, e.err, e.stderr) }

func (e *commandError) Unwrap() error { return e.err }

// runBounded runs args until it exits or ctx is done, its output to
// stdout and stderr. Processes it starts that keep its output open are
// not waited for past a second after it exits, so that ctx holds.
func runBounded(ctx context.Context, args []string, dir string, stdout, stderr io.Writer) error {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second
	return cmd.Run()
}

// A boundedWriter keeps at most max bytes, and fails the write that
// would pass them.
type boundedWriter struct {
	b    *bytes.Buffer
	max  int
	over bool // a write would have passed max
}

func (w *boundedWriter) Write(p []byte) (int, error) {
	if w.b.Len()+len(p) > w.max {
		w.over = true
		return 0, fmt.Errorf("more than %d bytes of output", w.max)
	}
	return w.b.Write(p)
}

// A tailBuffer keeps the last 2 KiB written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 2048 {
		t.b = t.b[len(t.b)-2048:]
	}
	return len(p), nil
}

// String returns what was kept, made printable: it may be a hostile
// server's words.
func (t *tailBuffer) String() string {
	return effectproof.Printable(strings.TrimSpace(string(bytes.ToValidUTF8(t.b, nil))), 2048)
}

// leaveOut removes what the list names from s, and reports which entries
// matched anything.
func leaveOut(s state, list []LeaveOut, used []bool) {
	for i, l := range list {
		for key, rec := range s {
			if !globMatch(l.Record, key) {
				continue
			}
			if l.Field == "" {
				delete(s, key)
				used[i] = true
				continue
			}
			if _, ok := rec[l.Field]; ok {
				delete(rec, l.Field)
				used[i] = true
			}
		}
	}
}

// flag adds to each record of s that a flag of list matches the field
// that shows its state, true when its field is set, and reports which
// entries matched anything. A flag whose name the record already has is
// an error: the flag would hide a field of the data.
func flag(s state, list []Flag, used []bool) error {
	for i, fl := range list {
		for key, rec := range s {
			if !globMatch(fl.Record, key) {
				continue
			}
			if _, taken := rec[fl.Flag]; taken {
				return fmt.Errorf("state.flags[%d]: record %q already has a field %q: name the flag otherwise", i, key, fl.Flag)
			}
			text, err := effectproof.CanonicalJSON(rec[fl.Field])
			if err != nil {
				return fmt.Errorf("record %q, field %q: %v", key, fl.Field, err)
			}
			rec[fl.Flag] = text != ""
			used[i] = true
		}
	}
	return nil
}

// globMatch reports whether name matches pattern, in which * matches any
// run of characters, slashes included, and every other character itself.
// It takes time in proportion to the lengths of both, never more: the
// names are the server's, and a pattern of several stars tried against a
// long name by backtracking would take time without bound.
func globMatch(pattern, name string) bool {
	p, n := 0, 0
	star, from := -1, 0 // the last star met, and where in name it began to match
	for n < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, from = p, n
			p++
		case p < len(pattern) && pattern[p] == name[n]:
			p++
			n++
		case star >= 0:
			// The last star takes one more character; what follows it
			// is tried again from there.
			from++
			p, n = star+1, from
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// ReadDir returns the state of the directory tree at root as the dir
// state source reads it, records by key each its fields by name: for a
// Go test that holds mcpeffecttest.Verify to the same state as verify.
func ReadDir(root string) (map[string]map[string]any, error) {
	return dirState(context.Background(), root, newBudget())
}

// printable makes a command's name printable for a message.
func printable(s string) string { return effectproof.Printable(s, 200) }
