package audit

import (
	"slices"
	"strings"
	"unicode"
)

// The words of tool names that say what a tool does. Every word of a name
// is read, wherever it stands: kubectl_delete and API-delete-a-block
// delete as surely as delete_task does.
//
// The first three lists hold only words that hardly ever mean anything
// else in a tool name, as each can make a finding on its own: fetch (which
// updates refs in git), post (a search sent by POST) or run (get_run_logs)
// would give warnings wrong more often than right. actionWords holds verbs
// that change something but are often nouns as well: they never make a
// finding, but a name that holds one is not taken for a read
// (mark_digest_read marks a digest read; it does not read one).
var (
	deleteVerbs = []string{"delete", "remove", "drop", "purge", "destroy", "erase", "wipe"}
	readVerbs   = []string{"get", "list", "search", "read", "find", "describe"}
	writeVerbs  = []string{"create", "update", "set", "write", "insert", "add", "edit", "modify", "rename", "move", "replace", "upload", "send"}
	actionWords = []string{
		"mark", "archive", "unarchive", "close", "reopen", "assign", "claim", "block", "unblock",
		"approve", "reject", "complete", "cancel", "retry", "start", "stop", "pause", "resume",
		"restore", "schedule", "reorder", "save", "publish", "reply", "comment", "merge", "push",
		"toggle", "enable", "disable", "reset", "trigger", "run", "execute", "apply", "import",
		"sync", "submit", "invite", "share", "copy", "clone", "attach", "detach", "revoke",
		"rotate", "request", "post", "put", "patch",
	}
)

// nameVerbs is what the words of a tool name say it does: the first word
// of each list, or "" if the name has none.
type nameVerbs struct {
	delete, read, write, action string
}

// readsOnly reports whether the name says the tool reads, and says
// nothing of changing anything.
func (v nameVerbs) readsOnly() bool {
	return v.read != "" && v.write == "" && v.delete == "" && v.action == ""
}

func verbsOf(name string) nameVerbs {
	var v nameVerbs
	for _, w := range words(name) {
		for _, kind := range []struct {
			dst   *string
			words []string
		}{{&v.delete, deleteVerbs}, {&v.read, readVerbs}, {&v.write, writeVerbs}, {&v.action, actionWords}} {
			if *kind.dst == "" && slices.Contains(kind.words, w) {
				*kind.dst = w
			}
		}
	}
	return v
}

// words splits a tool name into its words, in lower case. Words are
// separated by any character that is neither a letter nor a digit (_ - .
// and the like), and by a change of case: a lower-case letter or a digit
// followed by an upper-case one (deleteRepo), or an upper-case letter
// followed by one that starts a word (APIDelete: API, Delete).
func words(name string) []string {
	var (
		out   []string
		start = -1 // byte offset of the word being read, or -1
		prev  rune // the rune before, within the word
	)
	runes := []rune(name)
	offsets := make([]int, 0, len(runes)+1)
	for i := range name {
		offsets = append(offsets, i)
	}
	offsets = append(offsets, len(name))
	flush := func(end int) {
		if start >= 0 {
			out = append(out, strings.ToLower(name[start:end]))
		}
		start = -1
	}
	for i, r := range runes {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush(offsets[i])
			continue
		}
		if start >= 0 && unicode.IsUpper(r) {
			next := rune(0)
			if i+1 < len(runes) {
				next = runes[i+1]
			}
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || unicode.IsUpper(prev) && unicode.IsLower(next) {
				flush(offsets[i])
			}
		}
		if start < 0 {
			start = offsets[i]
		}
		prev = r
	}
	flush(len(name))
	return out
}
