package sandbox_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/cmdtest"
)

type listJSON struct {
	Items []struct {
		ID     string `json:"id"`
		Status struct {
			State string `json:"state"`
		} `json:"status"`
	} `json:"items"`
	Pagination struct {
		Page        int  `json:"page"`
		PageSize    int  `json:"page_size"`
		TotalItems  int  `json:"total_items"`
		TotalPages  int  `json:"total_pages"`
		HasNextPage bool `json:"has_next_page"`
	} `json:"pagination"`
}

func listIDs(t *testing.T, out string) ([]string, listJSON) {
	t.Helper()
	var l listJSON
	if err := json.Unmarshal([]byte(out), &l); err != nil {
		t.Fatalf("list -o json: %v\n%s", err, out)
	}
	ids := []string{}
	for _, it := range l.Items {
		ids = append(ids, it.ID)
	}
	return ids, l
}

func TestListFormats(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	for _, format := range []string{"table", "json", "yaml"} {
		golden(t, "list_empty_"+format, env.Run("sandbox", "list", "-o", format).ExpectCode(t, 0))
	}
	a := env.NewSandbox("-t", "30m", "-m", "team=ml")
	b := env.NewSandbox("-t", "none")
	for _, format := range []string{"table", "json", "yaml"} {
		golden(t, "list_"+format, env.Run("sandbox", "list", "-o", format).ExpectCode(t, 0), a, b)
	}
}

func TestListFilters(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	a := env.NewSandbox("-m", "team=ml", "-m", "tier=gpu")
	b := env.NewSandbox("-m", "team=web")
	c := env.NewSandbox()
	env.Must("sandbox", "pause", c)
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"all", nil, []string{a, b, c}},
		{"one state, any case", []string{"-s", "rUnNiNg"}, []string{a, b}},
		{"two states", []string{"--state", "paused", "-s", "RUNNING"}, []string{a, b, c}},
		{"metadata", []string{"-m", "team=ml"}, []string{a}},
		{"metadata AND", []string{"-m", "team=ml", "-m", "tier=cpu"}, []string{}},
		{"metadata and state", []string{"-m", "team=web", "-s", "paused"}, []string{}},
		{"page size", []string{"--page-size", "2"}, []string{a, b}},
		{"page", []string{"--page", "2", "--page-size", "2"}, []string{c}},
		{"all pages", []string{"--all"}, []string{a, b, c}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ids, _ := listIDs(t, env.Must(append([]string{"sandbox", "list", "-o", "json"}, tc.args...)...))
			if !reflect.DeepEqual(ids, tc.want) {
				t.Errorf("got %v, want %v", ids, tc.want)
			}
		})
	}
	_, page := listIDs(t, env.Must("sandbox", "list", "--page", "1", "--page-size", "2", "-o", "json"))
	if p := page.Pagination; p.Page != 1 || p.PageSize != 2 || p.TotalItems != 3 || p.TotalPages != 2 || !p.HasNextPage {
		t.Errorf("pagination of page 1 of 2: %+v", p)
	}
	golden(t, "list_all_json", env.Run("sandbox", "list", "--all", "-s", "running", "-o", "json").ExpectCode(t, 0), a, b)
	// Nothing found: the same document, with an empty list.
	if r := env.Run("sandbox", "list", "--all", "-s", "failed", "-o", "json"); r.Code != 0 || r.Stderr != "" || r.Stdout != `{
  "items": [],
  "pagination": {
    "page": 1,
    "page_size": 0,
    "total_items": 0,
    "total_pages": 0,
    "has_next_page": false
  }
}
` {
		t.Errorf("nothing found: exit %d\n%s%s", r.Code, r.Stdout, r.Stderr)
	}
}

