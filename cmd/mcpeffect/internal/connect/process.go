package connect

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// A serverProcess is an MCP server run as a command, spoken to over its
// standard input and output, whose standard error is kept for the errors
// that explain a failure.
//
// It does not use go-sdk's CommandTransport, whose Close waits five
// seconds for the server to exit and five more after SIGTERM, whatever
// the deadline: a server that never answers made -timeout 2s take seven
// seconds. The pipes are made here, rather than by exec.Cmd, so that
// Wait, which closes the pipes it made, can run as soon as the process
// exits without losing what it wrote last.
type serverProcess struct {
	cmd    *exec.Cmd
	stdin  *os.File // the write end of the server's standard input
	stdout *os.File // the read end of its standard output
	stderr *tailWriter

	stderrDone chan struct{} // closed once the server's standard error is read to its end
	done       chan struct{} // closed once the process has exited and been waited for
	state      *os.ProcessState
	killed     bool // stop killed the process: set and read by the caller of stop
}

// startProcess starts the command args, in a process group of its own
// where the system has them, so that stop can end the processes it
// starts as well (npx runs node, which runs the server). It inherits the
// environment, with env ("NAME=value") added.
func startProcess(args, env []string) (_ *serverProcess, err error) {
	p := &serverProcess{
		cmd:        exec.Command(args[0], args[1:]...),
		stderr:     &tailWriter{},
		stderrDone: make(chan struct{}),
		done:       make(chan struct{}),
	}
	var toClose []*os.File // the child's ends of the pipes, once it has them
	defer func() {
		for _, f := range toClose {
			f.Close()
		}
		if err != nil {
			p.stdin.Close()
			p.stdout.Close()
		}
	}()
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p.stdin = inW
	toClose = append(toClose, inR)
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p.stdout = outR
	toClose = append(toClose, outW)
	errR, errW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	toClose = append(toClose, errW)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = inR, outW, errW
	if len(env) > 0 {
		p.cmd.Env = append(os.Environ(), env...)
	}
	ownProcessGroup(p.cmd)
	if err := p.cmd.Start(); err != nil {
		errR.Close()
		return nil, err
	}
	go func() {
		// Processes the server started may hold its standard error
		// after it exits: this may end only when they do.
		io.Copy(p.stderr, errR)
		errR.Close()
		close(p.stderrDone)
	}()
	go func() {
		p.cmd.Wait()
		p.state = p.cmd.ProcessState
		close(p.done)
	}()
	return p, nil
}

// The times stop gives a server to exit once its input is closed, and
// again after SIGTERM, before it kills it: short, since an audit has what
// it came for, or has failed.
const (
	exitGrace      = time.Second
	terminateGrace = time.Second
)

// stop ends the server, as the MCP specification asks of a client: it
// closes the server's input and waits for it to exit; then it sends
// SIGTERM and waits again; then it kills the server and the processes it
// started. Once ctx is done there is no more waiting: the server is killed
// at once, so that a deadline holds, shutdown included. stop returns once
// the process has exited, or soon after killing it if the system does not
// end it.
func (p *serverProcess) stop(ctx context.Context) {
	p.stdin.Close()
	if p.await(ctx, exitGrace) {
		return
	}
	if ctx.Err() == nil {
		terminateProcessGroup(p.cmd)
		if p.await(ctx, terminateGrace) {
			return
		}
	}
	p.killed = true
	killProcessGroup(p.cmd)
	select {
	case <-p.done:
	case <-time.After(time.Second):
		// A process that a kill does not end (one stuck in the kernel)
		// must not hold up the audit's answer.
	}
}

// await waits until the process exits, for at most d or until ctx is
// done, and reports whether it exited.
func (p *serverProcess) await(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}

// exit returns how the process ended, such as "exit status 3" or
// "signal: segmentation fault", or "" if it is still running or was
// killed by stop.
func (p *serverProcess) exit() string {
	select {
	case <-p.done:
	default:
		return ""
	}
	if p.killed || p.state == nil {
		return ""
	}
	return p.state.String()
}

// stderrTail returns the last lines the server wrote on its standard
// error, made printable, waiting a moment for the last of them unless ctx
// is done.
func (p *serverProcess) stderrTail(ctx context.Context) []string {
	t := time.NewTimer(200 * time.Millisecond)
	defer t.Stop()
	select {
	case <-p.stderrDone:
	case <-ctx.Done():
	case <-t.C:
	}
	return p.stderr.lines(stderrLines)
}

// How much of a server's standard error is kept, and shown.
const (
	stderrKeep     = 8 << 10 // bytes
	stderrLines    = 10
	stderrLineMax  = 240 // characters a line
	stderrOverflow = "…"
)

// A tailWriter keeps the last stderrKeep bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

func (w *tailWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(b)
	if len(b) > stderrKeep {
		b = b[len(b)-stderrKeep:]
	}
	if over := len(w.buf) + len(b) - stderrKeep; over > 0 {
		w.buf = append(w.buf[:0], w.buf[over:]...)
	}
	w.buf = append(w.buf, b...)
	return n, nil
}

// lines returns the last n lines that are not blank, each cut to
// stderrLineMax characters and made printable, so that a server cannot
// write escapes to the terminal through an error message.
func (w *tailWriter) lines(n int) []string {
	w.mu.Lock()
	text := string(bytes.ToValidUTF8(w.buf, []byte("\uFFFD")))
	w.mu.Unlock()
	var out []string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r \t")
		if strings.TrimSpace(line) == "" {
			continue
		}
		if utf8.RuneCountInString(line) > stderrLineMax {
			line = string([]rune(line)[:stderrLineMax]) + stderrOverflow
		}
		out = append(out, printable(line))
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}

// describeStart explains an error starting the command name.
func describeStart(name string, err error) *ConnectError {
	e := &ConnectError{What: fmt.Sprintf("cannot run %s: %v", printable(name), err), Err: err}
	if strings.Contains(err.Error(), "executable file not found") || os.IsNotExist(err) {
		e.Hint = "check the command after --, or give its full path"
	} else if os.IsPermission(err) {
		e.Hint = "the file is not executable: check its permissions"
	}
	return e
}
