// Package pgtest starts a real PostgreSQL for the tests of Done: one
// cluster per test binary, on a temporary directory and a free loopback
// port, removed when the binary exits; each test gets a database of its
// own, copied from a template (CREATE DATABASE ... TEMPLATE), owned by an
// ordinary role without a password, as Done's README tells its users to
// run it.
//
// A package whose tests should run on both stores calls [Main] from its
// TestMain: the tests run once on SQLite, then the binary runs itself
// again with DONE_TEST_DB=postgres, and [Backend] tells each test which
// store it is on. Without PostgreSQL installed, the second run is skipped
// with a message saying so, unless MCPEFFECT_REQUIRE_POSTGRES=1 (as CI
// sets it), which makes it a failure.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/notrun"
)

// EnvBackend is the variable that selects the store the tests of a
// package run on: "postgres", or anything else for SQLite.
const EnvBackend = "DONE_TEST_DB"

// EnvRequire, set to 1, makes a missing PostgreSQL a failure instead of a
// skip.
const EnvRequire = "MCPEFFECT_REQUIRE_POSTGRES"

// NeedPostgres is what the tests on PostgreSQL need, for [notrun].
var NeedPostgres = notrun.Need{What: "PostgreSQL", Enable: "apt-get install -y postgresql", Require: EnvRequire}

// Role is the ordinary role that owns the test databases: no superuser,
// no password, as in postgres://done@127.0.0.1:PORT/done.
const Role = "done"

// Postgres reports whether the tests of this process run on PostgreSQL.
func Postgres() bool { return os.Getenv(EnvBackend) == "postgres" }

// Backend is the name of the store the tests of this process run on.
func Backend() string {
	if Postgres() {
		return "postgres"
	}
	return "sqlite"
}

// Main runs the tests of m, and exits with [Run]'s code.
func Main(m *testing.M) { os.Exit(Run(m)) }

// Run runs the tests of m, and returns the exit code. Run on SQLite
// (DONE_TEST_DB unset), it then runs the same binary, with the same
// flags, on PostgreSQL, and fails if either run failed. It stops the
// cluster, if a test started one, before it returns.
func Run(m *testing.M) int {
	if Postgres() {
		code := m.Run()
		stop()
		return code
	}
	code := m.Run()
	// A test of the run on SQLite may have started a cluster too (the
	// load test measures both stores in one run).
	stop()
	if code != 0 || os.Getenv(EnvBackend) != "" {
		return code
	}
	if _, err := binDir(); err != nil {
		if os.Getenv(EnvRequire) == "1" {
			fmt.Fprintf(os.Stderr, "pgtest: %v, and %s=1 (%s)\n", err, EnvRequire, NeedPostgres.Enable)
			return 1
		}
		where, _ := os.Getwd()
		notrun.Print(os.Stderr, notrun.Line(NeedPostgres, where, err.Error(), []string{"every test of the package, again on PostgreSQL"}))
		return 0
	}
	fmt.Fprintln(os.Stderr, "pgtest: the same tests again, on PostgreSQL")
	cmd := exec.Command(os.Args[0], childArgs(os.Args[1:])...)
	cmd.Env = append(os.Environ(), EnvBackend+"=postgres")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		fmt.Fprintf(os.Stderr, "pgtest: running the tests on PostgreSQL: %v\n", err)
		return 1
	}
	return 0
}

// childArgs are the flags of the run on PostgreSQL: those of this run,
// less the files that go test reads back from this one (its log for the
// test cache, profiles), which the second run would overwrite.
func childArgs(args []string) []string {
	var out []string
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "test.testlogfile", "test.coverprofile", "test.cpuprofile", "test.memprofile",
			"test.blockprofile", "test.mutexprofile", "test.trace", "test.gocoverdir":
			continue
		}
		out = append(out, a)
	}
	return out
}

// binDir returns the directory of PostgreSQL's programs.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { return version(b) - version(a) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("PostgreSQL's initdb is neither on PATH nor in /usr/lib/postgresql/*/bin")
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

// A Cluster is a running PostgreSQL server.
type Cluster struct {
	dir  string
	port int
	cmd  *exec.Cmd
	bin  string
	cred *syscall.Credential
	dbs  atomic.Int64
}