// --all walks every page the server has and merges them.
func TestListAllPages(t *testing.T) {
	t.Parallel()
	ids := make([]string, 205)
	for i := range ids {
		ids[i] = fmt.Sprintf("sbx-%03d", i)
	}
	fs := newFakeServer(t, ids...)
	fs.paginate = true
	got, l := listIDs(t, fs.env(t).Must("sandbox", "list", "--all", "-m", "a b=c&d", "-o", "json"))
	if !reflect.DeepEqual(got, ids) {
		t.Errorf("got %d ids, want %d", len(got), len(ids))
	}
	if p := l.Pagination; p.Page != 1 || p.PageSize != 205 || p.TotalItems != 205 || p.TotalPages != 1 || p.HasNextPage {
		t.Errorf("merged pagination %+v", p)
	}
	want := []string{
		"GET /v1/sandboxes?metadata=a%252520b%3Dc%252526d&page=1&pageSize=200",
		"GET /v1/sandboxes?metadata=a%252520b%3Dc%252526d&page=2&pageSize=200",
	}
	if log := fs.log(); !reflect.DeepEqual(log, want) {
		t.Errorf("requests\n got %q\nwant %q", log, want)
	}
}

// A page that fails after others were printed (the pages after it
// already asked for): exit 1 with the server's error, and what stdout got
// is no complete JSON document, so no script reads it as every sandbox.
func TestListAllLaterPageFails(t *testing.T) {
	t.Parallel()
	ids := make([]string, 1000)
	for i := range ids {
		ids[i] = fmt.Sprintf("sbx-%04d", i)
	}
	fs := newFakeServer(t, ids...)
	fs.paginate = true
	fs.failPage = 3
	r := fs.env(t).Run("sandbox", "list", "--all", "-o", "json")
	if r.Code != 1 || !strings.Contains(r.Stderr, "list sandboxes: page 3 failed (HTTP 500, code BROKEN)") {
		t.Errorf("exit %d, stderr:\n%s", r.Code, r.Stderr)
	}
	if json.Valid([]byte(r.Stdout)) || strings.Contains(r.Stdout, `"pagination"`) {
		t.Errorf("a listing that stopped at page 3 printed as a whole one:\n%.300s", r.Stdout)
	}
}

func TestListValidation(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"state", []string{"-s", "running", "-s", "sleeping"}, "Invalid sandbox state 'sleeping'. Valid values: Failed, Paused, Pausing, Pending, Resuming, Running, Stopping, Terminated, Unknown"},
		{"page", []string{"--page", "0"}, "--page must be at least 1, got 0"},
		{"page size", []string{"--page-size", "-3"}, "--page-size must be at least 1, got -3"},
		{"all and page", []string{"--all", "--page", "2"}, "--all lists every page; it cannot be combined with --page or --page-size"},
		{"all and page size", []string{"--page-size", "5", "--all"}, "--all lists every page; it cannot be combined with --page or --page-size"},
		{"metadata", []string{"-m", "team"}, "expected KEY=VALUE format, got 'team'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env.Run(append([]string{"sandbox", "list"}, tc.args...)...).ExpectError(t, 2, tc.want)
		})
	}
}

// A table that is one page of several says so on stderr, with how to get
// the rest; json and yaml carry it in pagination and say nothing more.
func TestListSaysWhenMorePagesExist(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	a, b := env.NewSandbox(), env.NewSandbox()
	r := env.Run("sandbox", "list", "--page-size", "1")
	if r.Code != 0 || (!strings.Contains(r.Stdout, a) && !strings.Contains(r.Stdout, b)) ||
		r.Stderr != "NOTE: Page 1 of 2 (2 in all): the next one with --page 2, or every page with --all.\n" {
		t.Errorf("page 1 of 2: exit %d\nstdout %s\nstderr %q", r.Code, r.Stdout, r.Stderr)
	}
	if r := env.Run("sandbox", "list", "--page-size", "1", "--page", "2"); r.Code != 0 || r.Stderr != "" {
		t.Errorf("the last page: exit %d, stderr %q", r.Code, r.Stderr)
	}
	if r := env.Run("sandbox", "list", "--page-size", "1", "-o", "json"); r.Code != 0 || r.Stderr != "" || !strings.Contains(r.Stdout, `"has_next_page": true`) {
		t.Errorf("json: exit %d, stderr %q\n%s", r.Code, r.Stderr, r.Stdout)
	}
}

