package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mcpeffect/mcpeffect/examples/done-server/connector"
	"github.com/mcpeffect/mcpeffect/examples/done-server/store"
)

// A storeFlags is where a command finds its store: the SQLite database in
// -data, or, with -db (or DONE_DB), a PostgreSQL database that any number
// of processes share. Every command reads both the same way.
type storeFlags struct {
	dataDir *string
	db      *string
}

func addStoreFlags(fs *flag.FlagSet, getenv func(string) string) storeFlags {
	return storeFlags{
		dataDir: fs.String("data", defaultDataDir, "the data `directory`, created if missing (the SQLite database, unless -db)"),
		db: fs.String("db", getenv("DONE_DB"), "a PostgreSQL `URL` (postgres://done@127.0.0.1:5432/done?sslmode=disable) to keep the data in, "+
			"shared by every replica, instead of SQLite in -data (default: $DONE_DB)"),
	}
}

// open opens the store.
func (f storeFlags) open(ctx context.Context, opts *store.Options) (*store.Store, bool, error) {
	db := *f.db
	if db == "" {
		return store.Open(ctx, *f.dataDir, opts)
	}
	if !strings.HasPrefix(db, "postgres://") && !strings.HasPrefix(db, "postgresql://") {
		return nil, false, errors.New("-db must be a PostgreSQL URL, postgres://...; for SQLite, give the directory with -data")
	}
	return store.OpenPostgres(ctx, db, opts)
}

// where names the store for the messages that tell how to reach it
// again, as flags: -data DIR, or -db with the URL's variable.
func (f storeFlags) where() string {
	if *f.db != "" {
		return `-db "$DONE_DB"`
	}
	return "-data " + shellQuote(*f.dataDir)
}

// folder returns the folder connector of a server, the documents of
// -context: by default the folder "context" in the data directory. A
// folder is one machine's disk: replicas on a shared store that each read
// their own would attach references that the others cannot resolve, so on
// a shared store serve refuses to start with it unless -context names the
// folder (one every replica mounts, say). -context off serves none.
func (f storeFlags) folder(st *store.Store, dir string) ([]connector.Connector, error) {
	switch {
	case dir == "off":
		return nil, nil
	case dir == "" && st.Shared():
		return nil, fmt.Errorf(`serve: on a shared database (-db), the folder connector would read %s on this machine alone: `+
			`other replicas would not see its documents, and a reference attached here would not resolve there. `+
			`Pass -context DIR to serve a folder every replica mounts at the same place, or -context off to serve none`,
			filepath.Join(*f.dataDir, "context"))
	case dir == "":
		dir = filepath.Join(*f.dataDir, "context")
	}
	folder, err := connector.NewFolder("local", dir)
	if err != nil {
		return nil, err
	}
	return []connector.Connector{folder}, nil
}
