package store

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/mcpeffect/mcpeffect"

	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
)

// TestEveryQueryPreparesOnPostgres prepares, on PostgreSQL, every query
// of the store whose whole text is in its source: a literal, or a sum of
// literals and the package's string constants. PostgreSQL prepares each
// text once per connection (pgx's statement cache; see OpenPostgres), and
// types each parameter by its place in the query, not by its Go value:
// a parameter it cannot type fails here, with the text's line, rather
// than in the one call that would run it. The texts built at run time
// (a table's name, a list of columns) are run by the other tests.
func TestEveryQueryPreparesOnPostgres(t *testing.T) {
	if !pgtest.Postgres() {
		t.Skip("a test of PostgreSQL's typing of parameters")
	}
	texts := storeQueries(t)
	if len(texts) < 100 {
		t.Fatalf("only %d queries found in the source: is it where the test looks?", len(texts))
	}
	s, _, err := openAt(t, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	conn, err := s.pg.pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, q := range texts {
		text, _ := pgQuery(q.text, nil)
		sd, err := conn.Conn().Prepare(t.Context(), "", text)
		if err != nil {
			t.Errorf("%s: %v\n%s", q.pos, err, text)
			continue
		}
		// pgQuery sends every Go bool as 0 or 1, as SQLite stores it.
		for i, oid := range sd.ParamOIDs {
			if oid == pgtype.BoolOID {
				t.Errorf("%s: PostgreSQL types $%d boolean, but the store sends a flag as an integer (write ? <> 0)\n%s", q.pos, i+1, text)
			}
		}
	}
	t.Logf("%d queries prepared", len(texts))
}

// A sourceQuery is the text of one query of the store, and where it is.
type sourceQuery struct {
	pos  token.Position
	text string
}

// storeQueries returns the queries of the store's source (its files but
// the tests) whose whole text is known without running it.
func storeQueries(t *testing.T) []sourceQuery {
	fset, parsed := storeSource(t)
	consts := map[string]string{}
	// The package's string constants, some made of others: evaluated
	// until no more can be.
	for changed := true; changed; {
		changed = false
		for _, f := range parsed {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.CONST {
					continue
				}
				for _, spec := range g.Specs {
					v := spec.(*ast.ValueSpec)
					for i, name := range v.Names {
						if _, done := consts[name.Name]; done || i >= len(v.Values) {
							continue
						}
						if s, ok := stringValue(v.Values[i], consts); ok {
							consts[name.Name] = s
							changed = true
						}
					}
				}
			}
		}
	}
	var out []sourceQuery
	inspect := queryFinder(fset, consts, &out)
	for _, f := range parsed {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GenDecl:
				// The constants are pieces of queries, looked at where
				// they are used.
				return n.Tok != token.CONST
			case *ast.CallExpr:
				// t.pick(sqlite, postgres): only the second runs here.
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "pick" && len(n.Args) == 2 {
					ast.Inspect(n.Args[1], func(n ast.Node) bool { return inspect(n) })
					return false
				}
			}
			return inspect(n)
		})
	}
	return out
}

// queryFinder returns a function for ast.Inspect that adds to *out each
// complete query text it meets.
func queryFinder(fset *token.FileSet, consts map[string]string, out *[]sourceQuery) func(ast.Node) bool {
	statement := regexp.MustCompile(`(?is)^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\s`)
	return func(n ast.Node) bool {
		e, ok := n.(ast.Expr)
		if !ok {
			return true
		}
		switch e := e.(type) {
		case *ast.BasicLit, *ast.BinaryExpr:
			if b, ok := e.(*ast.BinaryExpr); ok && b.Op != token.ADD {
				return true
			}
			// The largest sum: its parts are not looked at alone,
			// since each is only a piece of the text.
			// A text with a verb of fmt (UPDATE %s ...) is completed
			// at run time.
			if s, ok := stringValue(e, consts); ok && statement.MatchString(s) && !strings.Contains(s, "%s") {
				*out = append(*out, sourceQuery{fset.Position(e.Pos()), s})
			}
			return false
		}
		return true
	}
}

// storeSource parses the store's source files, but its tests.
func storeSource(t *testing.T) (*token.FileSet, []*ast.File) {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var parsed []*ast.File
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		parsed = append(parsed, f)
	}
	return fset, parsed
}

// stringValue returns the value of e, a string literal, a constant of
// consts, or a sum of those, or false.
func stringValue(e ast.Expr, consts map[string]string) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.Ident:
		s, ok := consts[e.Name]
		return s, ok
	case *ast.ParenExpr:
		return stringValue(e.X, consts)
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok1 := stringValue(e.X, consts)
		y, ok2 := stringValue(e.Y, consts)
		return x + y, ok1 && ok2
	}
	return "", false
}

// TestExecModeFromURL opens the store with the mode of a pooler that
// keeps no prepared statements, default_query_exec_mode=exec in the URL,
// which sends each query unprepared: the store works as well.
func TestExecModeFromURL(t *testing.T) {
	if !pgtest.Postgres() {
		t.Skip("a test of PostgreSQL's modes")
	}
	url := pgtest.NewDatabase(t)
	sep := "?"
	if strings.Contains(url, "?") {
		sep = "&"
	}
	s, _, err := OpenPostgres(t.Context(), url+sep+"default_query_exec_mode=exec", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k, _, err := s.MintToken(t.Context(), NewToken{Name: "alice", Kind: Human, Scope: mcpeffect.Full})
	if err != nil {
		t.Fatal(err)
	}
	by := k.Actor()
	p, err := s.CreateProject(t.Context(), by, NewProject{Name: "Garden"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.ArchiveProject(t.Context(), by, p.ID); err != nil {
		t.Fatal(err)
	}
	for _, archived := range []bool{false, true} {
		l, err := s.ListProjects(t.Context(), archived, Page{})
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 0, true: 1}[archived]; len(l.Items) != want {
			t.Errorf("ListProjects(include archived %v) = %d projects, want %d", archived, len(l.Items), want)
		}
	}
}
