package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A goBuild is one `go build` of a main package for the tests, whose
// binary cachedBuild keeps in a directory across test processes: a cold
// run of the tests (a new test binary, with -race or without) reuses the
// binary that an earlier run built, as long as nothing that goes into it
// changed.
type goBuild struct {
	dir   string   // the main package's directory, where go runs
	name  string   // the binary's name: the prefix of its cached files
	flags []string // build flags
	env   []string // environment added to the test's, such as GOWORK=off
	cache string   // the directory of the cached binaries
}

// The cached binary of a build is cache/NAME-KEY-SUM, where KEY is the
// hash of the build's inputs and SUM the hash of the binary itself. A
// binary is written under a temporary name and renamed into place, so
// that a file of that name is always whole; and it is used only if its
// contents still hash to SUM, so that a file damaged since, or put there
// by anything else, is removed and built again. Two test binaries that
// build at once each build and rename; both files are whole and the
// same, so either may win.
const (
	keyLen     = 32 // hex digits of KEY and of SUM
	cacheTTL   = 7 * 24 * time.Hour
	tempPrefix = ".build-"
)

// run runs go with args in b.dir, in b's environment, and returns its
// standard output.
func (b goBuild) run(args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), b.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return out, nil
}

// key returns the hash of everything that goes into the binary: the Go
// toolchain and its environment, the build flags, the workspace and
// module files, and every package the main package depends on, each
// module of the module cache by its version (its contents cannot change
// under that version), every other by the contents of its files.
func (b goBuild) key() (string, error) {
	h := sha256.New()
	fmt.Fprintf(h, "mcpeffect test build 1\nflags %q\nenv %q\n", b.flags, b.env)
	// GOWORK first: go env prints one line a variable, empty or not.
	goEnv, err := b.run("env", "GOWORK", "GOVERSION", "GOROOT", "GOOS", "GOARCH", "GOAMD64", "GOARM64", "CGO_ENABLED", "CC", "GOFLAGS", "GOEXPERIMENT")
	if err != nil {
		return "", err
	}
	h.Write(goEnv)
	if work, _, _ := strings.Cut(string(goEnv), "\n"); work != "" && work != "off" {
		hashFiles(h, work, work+".sum")
	}
	out, err := b.run("list", "-deps", "-json=ImportPath,Standard,Module,Dir,GoFiles,CgoFiles,CFiles,CXXFiles,HFiles,SFiles,SysoFiles,EmbedFiles", ".")
	if err != nil {
		return "", err
	}
	modFiles := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			ImportPath string
			Standard   bool
			Dir        string
			Module     *struct {
				Path, Version, GoMod string
				Replace              *struct{ Path, Version string }
			}
			GoFiles, CgoFiles, CFiles, CXXFiles, HFiles, SFiles, SysoFiles, EmbedFiles []string
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return "", fmt.Errorf("go list: %w", err)
		}
		fmt.Fprintf(h, "package %s\n", p.ImportPath)
		switch m := p.Module; {
		case p.Standard:
			// GOROOT and GOVERSION name it.
		case m != nil && m.Replace != nil && m.Replace.Version != "":
			fmt.Fprintf(h, "module %s@%s\n", m.Replace.Path, m.Replace.Version)
		case m != nil && m.Replace == nil && m.Version != "":
			fmt.Fprintf(h, "module %s@%s\n", m.Path, m.Version)
		default:
			// A module of the workspace, or replaced by a directory: its
			// files are the source.
			if m != nil && m.GoMod != "" && !modFiles[m.GoMod] {
				modFiles[m.GoMod] = true
				hashFiles(h, m.GoMod, strings.TrimSuffix(m.GoMod, ".mod")+".sum")
			}
			for _, group := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.CXXFiles, p.HFiles, p.SFiles, p.SysoFiles, p.EmbedFiles} {
				for _, f := range group {
					fmt.Fprintf(h, "file %s\n", f)
					hashFiles(h, filepath.Join(p.Dir, f))
				}
			}
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:keyLen], nil
}

