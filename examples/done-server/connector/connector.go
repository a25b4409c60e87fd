// Package connector defines how Done reaches documents outside its own
// database (a Drive, a Slack workspace, a Notion), and implements the
// default: a folder of Markdown and text files on the local disk.
//
// A [Connector] searches, reads and saves documents. Done calls one only
// from its open-world tools (search_context, read_context, save_context);
// its other tools keep to Done's database, and refer to documents by their
// refs alone. To plug in another source, implement Connector and add it to
// the server next to the [Folder].
package connector

import (
	"context"
	"time"

	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/refusal"
)

// A Connector reaches one source of documents. Implementations must be
// safe for concurrent use.
//
// Errors meant for the caller, such as an id that names nothing, are an
// [*Error]; any other error is a fault of the source, which Done logs
// without showing it.
type Connector interface {
	// Info describes the connector. It must not call out: Done calls it
	// from list_connectors, which stays inside.
	Info() Info
	// Search returns at most limit documents whose title or text holds
	// query, ignoring case, each with a snippet and without its text. A
	// search must be bounded in what it costs, whatever the size of the
	// source: one that does not cover the whole source says so in the
	// result's Incomplete.
	Search(ctx context.Context, query string, limit int) (SearchResult, error)
	// Read returns the document whose id is id, with its text.
	Read(ctx context.Context, id string) (Document, error)
	// Save makes a new document from d and returns it, without its text.
	// It never changes a document that exists.
	Save(ctx context.Context, d Draft) (Document, error)
}

// Info describes a connector.
type Info struct {
	// Name is how refs name the connector: a ref is Name:ID, such as
	// local:notes/plan.md.
	Name string `json:"name"`
	// Kind is what the connector reaches, such as folder, drive or slack.
	Kind        string `json:"kind"`
	Description string `json:"description"`
	// Location says where its documents are, such as a folder or a
	// workspace, in words any caller may see: a name, never a path on
	// the server's disk.
	Location string `json:"location,omitempty"`
}

// A SearchResult is what [Connector.Search] found.
type SearchResult struct {
	Documents []Document
	// Incomplete, if not empty, says in words for the caller what the
	// search left out of the source, and why, such as the older
	// documents of a folder larger than one search reads.
	Incomplete string
}

// A Document is a document of a source.
type Document struct {
	// ID names the document within its connector.
	ID    string `json:"id"`
	Title string `json:"title"`
	// Snippet is the part of the text around what Search found.
	Snippet string `json:"snippet,omitempty"`
	// Text is the document's text, as Read returns it; Truncated reports
	// that it was cut.
	Text      string    `json:"text,omitempty"`
	Truncated bool      `json:"truncated,omitempty"`
	Size      int64     `json:"size"`
	Modified  time.Time `json:"modified"`
}

// A Draft is a document to save, as save_context takes it.
type Draft struct {
	Title string `json:"title" jsonschema:"the title of the new document, one line"`
	Text  string `json:"text" jsonschema:"its text, Markdown for the local folder"`
	// Folder is where to put the document within the source, if it has
	// folders; empty for its top.
	Folder string `json:"folder,omitempty" jsonschema:"where in the source, such as notes/2025; by default its top"`
}

// An Error is a request that a connector refuses (see [refusal.Error]):
// the one error type of Done's refusals, whose message goes to the
// caller. A connector makes one with a [Code] of its own.
type Error = refusal.Error

// A Code classifies an [Error].
type Code = refusal.Code

// The codes a connector refuses with.
const (
	// Invalid is an argument that is malformed, or that names something
	// the connector must not reach.
	Invalid = refusal.Invalid
	// NotFound is an id that names no document.
	NotFound = refusal.NotFound
)

func invalidf(format string, args ...any) error {
	return refusal.New(Invalid, format, args...)
}

func notFoundf(format string, args ...any) error {
	return refusal.New(NotFound, format, args...)
}