var (
	startOnce sync.Once
	started   *Cluster
	startErr  error
)

// Start returns the cluster of this test binary, starting it the first
// time. A test calls it through [NewDatabase]; the server goes on until
// [Main] stops it.
func Start(tb testing.TB) *Cluster {
	tb.Helper()
	startOnce.Do(func() { started, startErr = StartCluster(0) })
	if startErr != nil {
		if os.Getenv(EnvRequire) == "1" || Postgres() {
			tb.Fatalf("pgtest: %v", startErr)
		}
		tb.Skipf("pgtest: no PostgreSQL: %v", startErr)
	}
	return started
}

func stop() {
	if started != nil {
		started.Stop()
	}
}

// PID is the process id of the server (the postmaster, whose children
// are the backends), for a test that measures the CPU it uses.
func (c *Cluster) PID() int { return c.cmd.Process.Pid }

// Port is the loopback port the cluster listens on.
func (c *Cluster) Port() int { return c.port }

// Stop stops the server at once and removes its directory.
func (c *Cluster) Stop() {
	if c.cmd != nil && c.cmd.Process != nil {
		// SIGQUIT is PostgreSQL's immediate shutdown: nothing here needs
		// to survive.
		c.cmd.Process.Signal(syscall.SIGQUIT)
		done := make(chan struct{})
		go func() { c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			c.cmd.Process.Kill()
		}
	}
	os.RemoveAll(c.dir)
}

// Restart stops the server at once, with PostgreSQL's immediate shutdown
// (which ends every connection and leaves the data to crash recovery, as
// a crash would), and starts it again on the same directory and port,
// for tests of a database outage. down, if not nil, runs while the
// server is down.
func (c *Cluster) Restart(down func()) error {
	c.cmd.Process.Signal(syscall.SIGQUIT)
	c.cmd.Wait()
	if down != nil {
		down()
	}
	// The last backends may take a moment to go, and the new server
	// refuses to start beside them.
	var err error
	for range 20 {
		if err = c.run(); err == nil {
			return nil
		}
		time.Sleep(250 * time.Millisecond)
	}
	return err
}

// StartCluster starts a PostgreSQL server of its own, as the tests start
// theirs: on a new temporary directory, on loopback only, on port (a free
// one if 0), trusting every connection from there, with a role [Role]
// that may log in; run by root, its programs run as nobody, since
// initdb and postgres refuse root. It is for tests and for trying Done's
// replicas by hand (see throwaway), never for data to keep: fsync is off,
// and [Cluster.Stop] removes it all.
func StartCluster(port int) (*Cluster, error) {
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin}
	c.dir, err = os.MkdirTemp("", "done-pgtest-")
	if err != nil {
		return nil, err
	}
	// initdb and postgres refuse to run as root: they run as nobody, who
	// must own the directory.
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			os.RemoveAll(c.dir)
			return nil, fmt.Errorf("running as root, PostgreSQL needs an unprivileged user: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		c.cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(c.dir, uid, gid); err != nil {
			os.RemoveAll(c.dir)
			return nil, err
		}
	}
	data := filepath.Join(c.dir, "data")
	initdb := c.command(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "--auth=trust",
		"--encoding=UTF8", "--locale=C", "--no-sync")
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(c.dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	for range 5 {
		c.port = port
		if c.port == 0 {
			if c.port, err = freePort(); err != nil {
				break
			}
		}
		if err = c.run(); err == nil || port != 0 {
			break
		}
	}
	if err != nil {
		c.Stop()
		return nil, err
	}
	if err := c.admin(context.Background(), "CREATE ROLE "+Role+" LOGIN"); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = c.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: c.cred, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// run starts the server and waits until it accepts connections.
func (c *Cluster) run() error {
	// Without fsync a test's database costs far less to make, and a test
	// outlives no power cut. Commits stay synchronous: an outage test
	// stops the server as a crash would, and a commit acknowledged must
	// be in the WAL that recovery replays.
	c.cmd = c.command(filepath.Join(c.bin, "postgres"), "-D", filepath.Join(c.dir, "data"),
		"-p", strconv.Itoa(c.port), "-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		"-c", "fsync=off", "-c", "full_page_writes=off",
		"-c", "max_connections=400", "-c", "shared_buffers=32MB")
	logf, err := os.Create(filepath.Join(c.dir, "log"))
	if err != nil {
		return err
	}
	c.cmd.Stdout, c.cmd.Stderr = logf, logf
	if err := c.cmd.Start(); err != nil {
		logf.Close()
		return err
	}
	logf.Close()
	exited := make(chan struct{})
	go func() { c.cmd.Process.Wait(); close(exited) }()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(c.dir, "log"))
			return fmt.Errorf("postgres exited:\n%s", log)
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, c.url("postgres", "postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.cmd.Process.Kill()
	return errors.New("postgres did not accept connections within 30s")
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func (c *Cluster) url(role, db string) string {
	return fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable", role, c.addr(), db)
}

// addr is the host and port the cluster listens on.
func (c *Cluster) addr() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(c.port))
}

