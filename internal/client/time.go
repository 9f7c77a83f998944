package client

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// Time is a timestamp as the server wrote it, printed as the official
// client prints it. The official client reads every time into a Python
// datetime and writes that back out, so the same instant looks the same
// whichever server sent it: microseconds (six digits, or none when they are
// all zero), "Z" for UTC, the server's offset otherwise, no offset when the
// server gave none. Text that is no time is printed as it came.
type Time struct {
	Text string    // as the server sent it
	T    time.Time // its meaning; zero when Text is not a time
}

// NewTime is a time osb computed itself.
func NewTime(t time.Time) Time {
	return Time{Text: t.UTC().Format(time.RFC3339Nano), T: t}
}

// ParseTime reads a server's timestamp; it never fails (see Time).
func ParseTime(text string) Time {
	t, _, _ := parseTime(text)
	return Time{Text: text, T: t}
}

// The forms the official client accepts: RFC 3339 with a T or a space, with
// or without an offset.
var timeLayouts = []struct {
	layout string
	naive  bool
}{
	{"2006-01-02T15:04:05.999999999Z07:00", false},
	{"2006-01-02 15:04:05.999999999Z07:00", false},
	{"2006-01-02T15:04:05.999999999", true},
	{"2006-01-02 15:04:05.999999999", true},
}

func parseTime(text string) (t time.Time, naive, ok bool) {
	if t, naive, ok := simpleTime(text); ok {
		return t, naive, true
	}
	return parseLayouts(text)
}

func parseLayouts(text string) (t time.Time, naive, ok bool) {
	for _, l := range timeLayouts {
		if t, err := time.Parse(l.layout, text); err == nil {
			return t, l.naive, true
		}
	}
	return time.Time{}, false, false
}

// String is the time as the official client prints it.
func (t Time) String() string {
	if s, ok := simpleString(t.Text); ok {
		return s
	}
	parsed, naive, ok := parseTime(t.Text)
	if !ok {
		return t.Text
	}
	var b strings.Builder
	b.WriteString(parsed.Format("2006-01-02T15:04:05"))
	if us := parsed.Nanosecond() / 1000; us != 0 {
		b.WriteByte('.')
		digits := strconv.Itoa(us)
		b.WriteString(strings.Repeat("0", 6-len(digits)) + digits)
	}
	if naive {
		return b.String()
	}
	if _, offset := parsed.Zone(); offset == 0 {
		b.WriteByte('Z')
	} else {
		b.WriteString(parsed.Format("-07:00"))
	}
	return b.String()
}

// UnmarshalJSON keeps the text; a timestamp that is not a time is kept too
// (unknown values are data, not errors).
func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*t = ParseTime(s)
	return nil
}

// MarshalJSON writes the time as the official client prints it.
func (t Time) MarshalJSON() ([]byte, error) { return json.Marshal(t.String()) }

// IsZero reports an unset time.
func (t Time) IsZero() bool { return t.Text == "" }

// simpleTime reads, without time.Parse, the form servers nearly always
// send: YYYY-MM-DDTHH:MM:SS, up to nine digits of fraction after a dot,
// then "Z" or no offset (both UTC, as time.Parse reads them). A listing
// reads three times a record, and time.Parse trying each layout in turn
// was a large part of it. Anything else is left to the layouts (ok false).
func simpleTime(s string) (t time.Time, naive, ok bool) {
	f, ok := simpleFields(s)
	if !ok {
		return time.Time{}, false, false
	}
	return time.Date(f.year, time.Month(f.month), f.day, f.hour, f.minute, f.sec, f.nsec, time.UTC), f.naive, true
}

// simpleString is String of a time in the form simpleTime reads, made
// from its text alone.
func simpleString(s string) (string, bool) {
	f, ok := simpleFields(s)
	if !ok {
		return "", false
	}
	us := f.nsec / 1000
	if us == 0 && f.naive {
		return s[:19], true
	}
	b := make([]byte, 0, 27)
	b = append(b, s[:19]...)
	if us != 0 {
		b = append(b, '.')
		for div := 100000; div > 0; div /= 10 {
			b = append(b, byte('0'+us/div%10))
		}
	}
	if !f.naive {
		b = append(b, 'Z')
	}
	return string(b), true
}

type timeFields struct {
	year, month, day, hour, minute, sec, nsec int
	naive                                     bool
}

func simpleFields(s string) (f timeFields, ok bool) {
	if len(s) < 19 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return f, false
	}
	var ok1, ok2, ok3, ok4, ok5, ok6 bool
	f.year, ok1 = decimal(s[0:4])
	f.month, ok2 = decimal(s[5:7])
	f.day, ok3 = decimal(s[8:10])
	f.hour, ok4 = decimal(s[11:13])
	f.minute, ok5 = decimal(s[14:16])
	f.sec, ok6 = decimal(s[17:19])
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || f.month < 1 || f.month > 12 || f.day < 1 ||
		f.day > daysIn(f.month, f.year) || f.hour > 23 || f.minute > 59 || f.sec > 59 {
		return f, false
	}
	rest := s[19:]
	if len(rest) > 0 && rest[0] == '.' {
		n := 1
		for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
			n++
		}
		if n == 1 || n > 10 {
			return f, false
		}
		f.nsec, _ = decimal(rest[1:n])
		for range 10 - n {
			f.nsec *= 10
		}
		rest = rest[n:]
	}
	switch rest {
	case "":
		f.naive = true
	case "Z":
	default:
		return f, false
	}
	return f, true
}

// decimal is the number s spells in decimal digits, nothing else.
func decimal(s string) (int, bool) {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

var monthDays = [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}

func daysIn(month, year int) int {
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		return 29
	}
	return monthDays[month]
}