// hashFiles writes the length and contents of each file to h; a file that
// cannot be read is written as missing.
func hashFiles(h io.Writer, paths ...string) {
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(h, "missing %s\n", filepath.Base(path))
			continue
		}
		fmt.Fprintf(h, "%s %d\n", filepath.Base(path), len(b))
		h.Write(b)
	}
}

// sumOf returns the SUM of the file at path, or "" if it is not a
// regular, executable file that can be read.
func sumOf(path string) string {
	info, err := os.Lstat(path)
	if err != nil || !info.Mode().IsRegular() || info.Mode().Perm()&0o100 == 0 {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))[:keyLen]
}

// cachedBuild returns the path of b's binary, built by an earlier run if
// its inputs are unchanged (built false), else built now and kept for the
// next run (built true). A build that fails is a *buildError; any other
// error (the cache cannot be written, say) means the cache cannot be used.
func cachedBuild(b goBuild) (path string, built bool, err error) {
	key, err := b.key()
	if err != nil {
		return "", false, err
	}
	if err := os.MkdirAll(b.cache, 0o755); err != nil {
		return "", false, err
	}
	prefix := b.name + "-" + key + "-"
	entries, err := os.ReadDir(b.cache)
	if err != nil {
		return "", false, err
	}
	now := time.Now()
	for _, e := range entries {
		p := filepath.Join(b.cache, e.Name())
		sum, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		if sum != "" && sumOf(p) == sum {
			// Touched, so that pruning keeps what is in use.
			os.Chtimes(p, now, now)
			return p, false, nil
		}
		// Damaged, cut short, or not a file: never used.
		os.RemoveAll(p)
	}

	tmp, err := os.CreateTemp(b.cache, tempPrefix+b.name+"-*")
	if err != nil {
		return "", false, err
	}
	tmp.Close()
	defer os.Remove(tmp.Name()) // once renamed, there is nothing left to remove
	cmd := exec.Command("go", append(append([]string{"build", "-o", tmp.Name()}, b.flags...), ".")...)
	cmd.Dir = b.dir
	cmd.Env = append(os.Environ(), b.env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", false, &buildError{err, out}
	}
	if err := os.Chmod(tmp.Name(), 0o755); err != nil {
		return "", false, err
	}
	sum := sumOf(tmp.Name())
	if sum == "" {
		return "", false, errors.New("the binary just built cannot be read")
	}
	path = filepath.Join(b.cache, prefix+sum)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", false, err
	}
	prune(b.cache, b.name, now)
	return path, true, nil
}

// prune removes the binaries of name that no run used for cacheTTL, and
// the temporary files of builds that stopped a day ago or more.
func prune(cache, name string, now time.Time) {
	entries, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	for _, e := range entries {
		n := e.Name()
		ttl := cacheTTL
		switch {
		case strings.HasPrefix(n, tempPrefix+name+"-"):
			ttl = 24 * time.Hour
		case !strings.HasPrefix(n, name+"-"):
			continue
		}
		if info, err := e.Info(); err == nil && now.Sub(info.ModTime()) > ttl {
			os.RemoveAll(filepath.Join(cache, n))
		}
	}
}

