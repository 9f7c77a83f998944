package client

import (
	"encoding/json"
	"testing"
)

// Each pair is what the official client (opensandbox-cli 1.1.1) printed for
// the time a server sent: read to the microsecond, six digits or none, Z for
// UTC, any other offset kept, a time without offset left without one.
func TestTimeAsTheOfficialClientPrintsIt(t *testing.T) {
	for sent, printed := range map[string]string{
		"2026-12-01T11:04:47.271884161Z":   "2026-12-01T11:04:47.271884Z",
		"2026-01-02T03:04:05.12Z":          "2026-01-02T03:04:05.120000Z",
		"2026-01-02T03:04:05Z":             "2026-01-02T03:04:05Z",
		"2026-01-02T04:04:05.5+02:00":      "2026-01-02T04:04:05.500000+02:00",
		"2026-01-02T03:04:05.000000Z":      "2026-01-02T03:04:05Z",
		"2026-01-02T03:04:05.9999999Z":     "2026-01-02T03:04:05.999999Z",
		"2026-01-02T03:04:05+00:00":        "2026-01-02T03:04:05Z",
		"2026-01-02T03:04:05-00:00":        "2026-01-02T03:04:05Z",
		"2026-01-02 03:04:05Z":             "2026-01-02T03:04:05Z",
		"2026-01-02T03:04:05":              "2026-01-02T03:04:05",
		"2026-01-02T03:04:05.000001-07:30": "2026-01-02T03:04:05.000001-07:30",
		"yesterday":                        "yesterday",
	} {
		var tm Time
		if err := json.Unmarshal([]byte(`"`+sent+`"`), &tm); err != nil {
			t.Fatal(err)
		}
		out, err := json.Marshal(tm)
		if err != nil || string(out) != `"`+printed+`"` {
			t.Errorf("%s printed as %s (%v), want %q", sent, out, err, printed)
		}
		if tm.Text != sent {
			t.Errorf("%s kept as %q", sent, tm.Text)
		}
	}
}
