package config

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Kind is the type a config key holds in the file.
type Kind int

// The kinds of values a key may hold.
const (
	KindString Kind = iota
	KindNumber
	KindBool
)

// Key describes one settable key of the config file.
type Key struct {
	Name     string // section.field
	Kind     Kind
	Secret   bool
	Validate func(string) error // extra check on the raw value, nil for none
}

// Keys lists every key osb reads from the file, in file order.
var Keys = []Key{
	{Name: "connection.api_key", Kind: KindString, Secret: true},
	{Name: "connection.domain", Kind: KindString, Validate: validateDomain},
	{Name: "connection.protocol", Kind: KindString, Validate: validateProtocol},
	{Name: "connection.request_timeout", Kind: KindNumber, Validate: validatePositive},
	{Name: "connection.idle_timeout", Kind: KindNumber, Validate: validatePositive},
	{Name: "connection.use_server_proxy", Kind: KindBool},
	{Name: "output.color", Kind: KindBool},
	{Name: "defaults.image", Kind: KindString},
	{Name: "defaults.timeout", Kind: KindString, Validate: validateDefaultTimeout},
}

// ValidateDuration is set by the command layer so the config package checks
// defaults.timeout with the same parser every --timeout flag uses.
var ValidateDuration func(string) error

// ValidateDomain is set by the command layer so the config package checks
// connection.domain with the parser the client reads it with: a domain
// osb cannot use must not reach the file, where it breaks every command.
var ValidateDomain func(string) error

func validateDomain(v string) error {
	if v == "" || ValidateDomain == nil {
		return nil // empty: back to the default
	}
	return ValidateDomain(v)
}

func validateProtocol(v string) error {
	if v != "http" && v != "https" {
		return fmt.Errorf("must be http or https, got %q", v)
	}
	return nil
}

func validatePositive(v string) error {
	n, _ := strconv.ParseFloat(v, 64)
	if !(n > 0) || math.IsInf(n, 0) {
		return fmt.Errorf("must be a positive number of seconds, got %q", v)
	}
	return nil
}

func validateDefaultTimeout(v string) error {
	if strings.EqualFold(strings.TrimSpace(v), "none") || ValidateDuration == nil {
		return nil
	}
	return ValidateDuration(v)
}

// LookupKey finds a key by its section.field name.
func LookupKey(name string) (Key, error) {
	if !strings.Contains(name, ".") {
		return Key{}, fmt.Errorf("key must be in 'section.field' format (e.g. connection.domain), got %q", name)
	}
	for _, k := range Keys {
		if k.Name == name {
			return k, nil
		}
	}
	names := make([]string, len(Keys))
	for i, k := range Keys {
		names[i] = k.Name
	}
	return Key{}, fmt.Errorf("unknown config key %q; known keys: %s", name, strings.Join(names, ", "))
}

// Literal checks raw against the key's type and returns it as a TOML literal.
func (k Key) Literal(raw string) (string, error) {
	switch k.Kind {
	case KindBool:
		b, ok := ParseBoolWord(raw)
		if !ok {
			return "", fmt.Errorf("%s must be true or false, got %q", k.Name, raw)
		}
		return strconv.FormatBool(b), nil
	case KindNumber:
		text := number(raw)
		if text == "" {
			return "", fmt.Errorf("%s must be a number, got %q", k.Name, raw)
		}
		if k.Validate != nil {
			if err := k.Validate(text); err != nil {
				return "", fmt.Errorf("%s %v", k.Name, err)
			}
		}
		return text, nil
	}
	if k.Validate != nil {
		if err := k.Validate(raw); err != nil {
			return "", fmt.Errorf("%s %v", k.Name, err)
		}
	}
	return quote(raw), nil
}

// number is raw as a TOML number both clients read (30, 1.5, 1000 for
// 1_000 or 1e3), or "" when raw is not a number.
func number(raw string) string {
	raw = strings.ReplaceAll(strings.TrimSpace(raw), "_", "")
	if n, err := strconv.ParseInt(raw, 10, 64); err == nil {
		return strconv.FormatInt(n, 10)
	}
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return ""
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// quote writes s as a TOML basic string, the style of the rest of the file.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

var sectionHeader = regexp.MustCompile(`^\s*\[([^\[\]]+)\]\s*(#.*)?$`)

// SetValue returns text with section.field set to literal. It edits only the
// one line that holds the key (uncommenting a template line if that is all
// there is) and keeps that line's own trailing comment, so comments and every
// other key stay as they were.
func SetValue(text, name, literal string) string {
	section, field, _ := strings.Cut(name, ".")
	lines := strings.Split(text, "\n")
	keyLine := regexp.MustCompile(`^\s*#?\s*` + regexp.QuoteMeta(field) + `\s*=`)
	newLine := field + " = " + literal

	start, end := -1, len(lines)
	for i, l := range lines {
		m := sectionHeader.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if start >= 0 {
			end = i
			break
		}
		if strings.TrimSpace(m[1]) == section {
			start = i
		}
	}
	if start < 0 {
		out := strings.TrimRight(text, "\n")
		if out != "" {
			out += "\n\n"
		}
		return out + "[" + section + "]\n" + newLine + "\n"
	}
	commented := -1
	for i := start + 1; i < end; i++ {
		if !keyLine.MatchString(lines[i]) {
			continue
		}
		if !strings.HasPrefix(strings.TrimSpace(lines[i]), "#") {
			lines[i] = newLine + trailingComment(lines[i])
			return strings.Join(lines, "\n")
		}
		if commented < 0 {
			commented = i
		}
	}
	if commented >= 0 {
		lines[commented] = newLine + trailingComment(lines[commented])
		return strings.Join(lines, "\n")
	}
	insert := end
	for insert > start+1 && strings.TrimSpace(lines[insert-1]) == "" {
		insert--
	}
	lines = append(lines[:insert], append([]string{newLine}, lines[insert:]...)...)
	return strings.Join(lines, "\n")
}

// trailingComment returns the comment that ends a `key = value  # note` line,
// with the blanks before it, or "" when there is none. A '#' inside a quoted
// string is part of the value.
func trailingComment(line string) string {
	_, value, ok := strings.Cut(line, "=")
	if !ok {
		return ""
	}
	var quote byte
	for i := 0; i < len(value); i++ {
		ch := value[i]
		switch {
		case quote == 0 && ch == '#':
			return value[len(strings.TrimRight(value[:i], " \t")):]
		case quote == 0 && (ch == '"' || ch == '\''):
			quote = ch
		case quote == '"' && ch == '\\':
			i++ // an escaped character cannot end the string
		case ch == quote:
			quote = 0
		}
	}
	return ""
}