// --all -o json over several pages prints every record byte for byte as a
// listing of its page prints it, whatever the record holds: times in every
// form, text that needs escaping, missing and empty fields.
func TestListAllPrintsRecordsAsPagesDo(t *testing.T) {
	t.Parallel()
	variants := []map[string]any{
		{"createdAt": "2026-12-01T11:04:47.271884161Z", "expiresAt": "2026-01-02T03:04:05",
			"status": map[string]any{"state": "Paused", "reason": "r\"q\\", "message": "tab\there\nnew line \u2028 é ✓ <b>&amp;</b>",
				"lastTransitionAt": "2026-01-02T04:04:05.5+02:00"}},
		{"createdAt": "yesterday", "expiresAt": "<soon> & later", "status": nil, "entrypoint": []string{},
			"metadata": map[string]string{"z": "last", "a": "first", "ключ": "значение", "ctl": "\x01\x1f"}, "extensions": map[string]string{}},
		{"createdAt": "2024-02-29 23:59:59.000001Z", "expiresAt": "2026-02-29T00:00:00Z", "image": nil, "snapshotId": "snap-1",
			"platform": map[string]string{"os": "linux", "arch": "arm64"}, "allocation": map[string]any{"mode": "pool", "poolRef": "p1"}},
		{"createdAt": "2026-01-02T03:04:05.000000Z", "expiresAt": "2026-01-02T03:04:05-00:00", "entrypoint": nil,
			"image": map[string]any{"uri": "plain:1"}, "metadata": map[string]string{}},
	}
	ids := make([]string, 205)
	fs := newFakeServer(t)
	fs.records = map[string]map[string]any{}
	for i := range ids {
		ids[i] = fmt.Sprintf("sbx-%03d", i)
		fs.records[ids[i]] = variants[i%len(variants)]
	}
	fs.ids = ids
	fs.paginate = true
	env := fs.env(t)
	all := env.Must("sandbox", "list", "--all", "-o", "json")
	var pages []string
	for page := 1; page <= 2; page++ {
		out := env.Must("sandbox", "list", "--page", fmt.Sprint(page), "--page-size", "200", "-o", "json")
		pages = append(pages, itemsText(t, out))
	}
	if got, want := itemsText(t, all), strings.Join(pages, ",\n"); got != want {
		t.Errorf("--all printed records unlike the pages:\n%s", firstDifference(got, want))
	}
	// Read by --jq, the records are what each page's are.
	var each string
	for page := 1; page <= 2; page++ {
		each += env.Must("sandbox", "list", "--page", fmt.Sprint(page), "--page-size", "200", "-o", "json", "--jq", ".items[]")
	}
	if got := env.Must("sandbox", "list", "--all", "-o", "json", "--jq", ".items[]"); got != each {
		t.Errorf("--all --jq read records unlike the pages':\n%s", firstDifference(got, each))
	}
	// Times as printed: the golden file is what osb printed before --all
	// wrote records itself.
	cmdtest.Golden(t, "list_all_pages_json", env.Run("sandbox", "list", "--all", "-o", "json").ExpectCode(t, 0).Combined())
}

// itemsText is the text of the items of a listing printed as JSON.
func itemsText(t *testing.T, out string) string {
	t.Helper()
	start, end := strings.Index(out, "\"items\": [\n"), strings.LastIndex(out, "\n  ],\n  \"pagination\"")
	if start < 0 || end < start {
		t.Fatalf("no items in\n%s", out)
	}
	return out[start+len("\"items\": [\n") : end]
}

// firstDifference shows where two texts part, with some context.
func firstDifference(got, want string) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	from := max(i-200, 0)
	return fmt.Sprintf("at byte %d\n--- got\n%s\n--- want\n%s", i, got[from:min(i+200, len(got))], want[from:min(i+200, len(want))])
}
