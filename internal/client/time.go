package client

import (
	"encoding/json"
	"time"
)

// Time is a timestamp as the server wrote it. Text is kept byte for byte,
// so osb prints what the server sent (fractional zeros, offset and all);
// T is its meaning, zero when Text is not RFC 3339.
type Time struct {
	Text string
	T    time.Time
}

// NewTime is a time osb computed itself, written as RFC 3339 in UTC.
func NewTime(t time.Time) Time {
	return Time{Text: t.UTC().Format(time.RFC3339Nano), T: t}
}

// UnmarshalJSON keeps the text; a timestamp that is not RFC 3339 is kept
// too (unknown values are data, not errors).
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	t.Text = s
	t.T, _ = time.Parse(time.RFC3339Nano, s)
	return nil
}

// MarshalJSON writes the text as it came.
func (t Time) MarshalJSON() ([]byte, error) { return json.Marshal(t.Text) }

// IsZero reports an unset time.
func (t Time) IsZero() bool { return t.Text == "" }