// CreateDatabase makes an empty database called name, owned by [Role],
// and returns its URL.
func (c *Cluster) CreateDatabase(ctx context.Context, name string) (string, error) {
	if err := c.admin(ctx, fmt.Sprintf("CREATE DATABASE %s OWNER %s", pgx.Identifier{name}.Sanitize(), Role)); err != nil {
		return "", err
	}
	return c.url(Role, name), nil
}

func (c *Cluster) admin(ctx context.Context, stmt string) error {
	conn, err := pgx.Connect(ctx, c.url("postgres", "postgres"))
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, stmt)
	return err
}

var templates sync.Map // name → *template

type template struct {
	once sync.Once
	err  error
}

// NewDatabase returns the URL of a new, empty database owned by [Role],
// dropped at the end of the test.
func NewDatabase(tb testing.TB) string {
	return FromTemplate(tb, "", nil)
}

// FromTemplate returns the URL of a new database owned by [Role], a copy
// of the template called name, which init made, once per test binary,
// from an empty database given by its URL (the store's migrations, say).
// The database is dropped at the end of the test. An empty name is an
// empty database.
func FromTemplate(tb testing.TB, name string, init func(url string) error) string {
	tb.Helper()
	c := Start(tb)
	ctx := context.Background()
	tmpl := "template0"
	if name != "" {
		tmpl = "tmpl_" + name
		v, _ := templates.LoadOrStore(name, &template{})
		t := v.(*template)
		t.once.Do(func() {
			if t.err = c.admin(ctx, fmt.Sprintf("CREATE DATABASE %s OWNER %s", tmpl, Role)); t.err != nil {
				return
			}
			t.err = init(c.url(Role, tmpl))
		})
		if t.err != nil {
			tb.Fatalf("pgtest: template %s: %v", name, t.err)
		}
	}
	return c.create(tb, tmpl, true)
}

// NewLastingDatabase is [NewDatabase] for a database that outlives the
// test, until the cluster stops: a fixture that later tests [Copy].
func NewLastingDatabase(tb testing.TB) string {
	tb.Helper()
	return Start(tb).create(tb, "template0", false)
}

// Copy returns the URL of a new database, a copy of the database at
// url, dropped at the end of the test. No one may be connected to the
// database at url: close what used it first.
func Copy(tb testing.TB, url string) string {
	tb.Helper()
	i := strings.LastIndexByte(url, '/')
	j := strings.IndexByte(url, '?')
	if i < 0 || j < i {
		tb.Fatalf("pgtest: %q is not a URL of this cluster", url)
	}
	return Start(tb).create(tb, url[i+1:j], true)
}

func (c *Cluster) create(tb testing.TB, tmpl string, drop bool) string {
	tb.Helper()
	ctx := context.Background()
	db := fmt.Sprintf("t%d", c.dbs.Add(1))
	// A template may be copied only while no one is connected to it:
	// init's connections may take a moment to close.
	var err error
	for range 100 {
		if err = c.admin(ctx, fmt.Sprintf("CREATE DATABASE %s OWNER %s TEMPLATE %s", db, Role, tmpl)); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	if drop {
		tb.Cleanup(func() {
			c.admin(context.Background(), fmt.Sprintf("DROP DATABASE IF EXISTS %s WITH (FORCE)", db))
		})
	}
	return c.url(Role, db)
}
