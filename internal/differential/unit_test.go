package differential

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// What the suite treats as the same: ids, times, durations, hosts and
// ports, endpoint paths, and the column widths that follow from ids' lengths; nothing else.
func TestNormaliseOnlyWhatDiffersByNature(t *testing.T) {
	vars := map[string]string{"sb": "7d3572b0-bd55-48cc-99e3-dbf79e309a36", "local": "/tmp/x"}
	cases := [][2]string{
		{"7d3572b0-bd55-48cc-99e3-dbf79e309a36  running", "<sb>  running"},
		{"e54fd57d8c83bf6b64f8b802d0898ee9    running", "<id>  running"},
		{`"created_at": "2026-12-02T06:42:09.470983Z"`, `"created_at": "<time>"`},
		{`"timestamp": 1796193736212,`, `"timestamp": "<time>",`},
		{`"duration": 0.011`, `"duration": "<duration>"`},
		{"timeout 0:10:00, took 1.5s", "timeout <duration>, took <duration>"},
		{"http://127.0.0.1:45346/proxy/44772", "http://<host>/proxy/44772"},
		{"http://127.0.0.1:8/sandboxes/7d3572b0-bd55-48cc-99e3-dbf79e309a36/proxy/44772/command", "http://<host>/proxy/44772/command"},
		{"exit 3, 8388608 bytes, 1614834367", "exit 3, 8388608 bytes, 1614834367"},
		{"snap_6e2d620fe129b048d4ce0f73", "<id>"},
	}
	for _, c := range cases {
		if got := normalise(c[0], vars); got != c[1] {
			t.Errorf("normalise(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

// JSON outputs differ by path; a row covers its path, its children, and
// with a leading dot the same path anywhere.
func TestCompareAndKnownRows(t *testing.T) {
	real := outcome{code: 0, stdout: `{"a": 1, "s": {"reason": "X", "message": "m"}, "items": [{"message": "m"}]}`}
	osb := outcome{code: 1, stdout: `{"a": 1.0, "s": {"reason": "X", "message": "n"}, "items": [{"message": "n"}], "extra": true}`, stderr: "oops\n"}
	var parts []string
	for _, d := range compare(real, osb) {
		parts = append(parts, d.part)
	}
	want := []string{"exit", "stdout .a", "stdout .items[].message", "stdout .s.message", "stdout .extra", "stderr"}
	if !slices.Equal(parts, want) {
		t.Errorf("differences %q, want %q", parts, want)
	}
	rows := []struct {
		k     known
		part  string
		cover bool
	}{
		{known{"sc", "1", ".message", "", false}, "stdout .items[].message", true},
		{known{"sc", "1", ".message", "", false}, "stdout .s.message", true},
		{known{"sc", "1", "stdout .s", "", false}, "stdout .s.message", true},
		{known{"sc", "1", "stdout", "", false}, "stdout .a", true},
		{known{"sc", "1", "stdout", "", false}, "stderr", false},
		{known{"sc", "2", "*", "", false}, "exit", false},
		{known{"*", "*", "*", "", false}, "exit", true},
		{known{"other", "*", "*", "", false}, "exit", false},
	}
	for _, r := range rows {
		if got := r.k.covers("sc", "1", difference{part: r.part}); got != r.cover {
			t.Errorf("%+v covers %s: %v, want %v", r.k, r.part, got, r.cover)
		}
	}
}

// A row's what may end in "?": a difference that depends on timing, read
// as the what before it, and marked so that a run without it passes.
func TestReadKnownRows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "server.md")
	doc := knownHeading + "\n\ntext\n\n| scenario | step | what | why |\n|---|---|---|---|\n" +
		"| `a` | `1` | `stdout .x` | always |\n| b | 2 | `.status.reason?` | when the restart is slow |\n\n## Next\n"
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	rows, err := readKnown(path)
	want := []known{{"a", "1", "stdout .x", "always", false}, {"b", "2", ".status.reason", "when the restart is slow", true}}
	if err != nil || !slices.Equal(rows, want) {
		t.Errorf("readKnown = %+v, %v; want %+v", rows, err, want)
	}
}
