package sandbox

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/osb-dev/osb/internal/client"
)

// passSeeds are pages as servers send them (compact, keys in their own
// order) and pages that try the pass-through's edges: escapes, repeated
// keys, values of other kinds, times in every form, pages that are not
// listings.
var passSeeds = []string{
	`{"items":[{"id":"a6ef","image":{"uri":"bench"},"status":{"state":"Running","reason":"CONTAINER_RUNNING","message":"local sandbox","lastTransitionAt":"2026-12-02T15:29:40.024083Z"},"entrypoint":["tail","-f","/dev/null"],"expiresAt":"2026-12-02T15:39:40.024082Z","createdAt":"2026-12-02T15:29:40.024082Z"}],"pagination":{"page":1,"pageSize":200,"totalItems":1,"totalPages":1,"hasNextPage":false}}`,
	`{"pagination":{"page":2,"pageSize":3,"totalItems":9,"totalPages":3,"hasNextPage":true},"items":[
	  {"id":"x","status":{"state":"Paused","reason":null,"message":"é ✓ <b>&amp;</b> \u2028","lastTransitionAt":"2026-01-02T04:04:05.5+02:00"},"createdAt":"2026-12-01T11:04:47.271884161Z","expiresAt":"2026-01-02T03:04:05"},
	  {"id":"y","createdAt":"yesterday","expiresAt":"<soon> & later","status":null,"entrypoint":[],"metadata":{"z":"last","a":"first","ключ":"значение","n":1,"a":"again"},"extensions":{}},
	  {"id":"z","createdAt":"2024-02-29 23:59:59.000001Z","expiresAt":"2026-02-29T00:00:00Z","image":null,"snapshotId":"snap-1","platform":{"os":"linux","arch":"arm64","os":"darwin"},"allocation":{"mode":"pool","poolRef":"p1"}},
	  {"id":"w","createdAt":"2026-01-02T03:04:05.000000Z","expiresAt":"2026-01-02T03:04:05-00:00","entrypoint":null,"image":{"uri":"plain:1","auth":{"username":"u","password":"secret"}},"metadata":{}},
	  3, null, {"id":7,"status":{"state":""},"entrypoint":["a",2,null],"image":{"uri":1},"platform":"x","allocation":{},"metadata":"m"},
	  {"id":"dup","id":"dup2","status":{"state":"Running"},"status":"gone","image":{"uri":"a"},"image":3,"entrypoint":["a"],"entrypoint":{},"unknown":{"x":[1,-2.5e+3,true,false,null,"\n"]}}
	]}`,
	`{"items":[{"id":"esc\"aped","status":{"state":"Run\u006eing","message":"line\nbreak"}}],"pagination":{"page":1,"hasNextPage":false}}`,
	`{"items":[{"i\u0064":"key escaped"},{"id":"t","createdAt":"2026-01-02T03:04:05.123456","expiresAt":"2026-01-02T03:04:05.1234567Z"}]}`,
	`{"items":[],"pagination":{"page":1,"pageSize":200,"totalItems":0,"totalPages":0,"hasNextPage":false}}`,
	`{"items":[{"id":"a"}],"items":[],"pagination":{"page":"1"}}`,
	`{"items":[{"id":"a"}],"pagination":{"page":1.0,"hasNextPage":1}}`,
	`{"items":[{"id":"a"}],"pagination":{"page":01}}`,
	`{"items":[{"id":"a",}]}`,
	`{"items":[{"id":"a"}]} x`,
	`[{"id":"a"}]`,
	`{"items":{"id":"a"}}`,
	``,
	`  `,
	`{"items":[{"id":"a\u00"}]}`,
	"{\"items\":[{\"id\":\"bad \xff utf-8\",\"metadata\":{\"\xfe\":\"v\"}}]}",
	// A control byte inside a string, far enough in to be met a word at a time.
	"{\"items\":[{\"id\":\"a\",\"status\":{\"state\":\"Running\",\"message\":\"tab\there\"}}]}",
	"{\"items\":[{\"id\":\"a\",\"status\":{\"state\":\"Running\",\"message\":\"nul\x00here\"}}]}",
}

