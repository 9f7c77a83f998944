package server

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Metadata follows Kubernetes label rules, as on the real server.
// Compiled on first use, not at start-up, which every command pays for.
var (
	labelName    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`) })
	dnsSubdomain = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	})
)

const reservedPrefix = "opensandbox.io/"

// checkLabels validates metadata in key order, so the first error is stable.
// The message names the offending key.
func checkLabels(m map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if err := checkLabel(k, m[k]); err != nil {
			return err
		}
	}
	return nil
}

func checkLabel(key, value string) error {
	if err := checkLabelKey(key); err != nil {
		return fmt.Errorf("invalid metadata key %q: %s", key, err)
	}
	if len(value) > 63 || (value != "" && !labelName().MatchString(value)) {
		return fmt.Errorf("invalid metadata value %q for key %q: must be 63 characters or less, empty or "+
			"start and end with an alphanumeric character with '-', '_', '.' or alphanumerics between", value, key)
	}
	return nil
}

func checkLabelKey(key string) error {
	if strings.HasPrefix(key, reservedPrefix) {
		return fmt.Errorf("the prefix %q is reserved", reservedPrefix)
	}
	name := key
	if prefix, rest, ok := strings.Cut(key, "/"); ok {
		if prefix == "" || len(prefix) > 253 || !dnsSubdomain().MatchString(prefix) {
			return fmt.Errorf("prefix must be a DNS subdomain (lowercase, at most 253 characters)")
		}
		name = rest
	}
	if name == "" || len(name) > 63 || !labelName().MatchString(name) {
		return fmt.Errorf("name must be 1-63 characters, start and end with an alphanumeric character, " +
			"with '-', '_', '.' or alphanumerics between")
	}
	return nil
}
