package client

import (
	"encoding/json"
	"reflect"
	"testing"
)

// plainSandbox is Sandbox without its decoder: what encoding/json makes of
// a record.
type plainSandbox Sandbox

// The one-pass decoder reads every field as encoding/json would, and keeps
// going where it would fail; a time that does not parse keeps its text.
func TestSandboxDecoding(t *testing.T) {
	records := []string{
		`{"id":"a","status":{"state":"Running","reason":"r","message":"m","lastTransitionAt":"2026-01-02T03:04:05.123456Z"},` +
			`"image":{"uri":"python:3.11","auth":{"username":"u","password":"p"}},"snapshotId":"snap","entrypoint":["tail","-f"],` +
			`"metadata":{"team":"ml","k/x":"v"},"extensions":{},"platform":{"os":"linux","arch":"amd64"},` +
			`"allocation":{"mode":"pool","poolRef":"p1","state":"Allocated"},"createdAt":"2026-01-02T03:04:05Z","expiresAt":"2026-01-02T04:04:05+02:00","extra":[1,{"x":null}]}`,
		`{"id":"b","status":{"state":"Mystery"},"entrypoint":[],"platform":null,"image":null}`,
		`{"id":"c\u00e9\"","status":{}}`,
		`{}`,
	}
	for _, rec := range records {
		var want plainSandbox
		if err := json.Unmarshal([]byte(rec), &want); err != nil {
			t.Fatal(err)
		}
		var got Sandbox
		if err := json.Unmarshal([]byte(rec), &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(Sandbox(want), got) {
			t.Errorf("%s:\ngot  %+v\nwant %+v", rec, got, want)
		}
		list, err := parseSandboxList([]byte(`{"items":[` + rec + `],"pagination":{"page":2,"pageSize":1,"totalItems":3,"totalPages":3,"hasNextPage":true}}`))
		if err != nil || len(list.Items) != 1 || !reflect.DeepEqual(list.Items[0], got) ||
			list.Pagination != (Pagination{Page: 2, PageSize: 1, TotalItems: 3, TotalPages: 3, HasNextPage: true}) {
			t.Errorf("as a page: %v %+v", err, list)
		}
	}
	var sb Sandbox
	if err := json.Unmarshal([]byte(`{"id":7,"createdAt":"yesterday","metadata":{"n":1},"entrypoint":"sh"}`), &sb); err != nil ||
		sb.ID != "" || sb.CreatedAt == nil || sb.CreatedAt.Text != "yesterday" || !sb.CreatedAt.T.IsZero() || len(sb.Metadata) != 0 || sb.Entrypoint != nil {
		t.Errorf("lenient: %v %+v", err, sb)
	}
	for _, bad := range []string{``, `null`, `[1]`, `{"items":`} {
		if _, err := parseSandboxList([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
