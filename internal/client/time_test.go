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

// The quick reading of the usual form gives what time.Parse gives, and
// leaves to it whatever it does not read the same way.
func TestSimpleTimeAgreesWithParse(t *testing.T) {
	for _, text := range []string{
		"2026-12-01T11:04:47.271884161Z", "2026-01-02T03:04:05Z", "2026-01-02T03:04:05",
		"2026-01-02T03:04:05.5", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
		"2024-02-29T00:00:00Z", "2026-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2000-02-29T00:00:00.000001Z", "0000-02-29T00:00:00", "2026-04-31T00:00:00Z", "2026-13-01T00:00:00Z",
		"2026-00-01T00:00:00Z", "2026-01-00T00:00:00Z", "2026-01-02T24:00:00Z", "2026-01-02T03:60:00Z",
		"2026-01-02T03:04:60Z", "2026-01-02T03:04:05.Z", "2026-01-02T03:04:05.1234567891Z",
		"2026-01-02T03:04:05z", "2026-01-02T03:04:05ZZ", "2026-01-02T03:04:05,5Z", "2026-1-02T03:04:05Z",
		"+026-01-02T03:04:05Z", "2026-01-02T03:04:05+00:00", "2026-01-02 03:04:05Z",
	} {
		quick, qNaive, qOK := simpleTime(text)
		slow, sNaive, sOK := parseLayouts(text)
		if qOK && (!sOK || !quick.Equal(slow) || qNaive != sNaive || quick.Location() != slow.Location()) {
			t.Errorf("%s: read as %v (naive %v), time.Parse reads %v (naive %v, ok %v)", text, quick, qNaive, slow, sNaive, sOK)
		}
		if got, want := (Time{Text: text}).String(), slowString(text); got != want {
			t.Errorf("%s printed as %q, want %q", text, got, want)
		}
	}
}

// slowString prints text through time.Parse alone, as String did before
// the quick reading.
func slowString(text string) string {
	parsed, naive, ok := parseLayouts(text)
	if !ok {
		return text
	}
	s := parsed.Format("2006-01-02T15:04:05")
	if us := parsed.Nanosecond() / 1000; us != 0 {
		s += parsed.Format(".000000")
	}
	if naive {
		return s
	}
	if _, offset := parsed.Zone(); offset == 0 {
		return s + "Z"
	}
	return s + parsed.Format("-07:00")
}
