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
	hung  bool
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

// Hang makes the link a black hole until [Link.Mend], as a network
// partition does: connections stay open, and nothing sent either way on
// them, or on those that come, ever arrives.
func (l *Link) Hang() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hung = true
}

// Mend lets connections through again: those that come, after Cut; all,
// after Hang.
func (l *Link) Mend() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut, l.hung = false, false
}

func (l *Link) isHung() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hung
}

// pipe copies from src to dst, dropping what comes while the link hangs.
func (l *Link) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !l.isHung() {
			if _, err := dst.Write(buf[:n]); err != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
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
	cut, hung := l.cut, l.hung
	if hung && !cut {
		l.conns[in] = struct{}{}
	}
	l.mu.Unlock()
	if cut {
		in.Close()
		return
	}
	if hung {
		// Accepted, and never answered.
		io.Copy(io.Discard, in)
		l.mu.Lock()
		delete(l.conns, in)
		l.mu.Unlock()
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
	go func() { l.pipe(out, in); done <- struct{}{} }()
	go func() { l.pipe(in, out); done <- struct{}{} }()
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
