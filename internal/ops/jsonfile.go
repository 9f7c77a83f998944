package ops

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// ReadJSONObjectFile reads a request file holding one JSON object, numbers
// kept exact (json.Number). Every problem is a usage error (exit 2) naming
// the file and, for bad JSON, the line and column.
func ReadJSONObjectFile(path string) (map[string]any, error) {
	v, err := ReadJSONFile(path, "request file")
	if err != nil {
		return nil, err
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, UsageErrorf("Request file '%s' must contain a JSON object.", path)
	}
	return obj, nil
}

// ReadJSONFile reads a file holding one JSON value of any kind, numbers kept
// exact. what names the file in messages ("network policy file"); every
// problem is a usage error (exit 2).
func ReadJSONFile(path, what string) (any, error) {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, UsageErrorf("cannot read %s '%s': %v", what, path, errors.Unwrap(err))
	case fi.IsDir():
		return nil, UsageErrorf("%s '%s' is a directory", what, path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, UsageErrorf("cannot read %s '%s': %v", what, path, err)
	}
	v, err := DecodeJSON(data)
	if err != nil {
		return nil, UsageErrorf("Invalid JSON in %s '%s': %v", what, path, err)
	}
	return v, nil
}

// DecodeJSON parses exactly one JSON value, numbers as json.Number; errors
// name a line and column.
func DecodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		var syn *json.SyntaxError
		switch {
		case errors.As(err, &syn):
			// Offset counts the bytes read, the offending one included.
			return nil, fmt.Errorf("%s: %v", jsonPosition(data, int(syn.Offset)-1), err)
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil, errors.New("unexpected end of input")
		}
		return nil, err
	}
	end := int(dec.InputOffset())
	if rest := bytes.TrimLeft(data[end:], " \t\r\n"); len(rest) > 0 {
		return nil, fmt.Errorf("%s: extra data after the JSON value", jsonPosition(data, len(data)-len(rest)))
	}
	return v, nil
}

// jsonPosition names the byte at index i as "line L, column C" (both from 1).
func jsonPosition(data []byte, i int) string {
	i = min(max(i, 0), len(data))
	before := data[:i]
	line := bytes.Count(before, []byte("\n")) + 1
	col := i - bytes.LastIndexByte(before, '\n')
	return fmt.Sprintf("line %d, column %d", line, col)
}
