// Package progress shows people at a terminal how far a command's work
// has gone: the steps done of all, those running, the time so far, on one
// line redrawn in place. Work that takes a minute, such as verify's calls
// of every tool, otherwise looks stuck. It writes nothing but to a
// terminal (see IsTerminal): a log or a pipe gets none of it.
package progress

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// width is the most characters a line of a Meter takes, so that it stays
// one line on a terminal of 80 columns.
const width = 79

// A Meter draws one line on a terminal: what the command is doing, its
// steps done of all and those running, and the time so far. It redraws
// the line in place at each change and every second, and erases it when
// it stops, before the command writes its result. A nil *Meter draws
// nothing, so that code that reports progress needs no test of whether
// anyone watches. It is safe for concurrent use.
type Meter struct {
	w    io.Writer
	name string // the command, which begins the line
	now  func() time.Time

	mu      sync.Mutex
	start   time.Time
	what    string // what the steps are: "tools"
	total   int    // steps in all; 0 while unknown
	done    int
	running []string // the steps started and not done, in the order they started
	note    string   // what the command does, when it is not steps
	drawn   int      // characters of the line drawn last
	stopped bool

	quit chan struct{}
	wait sync.WaitGroup
}

// New returns a Meter drawing on w, a terminal, for the command called
// name ("mcpeffect verify"), its clock started; Stop it when the work
// ends.
func New(w io.Writer, name string) *Meter {
	m := newMeter(w, name, time.Now)
	ticks := time.NewTicker(time.Second)
	m.wait.Add(1)
	go func() {
		defer m.wait.Done()
		defer ticks.Stop()
		for {
			select {
			case <-ticks.C:
				m.tick()
			case <-m.quit:
				return
			}
		}
	}()
	return m
}

// newMeter returns a Meter on the clock now that no ticker redraws.
func newMeter(w io.Writer, name string, now func() time.Time) *Meter {
	return &Meter{w: w, name: name, now: now, start: now(), quit: make(chan struct{})}
}

// Steps says the work is total steps of what ("tools").
func (m *Meter) Steps(total int, what string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.total, m.what = total, what
	m.draw()
}

// Start says the step called name has started.
func (m *Meter) Start(name string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.running = append(m.running, name)
	m.draw()
}

// Done says the step called name is done.
func (m *Meter) Done(name string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, r := range m.running {
		if r == name {
			m.running = append(m.running[:i], m.running[i+1:]...)
			break
		}
	}
	m.done++
	m.draw()
}

// Note says what the command is doing, for work that is not steps:
// "listing tools: 250 so far, page 3".
func (m *Meter) Note(text string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.note = text
	m.draw()
}

// Stop erases the line and draws no more.
func (m *Meter) Stop() {
	if m == nil {
		return
	}
	m.mu.Lock()
	if !m.stopped {
		m.stopped = true
		close(m.quit)
		if m.drawn > 0 {
			fmt.Fprintf(m.w, "\r%s\r", strings.Repeat(" ", m.drawn))
		}
	}
	m.mu.Unlock()
	m.wait.Wait()
}

func (m *Meter) tick() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.draw()
}

// draw redraws the line, padded with spaces over what is left of the one
// before: no escape sequence, so that a terminal of any kind shows it.
func (m *Meter) draw() {
	if m.stopped {
		return
	}
	line := m.line()
	n := utf8.RuneCountInString(line)
	pad := max(m.drawn-n, 0)
	fmt.Fprintf(m.w, "\r%s%s", line, strings.Repeat(" ", pad))
	if pad > 0 {
		// Back over the padding, so that the cursor ends the line.
		fmt.Fprintf(m.w, "\r%s", line)
	}
	m.drawn = n
}

// line returns the line to draw: "mcpeffect verify: 12 of 84 tools, 0:41;
// running create_task", cut to width.
func (m *Meter) line() string {
	var b strings.Builder
	b.WriteString(m.name)
	b.WriteString(": ")
	if m.what != "" {
		if m.total > 0 {
			fmt.Fprintf(&b, "%d of %d %s, ", m.done, m.total, m.what)
		} else {
			fmt.Fprintf(&b, "%d %s, ", m.done, m.what)
		}
	}
	d := m.now().Sub(m.start).Round(time.Second)
	fmt.Fprintf(&b, "%d:%02d", int(d.Minutes()), int(d.Seconds())%60)
	if len(m.running) > 0 {
		b.WriteString("; running ")
		for i, r := range m.running {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(printable(r))
		}
	}
	if m.note != "" {
		b.WriteString("; ")
		b.WriteString(printable(m.note))
	}
	return cut(b.String(), width)
}

// printable escapes what is not printable in s, a name a server gave: a
// terminal escape or a line break must not redraw the screen.
func printable(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r <= 0xFFFF:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			fmt.Fprintf(&b, `\U%08X`, r)
		}
	}
	return b.String()
}

// cut returns s in at most n characters, ending in … if it was longer.
func cut(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
