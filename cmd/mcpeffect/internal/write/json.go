package write

import (
	"encoding/json"
	"io"
)

// JSON writes v, a report of any command, as indented JSON.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
