package pgtest

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

// TestNewDatabase connects to a new database as the ordinary role, and
// finds it owns the database and is no superuser.
func TestNewDatabase(t *testing.T) {
	if !Postgres() {
		t.Skip("runs on PostgreSQL only")
	}
	url := NewDatabase(t)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var user string
	var super bool
	if err := conn.QueryRow(t.Context(), `SELECT current_user, rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&user, &super); err != nil {
		t.Fatal(err)
	}
	if user != Role || super {
		t.Errorf("connected as %q, superuser %v; want %q, not superuser", user, super, Role)
	}
	if _, err := conn.Exec(t.Context(), `CREATE TABLE x (a int)`); err != nil {
		t.Errorf("the role cannot create a table in its database: %v", err)
	}
}
