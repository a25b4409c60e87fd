package progress

import (
	"bytes"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// A clock is a time that a test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// lines returns what was drawn, one entry a redraw: the text after each
// carriage return, without the padding that erases the line before.
func lines(out string) []string {
	var got []string
	for _, l := range strings.Split(out, "\r")[1:] {
		if l = strings.TrimRight(l, " "); l != "" && (len(got) == 0 || got[len(got)-1] != l) {
			got = append(got, l)
		}
	}
	return got
}

func TestMeter(t *testing.T) {
	var out bytes.Buffer
	c := &clock{t: time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)}
	m := newMeter(&out, "mcpeffect verify", c.now)
	m.Steps(3, "tools")
	m.Start("add_note")
	m.Start("get\x1b[2Jnote") // a hostile name: shown escaped
	c.add(41 * time.Second)
	m.tick()
	m.Done("add_note")
	c.add(25 * time.Second)
	m.Done("get\x1b[2Jnote")
	m.Note("closing")
	m.Stop()
	m.Done("late") // after Stop: nothing drawn

	want := []string{
		"mcpeffect verify: 0 of 3 tools, 0:00",
		"mcpeffect verify: 0 of 3 tools, 0:00; running add_note",
		`mcpeffect verify: 0 of 3 tools, 0:00; running add_note, get\u001B[2Jnote`,
		`mcpeffect verify: 0 of 3 tools, 0:41; running add_note, get\u001B[2Jnote`,
		`mcpeffect verify: 1 of 3 tools, 0:41; running get\u001B[2Jnote`,
		"mcpeffect verify: 2 of 3 tools, 1:06",
		"mcpeffect verify: 2 of 3 tools, 1:06; closing",
	}
	got := lines(out.String())
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("drawn:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Errorf("an escape reached the terminal: %q", out.String())
	}
	// Stop leaves the line blank, and the cursor at its start.
	last := "\r" + strings.Repeat(" ", len(want[len(want)-1])) + "\r"
	if !strings.HasSuffix(out.String(), last) {
		t.Errorf("the output ends %q, want the line erased", out.String()[max(out.Len()-100, 0):])
	}
}

// TestMeterLong: a line longer than a terminal of 80 columns is cut, and
// a shorter one after it erases what is left of it.
func TestMeterLong(t *testing.T) {
	var out bytes.Buffer
	c := &clock{}
	m := newMeter(&out, "mcpeffect verify", c.now)
	m.Start(strings.Repeat("x", 200))
	m.Done(strings.Repeat("x", 200))
	m.Stop()
	parts := strings.Split(out.String(), "\r")
	if first := parts[1]; len([]rune(first)) != width || !strings.HasSuffix(first, "…") {
		t.Errorf("a long line drawn as %q (%d characters), want %d ending in …", first, len([]rune(first)), width)
	}
	if erase := parts[2]; len(erase) != width || !strings.HasPrefix(erase, "mcpeffect verify: 0:00 ") {
		t.Errorf("the next line %q does not cover the one before", erase)
	}
}

// TestNilMeter: a nil Meter, for output that is not a terminal, draws
// nothing and does not fail.
func TestNilMeter(t *testing.T) {
	var m *Meter
	m.Steps(1, "tools")
	m.Start("a")
	m.Done("a")
	m.Note("x")
	m.Stop()
}

// TestNewTicks: a Meter redraws every second by itself, with the time,
// until it stops.
func TestNewTicks(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	m := New(w, "mcpeffect audit")
	m.Note("listing tools")
	buf := make([]byte, 256)
	var got strings.Builder
	for !strings.Contains(got.String(), "0:01; listing tools") {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		got.Write(buf[:n])
	}
	m.Stop()
	w.Close()
}

func TestIsTerminal(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	file, err := os.Create(t.TempDir() + "/out")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	for name, w := range map[string]any{"a pipe": w, os.DevNull + ", a device that is no terminal": null, "a file": file, "a buffer": &bytes.Buffer{}} {
		if IsTerminal(w.(interface{ Write([]byte) (int, error) })) {
			t.Errorf("%s is taken for a terminal", name)
		}
	}
	if !IsTerminal(saysTerminal{}) {
		t.Error("a writer that says it is a terminal is not taken for one")
	}
}

// saysTerminal is a writer that says it is a terminal.
type saysTerminal struct{}

func (saysTerminal) Write(p []byte) (int, error) { return len(p), nil }
func (saysTerminal) IsTerminal() bool            { return true }
