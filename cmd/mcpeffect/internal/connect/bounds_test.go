package connect

import (
	"bufio"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestReadLine holds the edge of the line limit: a line of exactly the
// limit is read, one byte more is refused, a line break or a last line
// without one alike.
func TestReadLine(t *testing.T) {
	const max = 100
	for _, tc := range []struct {
		name  string
		input string
		want  []string // the lines read, then the error: "" for EOF, "limit"
	}{
		{"at the limit", strings.Repeat("a", max) + "\n", []string{strings.Repeat("a", max), ""}},
		{"at the limit with CRLF", strings.Repeat("a", max-1) + "\r\n", []string{strings.Repeat("a", max-1), ""}},
		{"past the limit", strings.Repeat("a", max+1) + "\n", []string{"limit"}},
		{"last line at the limit", strings.Repeat("a", max), []string{strings.Repeat("a", max) + "<EOF>"}},
		{"last line past the limit", strings.Repeat("a", max+1), []string{"limit"}},
		{"after short lines", "{}\n{}\n" + strings.Repeat("b", 10*max), []string{"{}", "{}", "limit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A buffer smaller than the limit, so that a line spans reads.
			r := bufio.NewReaderSize(strings.NewReader(tc.input), 16)
			var got []string
			for {
				line, err := readLine(r, max)
				var le *LimitError
				switch {
				case errors.As(err, &le):
					if le.Limit != LimitLine || le.Max != max {
						t.Errorf("limit error %+v", le)
					}
					got = append(got, "limit")
				case err == io.EOF && len(line) > 0:
					got = append(got, string(line)+"<EOF>")
				case err == io.EOF:
					got = append(got, "")
				case err != nil:
					t.Fatal(err)
				default:
					got = append(got, string(line))
					continue
				}
				break
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLimitedBody holds the edge of the limit of an HTTP answer, read in
// reads of any size.
func TestLimitedBody(t *testing.T) {
	const max = 1000
	for _, tc := range []struct {
		size    int
		refused bool
	}{{0, false}, {max - 1, false}, {max, false}, {max + 1, true}, {10 * max, true}} {
		for _, chunk := range []int{1, 7, max, 4 * max} {
			b := &breach{}
			body := newLimitedBody(io.NopCloser(strings.NewReader(strings.Repeat("x", tc.size))), max, 0, b)
			var n int
			var err error
			buf := make([]byte, chunk)
			for err == nil {
				var k int
				k, err = body.Read(buf)
				n += k
			}
			var le *LimitError
			if refused := errors.As(err, &le); refused != tc.refused || (refused && b.get() == nil) {
				t.Errorf("size %d, reads of %d: error %v, breach %v; want refused %t", tc.size, chunk, err, b.get(), tc.refused)
			}
			if n > max {
				t.Errorf("size %d, reads of %d: %d bytes given, want at most %d", tc.size, chunk, n, max)
			}
		}
	}
}
