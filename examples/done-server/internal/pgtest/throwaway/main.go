// Command throwaway starts a PostgreSQL to try Done's replicas on, as
// Done's tests start theirs (see package pgtest): on a temporary
// directory, on loopback only, trusting the connections from there, with
// an ordinary role done that owns a database done; run by root, as on a
// fresh Debian machine, PostgreSQL runs as nobody, since it refuses
// root. It prints the export of DONE_DB that every done-server command
// then uses, and runs until Ctrl-C (or SIGTERM), when it stops the
// server and removes its directory. The data is not kept: fsync is off.
//
// From examples/done-server, with Debian's postgresql installed
// (apt-get install -y postgresql; the cluster it sets up may stay down):
//
//	go run ./internal/pgtest/throwaway -port 5433
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpeffect/mcpeffect/examples/done-server/internal/pgtest"
)

func main() {
	port := flag.Int("port", 0, "the loopback `port` to listen on (default: a free one)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := pgtest.StartCluster(*port)
	if err != nil {
		fmt.Fprintln(os.Stderr, "throwaway:", err)
		os.Exit(2)
	}
	url, err := c.CreateDatabase(ctx, "done")
	if err != nil {
		c.Stop()
		fmt.Fprintln(os.Stderr, "throwaway:", err)
		os.Exit(2)
	}
	fmt.Printf("export DONE_DB='%s'\n", url)
	fmt.Fprintf(os.Stderr, "throwaway: PostgreSQL (pid %d) on 127.0.0.1:%d until Ctrl-C; nothing it holds is kept\n", c.PID(), c.Port())
	<-ctx.Done()
	c.Stop()
}
