//go:build linux

package sandbox

import (
	"maps"
	"testing"
)

func TestParseEnvFile(t *testing.T) {
	lookup := func(k string) string { return map[string]string{"HOME": "/root", "EMPTY": ""}[k] }
	file := "# comment\n" +
		"\n" +
		"PLAIN =  $HOME/bin  \n" +
		"BRACES=${HOME}x\n" +
		"EMPTYVAL=\n" +
		"SINGLE='$HOME stays\nacross lines'\n" +
		`DOUBLE="a\tb\n\"q\" \\ \x $HOME"` + "\n" +
		"noequals\n" +
		"=novalue\n" +
		"OPEN='never closed\n" +
		"AFTER='x' trailing\n" +
		"LAST=kept"
	want := map[string]string{
		"PLAIN":    "/root/bin",
		"BRACES":   "/rootx",
		"EMPTYVAL": "",
		"SINGLE":   "$HOME stays\nacross lines",
		"DOUBLE":   "a\tb\n\"q\" \\ \\x /root",
		"LAST":     "kept",
	}
	if got := parseEnvFile(file, lookup); !maps.Equal(got, want) {
		t.Errorf("parseEnvFile:\n got %q\nwant %q", got, want)
	}
}
