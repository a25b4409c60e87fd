package mcpeffect

import (
	"bytes"
	"encoding/json"
	"errors"
)

// A call is a JSON-RPC message: id is set for a request that expects an
// answer; method is its method, and for the methods that Challenge
// answers, what it names: name for tools/call and prompts/get, with the
// arguments of tools/call, and uri for resources/read.
type call struct {
	id     json.RawMessage
	method string
	name   string
	uri    string
	args   []byte // nil when absent
}

var errUncertain = errors.New("not a body to challenge")

// parseCall reads the request that body holds, if it is a tools/call, a
// resources/read or a prompts/get. Anything else is an error: a body that
// is not JSON, a batch, another method, a notification. So is any doubt
// about what the SDK will read: a key that matters given twice (decoders
// differ on which one wins), a method that is not a string, a request
// without an id, a name or URI that is not a string.
//
// It scans the body in place rather than decoding it, as it runs on every
// HTTP request: json.Valid has checked the syntax first, so the scanner
// only has to find where values begin and end.
func parseCall(body []byte) (call, error) {
	if !json.Valid(body) {
		return call{}, errUncertain
	}
	sc := scanner{b: body}
	sc.space()
	c, err := parseMessage(sc.value())
	if err == nil && c.name == "" && c.uri == "" {
		err = errUncertain
	}
	return c, err
}

// parseMessage reads one JSON-RPC message, valid JSON.
func parseMessage(raw []byte) (call, error) {
	var version, id, method, params []byte
	if err := members(raw, func(key string, v []byte) error {
		var dst *[]byte
		switch key {
		case "jsonrpc":
			dst = &version
		case "id":
			dst = &id
		case "method":
			dst = &method
		case "params":
			dst = &params
		default:
			return nil
		}
		if *dst != nil {
			return errUncertain
		}
		*dst = v
		return nil
	}); err != nil {
		return call{}, err
	}
	var c call
	if method == nil {
		// A response to the server: not for this check, and nothing to
		// answer.
		return c, nil
	}
	m, ok := stringValue(method)
	if !ok {
		return call{}, errUncertain
	}
	if id != nil && string(id) != "null" {
		c.id = id
	}
	c.method = m
	var want string // the member of params that names what is called
	switch m {
	case "tools/call", "prompts/get":
		want = "name"
	case "resources/read":
		want = "uri"
	default:
		return c, nil
	}
	if v, ok := stringValue(version); !ok || v != "2.0" || c.id == nil {
		return call{}, errUncertain
	}
	var named, args []byte
	if err := members(params, func(key string, v []byte) error {
		var dst *[]byte
		switch {
		case key == want:
			dst = &named
		case key == "arguments" && m == "tools/call":
			dst = &args
		default:
			return nil
		}
		if *dst != nil {
			return errUncertain
		}
		*dst = v
		return nil
	}); err != nil {
		return call{}, err
	}
	s, ok := stringValue(named)
	if !ok || s == "" {
		return call{}, errUncertain
	}
	if want == "uri" {
		c.uri = s
	} else {
		c.name = s
	}
	c.args = args
	return c, nil
}

// members calls f with the key and the raw value of each member of the
// JSON object raw, valid JSON; anything but an object is an error.
func members(raw []byte, f func(key string, v []byte) error) error {
	sc := scanner{b: raw}
	sc.space()
	if sc.peek() != '{' {
		return errUncertain
	}
	sc.i++
	for {
		sc.space()
		if sc.peek() == '}' {
			return nil
		}
		key, ok := stringValue(sc.value())
		if !ok {
			return errUncertain
		}
		sc.space()
		sc.i++ // the colon
		sc.space()
		if err := f(key, sc.value()); err != nil {
			return err
		}
		sc.space()
		if sc.peek() == ',' {
			sc.i++
		}
	}
}

// stringValue returns the string that raw, a JSON value, holds, and
// whether it is a string. Only strings with escapes are decoded.
func stringValue(raw []byte) (string, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return "", false
	}
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1]), true
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err == nil
}

// A scanner finds the values of JSON that json.Valid accepted.
type scanner struct {
	b []byte
	i int
}

func (sc *scanner) peek() byte {
	if sc.i < len(sc.b) {
		return sc.b[sc.i]
	}
	return 0
}

func (sc *scanner) space() {
	for sc.i < len(sc.b) {
		switch sc.b[sc.i] {
		case ' ', '\t', '\n', '\r':
			sc.i++
		default:
			return
		}
	}
}

// value returns the value that starts at the scanner, and moves past it.
func (sc *scanner) value() []byte {
	start := sc.i
	switch sc.peek() {
	case '"':
		sc.skipString()
	case '{', '[':
		depth := 0
		for sc.i < len(sc.b) {
			switch sc.b[sc.i] {
			case '"':
				sc.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			sc.i++
			if depth == 0 {
				break
			}
		}
	default: // a number, true, false or null
		for sc.i < len(sc.b) && !endsLiteral(sc.b[sc.i]) {
			sc.i++
		}
	}
	return sc.b[start:sc.i]
}

// endsLiteral reports whether c ends a number or a literal.
func endsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// skipString moves past the string that starts at the scanner.
func (sc *scanner) skipString() {
	for sc.i++; sc.i < len(sc.b); sc.i++ {
		switch sc.b[sc.i] {
		case '\\':
			sc.i++
		case '"':
			sc.i++
			return
		}
	}
}
