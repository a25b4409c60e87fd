package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// This file is what the tools of a server made by NewServerIn do to its
// directory. Each is a no-op without one.

// seed makes the directory and its notes, if they are not there.
func (s *Server) seed() error {
	if err := os.MkdirAll(filepath.Join(s.dir, "notes"), 0o755); err != nil {
		return err
	}
	for _, id := range []string{"readme", "payroll"} {
		f, err := os.OpenFile(filepath.Join(s.dir, "notes", id), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		_, err = f.WriteString(id + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// name returns name if it is one element of a path, safe to join.
func name(what, name string) (string, error) {
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name || len(name) > 100 {
		return "", fmt.Errorf("%s %q: want a plain name", what, name)
	}
	return name, nil
}

// pods does a call of the pods tool.
func (s *Server) pods(in PodArgs) error {
	if s.dir == "" {
		return nil
	}
	dir := filepath.Join(s.dir, "pods")
	switch in.Action {
	case "list":
		_, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	case "get", "delete":
		n, err := name("pod", in.Name)
		if err != nil {
			return err
		}
		if in.Action == "get" {
			_, err = os.ReadFile(filepath.Join(dir, n))
			return err
		}
		// Idempotent: a pod already gone is deleted.
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	case "create":
		n, err := name("pod", in.Name)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		// A new pod each call, as a generated name makes one.
		for i := 1; i <= 1000; i++ {
			f, err := os.OpenFile(filepath.Join(dir, n+"-"+strconv.Itoa(i)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if errors.Is(err, fs.ErrExist) {
				continue
			}
			if err != nil {
				return err
			}
			_, err = f.WriteString(n + "\n")
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return err
		}
		return fmt.Errorf("pod %q: too many of that name", n)
	}
	return fmt.Errorf("unknown action %q: want get, list, create or delete", in.Action)
}

// updateIssue does a call of update_issue: a comment added, or the
// issue's state set.
func (s *Server) updateIssue(in IssueArgs) error {
	if s.dir == "" {
		return nil
	}
	if in.Issue <= 0 {
		return fmt.Errorf("issue %d: want a positive number", in.Issue)
	}
	dir := filepath.Join(s.dir, "issues", strconv.Itoa(in.Issue))
	if in.State != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, "state"), []byte(in.State+"\n"), 0o644)
	}
	if in.Comment == "" {
		return errors.New("give a comment or a state")
	}
	comments := filepath.Join(dir, "comments")
	if err := os.MkdirAll(comments, 0o755); err != nil {
		return err
	}
	for i := 1; i <= 1000; i++ {
		f, err := os.OpenFile(filepath.Join(comments, strconv.Itoa(i)), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return err
		}
		_, err = f.WriteString(in.Comment + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	return fmt.Errorf("issue %d: too many comments", in.Issue)
}

// deleteNote does a call of delete_note.
func (s *Server) deleteNote(id string) error {
	if s.dir == "" {
		return nil
	}
	n, err := name("note", id)
	if err != nil {
		return err
	}
	if err := os.Remove(filepath.Join(s.dir, "notes", n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
