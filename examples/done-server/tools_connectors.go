package main

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/mcpeffect/mcpeffect"
	"github.com/mcpeffect/mcpeffect/examples/done-server/connector"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/refusal"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

// search_context, read_context and save_context call connectors, and so
// reach outside Done's database: they are the open-world tools. The others
// of the group keep to the database, handling refs without calling out.
func (d *done) addConnectorTools(t toolbox) {
	addTool(t, "list_connectors", "List connectors",
		"The connected sources of documents (a local folder by default; Drive, Slack or Notion once plugged in), and how their last call went. It calls none of them.",
		mcpeffect.Read, d.listConnectors)
	addTool(t, "search_context", "Search documents",
		"Search the connected sources for documents and messages whose title or text holds the query, ignoring case; each result has the ref that read_context and attach_context_to_task take. A search reads a bounded amount of each source, newest first; incomplete says what it left out.",
		mcpeffect.Read|mcpeffect.OpenWorld, d.searchContext)
	addTool(t, "read_context", "Read document",
		"Read one document of a connected source, by its ref (from search_context or list_task_context).",
		mcpeffect.Read|mcpeffect.OpenWorld, d.readContext)
	addTool(t, "list_task_context", "List task documents",
		"The references to documents attached to a task, as stored in Done; the documents are not fetched."+paged,
		mcpeffect.Read, d.listTaskContext)

	addTool(t, "save_context", "Save document",
		"Write a new note or document into a connected source (a Markdown file of the local folder by default). Each call makes a new one; nothing is overwritten. The local folder has a quota of documents and bytes.",
		mcpeffect.Write|mcpeffect.OpenWorld, d.saveContext)
	addTool(t, "attach_context_to_task", "Attach document to task",
		"Store a reference to a document (a ref from search_context) on a task; no-op if it is there. The document is not fetched. A task holds 100 references at most.",
		mcpeffect.Idempotent, d.attachContext)
	addTool(t, "detach_context_from_task", "Detach document from task",
		"Remove a reference from a task; the document itself is untouched. No-op if the reference is not there.",
		mcpeffect.Destructive|mcpeffect.Idempotent, d.detachContext)
}

// A source is a connector as the server holds it, with how its last call
// went, which list_connectors reports without calling it.
type source struct {
	connector.Connector

	mu       sync.Mutex
	lastCall time.Time
	failed   bool
}

// note records the outcome of a call to s: err is nil, an error for the
// caller, or a fault of the source. A fault's text stays in the log, where
// the tool that met it put it: it may hold what no caller should see, a
// path of the server's disk or a URL with a credential.
func (s *source) note(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastCall = time.Now()
	s.failed = err != nil && refusal.CodeOf(err) == 0
}

// source returns the source called name, or an error for the caller.
func (d *done) source(name string) (*source, error) {
	for _, s := range d.sources {
		if s.Info().Name == name {
			return s, nil
		}
	}
	var names []string
	for _, s := range d.sources {
		names = append(names, s.Info().Name)
	}
	return nil, refusal.New(refusal.Invalid, "no connector is called %q: list_connectors lists them (%s)", name, strings.Join(names, ", "))
}

// parseRef returns the source and the document id that ref names.
func (d *done) parseRef(ref string) (*source, string, error) {
	name, id, ok := strings.Cut(ref, ":")
	if !ok {
		return nil, "", refusal.New(refusal.Invalid, "ref %q is not a reference: want connector:id, such as local:notes/plan.md, as search_context gives", ref)
	}
	s, err := d.source(name)
	return s, id, err
}

type connectorStatus struct {
	connector.Info
	// Status is unused (not called since the server started), ok, or
	// failing (its last call failed; LastError says where the details
	// are).
	Status     string `json:"status"`
	LastCallAt string `json:"last_call_at,omitempty"`
	LastError  string `json:"last_error,omitempty"`
}

type connectorsResult struct {
	Connectors []connectorStatus `json:"connectors"`
}

func (d *done) listConnectors(ctx context.Context, _ noArgs) (connectorsResult, error) {
	res := connectorsResult{Connectors: []connectorStatus{}}
	for _, s := range d.sources {
		st := connectorStatus{Info: s.Info(), Status: "unused"}
		s.mu.Lock()
		if !s.lastCall.IsZero() {
			st.Status, st.LastCallAt = "ok", s.lastCall.UTC().Format(time.RFC3339)
			if s.failed {
				st.Status, st.LastError = "failing", "the last call failed; the server log has the details"
			}
		}
		s.mu.Unlock()
		res.Connectors = append(res.Connectors, st)
	}
	return res, nil
}

// A contextDocument is a document of a source, named by its ref.
type contextDocument struct {
	Ref       string `json:"ref"`
	Connector string `json:"connector"`
	connector.Document
}

func document(s *source, doc connector.Document) contextDocument {
	name := s.Info().Name
	return contextDocument{Ref: name + ":" + doc.ID, Connector: name, Document: doc}
}

type searchContextArgs struct {
	Query     string `json:"query" jsonschema:"the text to look for, ignoring case"`
	Connector string `json:"connector,omitempty" jsonschema:"search only this source (list_connectors names them); by default all"`
	Limit     int    `json:"limit,omitempty" jsonschema:"the most results per source (1 to 50; default 10)"`
}

