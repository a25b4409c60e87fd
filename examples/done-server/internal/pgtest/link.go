package pgtest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"
)

// A Link is a TCP path to the cluster that a test can cut and mend: an
// outage of the database as one client sees it (every connection ends,
// every new one is refused), without stopping the cluster that the other
// tests of the binary use. It is safe for concurrent use.
type Link struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
}

// NewLink returns a link to the database at url, a URL of this cluster,
// and the URL that reaches the same database through it. The link closes
// at the end of the test.
func NewLink(tb testing.TB, url string) (*Link, string) {
	tb.Helper()
	c := Start(tb)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	l := &Link{ln: ln, target: c.addr(), conns: map[net.Conn]struct{}{}}
	go l.serve()
	tb.Cleanup(l.close)
	through := strings.Replace(url, c.addr(), ln.Addr().String(), 1)
	if through == url {
		tb.Fatalf("pgtest: %q is not a URL of this cluster", url)
	}
	return l, through
}

// Cut ends every connection through the link, and refuses those that
// come until [Link.Mend]: each is closed as soon as it is accepted, as
// PostgreSQL's port closes while it restarts.
func (l *Link) Cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = true
	for c := range l.conns {
		c.Close()
	}
	clear(l.conns)
}

// Mend lets connections through again.
func (l *Link) Mend() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = false
}

func (l *Link) serve() {
	for {
		in, err := l.ln.Accept()
		if err != nil {
			return // closed
		}
		go l.forward(in)
	}
}

// forward copies in to the cluster and back, until either side ends or
// the link is cut.
func (l *Link) forward(in net.Conn) {
	l.mu.Lock()
	cut := l.cut
	l.mu.Unlock()
	if cut {
		in.Close()
		return
	}
	out, err := net.Dial("tcp", l.target)
	if err != nil {
		in.Close()
		return
	}
	l.mu.Lock()
	if l.cut {
		l.mu.Unlock()
		in.Close()
		out.Close()
		return
	}
	l.conns[in], l.conns[out] = struct{}{}, struct{}{}
	l.mu.Unlock()
	done := make(chan struct{}, 2)
	go func() { io.Copy(out, in); done <- struct{}{} }()
	go func() { io.Copy(in, out); done <- struct{}{} }()
	<-done
	in.Close()
	out.Close()
	<-done
	l.mu.Lock()
	delete(l.conns, in)
	delete(l.conns, out)
	l.mu.Unlock()
}

func (l *Link) close() {
	l.ln.Close()
	l.Cut()
}