func passClient(t testing.TB) *client.Client {
	c, err := client.New(client.Options{Domain: "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// samePage fails when a page the pass-through takes prints otherwise than
// its decoded records do.
func samePage(t *testing.T, c *client.Client, raw []byte) (passed bool) {
	t.Helper()
	var pass, dec pageBuffer
	p, ok := pass.passThrough(raw)
	got := pass.page(p)
	want, err := decodedPage(c, raw, &dec)
	if !ok {
		return false
	}
	if err != nil {
		t.Fatalf("the pass-through took a page the decoding refuses (%v):\n%s", err, raw)
	}
	if got.Pagination != want.Pagination {
		t.Errorf("pagination %+v, decoded %+v\n%s", got.Pagination, want.Pagination, raw)
	}
	if len(got.Items) != len(want.Items) {
		t.Fatalf("%d records, decoded %d\n%s", len(got.Items), len(want.Items), raw)
	}
	for i := range got.Items {
		g, w := got.Items[i], want.Items[i]
		if g.ID != w.ID || !bytes.Equal(g.JSON, w.JSON) {
			t.Errorf("record %d:\n%s\n%s\ndecoded:\n%s\n%s\npage:\n%s", i, g.ID, g.JSON, w.ID, w.JSON, raw)
		}
	}
	return true
}

func TestPassPageMatchesDecoding(t *testing.T) {
	c := passClient(t)
	for i, seed := range append(passSeeds, string(benchPage())) {
		t.Run(fmt.Sprint(i), func(t *testing.T) { samePage(t, c, []byte(seed)) })
	}
}

// A page as osb server sends it is passed through, not decoded: the
// pass-through is what makes --all fast, so its quietly declining every
// page would be a regression no output shows.
func TestPassPageTakesPlainPages(t *testing.T) {
	c := passClient(t)
	for _, seed := range passSeeds[:2] {
		if !samePage(t, c, []byte(seed)) {
			t.Errorf("declined\n%s", seed)
		}
	}
	var b pageBuffer
	p, _ := b.passThrough([]byte(passSeeds[2]))
	if page := b.page(p); len(page.Items) != 1 || !strings.Contains(string(page.Items[0].JSON), `"message": "line\nbreak"`) {
		t.Errorf("a record with escapes, printed through its decoding: %+v", page)
	}
}

func FuzzPassPage(f *testing.F) {
	for _, s := range passSeeds {
		f.Add([]byte(s))
	}
	c := passClient(f)
	f.Fuzz(func(t *testing.T, raw []byte) { samePage(t, c, raw) })
}

// benchRecord is the record osb server gives a sandbox.
const benchRecord = `{"id":"%032x","image":{"uri":"bench"},"status":{"state":"Running","reason":"CONTAINER_RUNNING","message":"local sandbox, isolated by user, mount, pid, uts, ipc and network namespaces; image not pulled, host programs used","lastTransitionAt":"2026-12-02T15:29:40.024083Z"},"entrypoint":["tail","-f","/dev/null"],"expiresAt":"2026-12-02T15:39:40.024082Z","createdAt":"2026-12-02T15:29:40.024082Z"}`

// benchPage is a page of 200 such records, as bench/listing serves them.
func benchPage() []byte {
	var page bytes.Buffer
	page.WriteString(`{"items":[`)
	for i := range 200 {
		if i > 0 {
			page.WriteByte(',')
		}
		fmt.Fprintf(&page, benchRecord, i+1)
	}
	page.WriteString(`],"pagination":{"page":1,"pageSize":200,"totalItems":200,"totalPages":1,"hasNextPage":false}}`)
	return page.Bytes()
}

func BenchmarkPassPage(b *testing.B) {
	raw := benchPage()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		page, err := readPassPage(nil, raw)
		if err != nil {
			b.Fatal(err)
		}
		releasePage(page)
	}
}

func BenchmarkDecodedPage(b *testing.B) {
	raw, c := benchPage(), passClient(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		page, err := decodedPage(c, raw, pageBuffers.Get().(*pageBuffer))
		if err != nil {
			b.Fatal(err)
		}
		releasePage(page)
	}
}