type searchContextResult struct {
	Results []contextDocument `json:"results"`
	// Failed names the sources that could not be searched.
	Failed []string `json:"failed,omitempty"`
	// Incomplete says, for each source whose search did not cover it
	// whole, what was left out: "name: why".
	Incomplete []string `json:"incomplete,omitempty"`
}

func (d *done) searchContext(ctx context.Context, in searchContextArgs) (searchContextResult, error) {
	res := searchContextResult{Results: []contextDocument{}}
	switch {
	case in.Limit == 0:
		in.Limit = 10
	case in.Limit < 0 || in.Limit > 50:
		return res, refusal.New(refusal.Invalid, "limit %d is out of range: want 1 to 50", in.Limit)
	}
	sources := d.sources
	if in.Connector != "" {
		s, err := d.source(in.Connector)
		if err != nil {
			return res, err
		}
		sources = []*source{s}
	}
	for _, s := range sources {
		found, err := s.Search(ctx, in.Query, in.Limit)
		s.note(err)
		switch {
		case refusal.CodeOf(err) != 0:
			return res, err
		case err != nil:
			// One source down does not hide what the others found.
			d.logger.ErrorContext(ctx, "searching a connector", "connector", s.Info().Name, "err", err)
			res.Failed = append(res.Failed, s.Info().Name)
			continue
		}
		for _, doc := range found.Documents {
			res.Results = append(res.Results, document(s, doc))
		}
		if found.Incomplete != "" {
			res.Incomplete = append(res.Incomplete, s.Info().Name+": "+found.Incomplete)
		}
	}
	if len(res.Failed) == len(sources) {
		return res, refusal.New(refusal.Unavailable, "no source could be searched (%s); the server log has the details", strings.Join(res.Failed, ", "))
	}
	return res, nil
}

type refArg struct {
	Ref string `json:"ref" jsonschema:"the reference of a document, such as local:notes/plan.md"`
}

func (d *done) readContext(ctx context.Context, in refArg) (contextDocument, error) {
	s, id, err := d.parseRef(in.Ref)
	if err != nil {
		return contextDocument{}, err
	}
	doc, err := s.Read(ctx, id)
	s.note(err)
	if err != nil {
		return contextDocument{}, err
	}
	return document(s, doc), nil
}

type taskContextResult struct {
	Refs       []store.ContextRef `json:"refs"`
	NextCursor string             `json:"next_cursor,omitempty"`
}

func (d *done) listTaskContext(ctx context.Context, in taskPageArgs) (taskContextResult, error) {
	l, err := d.store.TaskContext(ctx, in.TaskID, in.Page)
	return taskContextResult{l.Items, l.NextCursor}, err
}

type saveContextArgs struct {
	connector.Draft
	Connector string `json:"connector,omitempty" jsonschema:"the source to write into; by default the first (local)"`
}

func (d *done) saveContext(ctx context.Context, in saveContextArgs) (contextDocument, error) {
	if len(d.sources) == 0 {
		return contextDocument{}, refusal.New(refusal.Unavailable, "no connector is configured")
	}
	s := d.sources[0]
	if in.Connector != "" {
		var err error
		if s, err = d.source(in.Connector); err != nil {
			return contextDocument{}, err
		}
	}
	doc, err := s.Save(ctx, in.Draft)
	s.note(err)
	if err != nil {
		return contextDocument{}, err
	}
	res := document(s, doc)
	// The document is saved outside Done and cannot be rolled back with a
	// transaction: if recording it fails, say so rather than pretend that
	// nothing happened.
	if err := d.store.RecordContextSaved(ctx, caller(ctx), res.Ref, doc.Title); err != nil {
		d.logger.ErrorContext(ctx, "recording a saved document", "ref", res.Ref, "err", err)
		return res, refusal.New(refusal.Unavailable, "the document was saved as %s, but recording that in the activity log failed; the server log has the details", res.Ref)
	}
	return res, nil
}

type attachContextArgs struct {
	TaskID string `json:"task_id" jsonschema:"the id of the task"`
	Ref    string `json:"ref" jsonschema:"the reference of the document, from search_context"`
	Title  string `json:"title,omitempty" jsonschema:"the title of the document, to show without fetching it"`
}

func (d *done) attachContext(ctx context.Context, in attachContextArgs) (taskContextResult, error) {
	// Only the connector's name is checked: the document is not fetched,
	// so that this tool stays inside Done.
	if _, _, err := d.parseRef(in.Ref); err != nil {
		return taskContextResult{}, err
	}
	refs, err := d.store.AttachContext(ctx, caller(ctx), in.TaskID, in.Ref, in.Title)
	return taskContextResult{Refs: refs}, err
}

type taskRefArgs struct {
	TaskID string `json:"task_id" jsonschema:"the id of the task"`
	Ref    string `json:"ref" jsonschema:"the reference to remove, as list_task_context shows it"`
}

func (d *done) detachContext(ctx context.Context, in taskRefArgs) (taskContextResult, error) {
	refs, err := d.store.DetachContext(ctx, caller(ctx), in.TaskID, in.Ref)
	return taskContextResult{Refs: refs}, err
}