// TestCachedBuild holds cachedBuild to its promise on a small module of
// its own: a second run reuses the binary; a change to a source file, to
// an embedded file, to a dependency within the module, to go.mod or to the
// flags builds again; a cached file that is damaged or not a file is never
// used; two builds at once both get a whole binary; a failed build leaves
// nothing; binaries unused for long are pruned.
func TestCachedBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	mod := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/hello\n\ngo 1.25\n")
	write("main.go", "package main\n\nimport (\n\t_ \"embed\"\n\t\"fmt\"\n\n\t\"example.com/hello/greet\"\n)\n\n//go:embed name.txt\nvar name string\n\nfunc main() { fmt.Print(greet.Word, \" \", name) }\n")
	write("greet/greet.go", "package greet\n\nconst Word = \"hello\"\n")
	write("name.txt", "ada")
	b := goBuild{dir: mod, name: "hello", cache: t.TempDir(), env: []string{"GOWORK=off", "GOFLAGS=-mod=mod"}}

	// step builds b and checks whether it was built and what it prints.
	step := func(what string, b goBuild, wantBuilt bool, wantOut string) string {
		t.Helper()
		path, built, err := cachedBuild(b)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if built != wantBuilt {
			t.Errorf("%s: built %t, want %t", what, built, wantBuilt)
		}
		out, err := exec.Command(path).Output()
		if err != nil || string(out) != wantOut {
			t.Errorf("%s: the binary printed %q (%v), want %q", what, out, err, wantOut)
		}
		return path
	}
	first := step("first run", b, true, "hello ada")
	if again := step("second run", b, false, "hello ada"); again != first {
		t.Errorf("second run: %s, want the first run's %s", again, first)
	}
	write("name.txt", "grace")
	step("an embedded file changed", b, true, "hello grace")
	step("then unchanged", b, false, "hello grace")
	write("greet/greet.go", "package greet\n\nconst Word = \"hi\"\n")
	step("a package it imports changed", b, true, "hi grace")
	write("go.mod", "module example.com/hello\n\ngo 1.25.0\n")
	step("go.mod changed", b, true, "hi grace")
	trimmed := b
	trimmed.flags = []string{"-trimpath"}
	step("other flags", trimmed, true, "hi grace")
	current := step("the plain build again", b, false, "hi grace")

	// Damaged in place: the same name, other contents.
	if err := os.WriteFile(current, []byte("#!/bin/sh\necho forged\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	current = step("a damaged binary", b, true, "hi grace")
	if err := os.Truncate(current, 100); err != nil {
		t.Fatal(err)
	}
	current = step("a binary cut short", b, true, "hi grace")
	if err := os.Remove(current); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(current, 0o755); err != nil {
		t.Fatal(err)
	}
	step("a directory in its place", b, true, "hi grace")

	// Two test binaries that build at once.
	write("name.txt", "both")
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			path, _, err := cachedBuild(b)
			if err == nil {
				var out []byte
				if out, err = exec.Command(path).Output(); err == nil && string(out) != "hi both" {
					err = fmt.Errorf("printed %q", out)
				}
			}
			errs <- err
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("two builds at once: %v", err)
		}
	}
	step("after two at once", b, false, "hi both")

	// A build that fails is a buildError, and leaves nothing behind.
	before, _ := os.ReadDir(b.cache)
	write("greet/greet.go", "package greet\n\nconst Word = \n")
	var berr *buildError
	if _, _, err := cachedBuild(b); !errors.As(err, &berr) {
		t.Errorf("a build that fails: %v, want a buildError", err)
	}
	if after, _ := os.ReadDir(b.cache); len(after) != len(before) {
		t.Errorf("a build that failed left %d files, want the %d there before", len(after), len(before))
	}

	// Pruning: a binary of the same name unused for longer than the TTL
	// goes at the next build; a recent one, and another name's, stay.
	write("greet/greet.go", "package greet\n\nconst Word = \"bye\"\n")
	old := filepath.Join(b.cache, "hello-"+strings.Repeat("0", keyLen)+"-"+strings.Repeat("1", keyLen))
	other := filepath.Join(b.cache, "other-"+strings.Repeat("0", keyLen)+"-"+strings.Repeat("1", keyLen))
	for _, p := range []string{old, other} {
		if err := os.WriteFile(p, []byte("old"), 0o755); err != nil {
			t.Fatal(err)
		}
		long := time.Now().Add(-cacheTTL - time.Hour)
		os.Chtimes(p, long, long)
	}
	step("after a change, with old binaries about", b, true, "bye both")
	if _, err := os.Stat(old); !os.IsNotExist(err) {
		t.Errorf("a binary unused for longer than %v is still there (%v)", cacheTTL, err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("another name's binary was pruned: %v", err)
	}
}
