package connect

// A ValueCounter counts the JSON values of a text written to it, in any
// pieces, the name of each member of an object counted as one: a bound on
// what the text holds once decoded, where its bytes bound only what it
// holds as text ("[0,0,…]" decodes to some 40 bytes of memory a value of
// 2 bytes). It does not check that the text is JSON, which a decoder
// does; what is not JSON counts as values too. The zero ValueCounter is
// ready to count.
type ValueCounter struct {
	n                           int
	inString, escaped, inScalar bool
}

// Write counts the values that begin in p. It never fails.
func (c *ValueCounter) Write(p []byte) (int, error) {
	for _, ch := range p {
		switch {
		case c.inString:
			switch {
			case c.escaped:
				c.escaped = false
			case ch == '\\':
				c.escaped = true
			case ch == '"':
				c.inString = false
			}
		case ch == '"':
			c.inString, c.inScalar = true, false
			c.n++
		case ch == '{' || ch == '[':
			c.inScalar = false
			c.n++
		case ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == ',' || ch == ':' || ch == ']' || ch == '}':
			c.inScalar = false
		case !c.inScalar:
			// A number, true, false or null begins.
			c.inScalar = true
			c.n++
		}
	}
	return len(p), nil
}

// Count returns the values counted so far.
func (c *ValueCounter) Count() int { return c.n }
