package sandbox

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/jsontext"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/output"
)

// `sandbox list --all -o json` prints each page's records straight from
// the bytes the server sent: one pass over the page checks it is JSON (as
// strictly as gjson.Valid) and notes where each field's text is, and the
// record is written in its view's layout with those texts copied in. No
// record is decoded into a value and encoded again: that was most of the
// time of a listing of every sandbox (docs/decisions/list-pass-through.md).
//
// The pass takes only what it can copy unchanged: a record with a key or a
// printed text holding an escape goes through client.Sandbox and its view
// instead, and so does a page that is not plainly a listing (not JSON, a
// repeated key, pagination that is not whole numbers), whose errors are
// then the ones client.ReadSandboxList gives. The output is the same
// either way (FuzzPassPage).

// passRecord is one record of a page, printed.
type passRecord struct {
	ID   string
	JSON output.Indented
	buf  *pageBuffer // what JSON is in, reused once the page is written
}

type passPage = client.Page[passRecord]

// pageBuffer holds a page's printed records until they are written: a
// walk over every page reuses a few rather than leaving a page's worth of
// garbage each time.
type pageBuffer struct {
	out, ids     []byte
	ends, idEnds []int // where each record ends in out, its id in ids
	items        []passRecord
	run          output.IndentedRun // the records, as streamAll writes them
	sb           client.Sandbox
}

var pageBuffers = sync.Pool{New: func() any { return new(pageBuffer) }}

func (b *pageBuffer) reset() {
	b.out, b.ids, b.ends, b.idEnds = append(b.out[:0], runRoom...), b.ids[:0], b.ends[:0], b.idEnds[:0]
}

// runRoom starts out: the room the page's run leaves for the separator
// before it (see output.IndentedRun).
const runRoom = output.ItemSep

// begin starts a record in out: the separator, after the first.
func (b *pageBuffer) begin() {
	if len(b.ends) > 0 {
		b.out = append(b.out, output.ItemSep...)
	}
}

// mark ends the record just written to out.
func (b *pageBuffer) mark(id []byte) {
	b.ids = append(b.ids, id...)
	b.ends, b.idEnds = append(b.ends, len(b.out)), append(b.idEnds, len(b.ids))
}

// decoded writes a decoded record as its view prints.
func (b *pageBuffer) decoded(sb *client.Sandbox) error {
	b.begin()
	var err error
	b.out, err = output.AppendItem(b.out, ops.NewSandboxView(sb))
	b.mark([]byte(sb.ID))
	return err
}

// page is the records written, which stay in b until releasePage.
func (b *pageBuffer) page(p client.Pagination) *passPage {
	b.items = slices.Grow(b.items[:0], len(b.ends))[:len(b.ends)]
	page := &passPage{Items: b.items, Pagination: p}
	if len(b.ends) == 0 {
		pageBuffers.Put(b)
		return page
	}
	ids := string(b.ids)
	start, idStart := len(runRoom), 0
	for i, end := range b.ends {
		page.Items[i] = passRecord{ID: ids[idStart:b.idEnds[i]], JSON: b.out[start:end:end], buf: b}
		start, idStart = end+len(output.ItemSep), b.idEnds[i]
	}
	b.run = output.IndentedRun{JSON: b.out, Ends: b.ends, Room: len(runRoom)}
	return page
}

// pageRun is a page's records as one run, written at once.
func pageRun(page *passPage) *output.IndentedRun {
	if len(page.Items) == 0 {
		return &output.IndentedRun{}
	}
	return &page.Items[0].buf.run
}

// releasePage hands a written page's buffer back.
func releasePage(page *passPage) {
	if len(page.Items) > 0 {
		pageBuffers.Put(page.Items[0].buf)
	}
}

// readPassPage prints the records of one page of a listing.
func readPassPage(c *client.Client, raw []byte) (*passPage, error) {
	b := pageBuffers.Get().(*pageBuffer)
	if p, ok := b.passThrough(raw); ok {
		return b.page(p), nil
	}
	return decodedPage(c, raw, b)
}

// decodedPage prints a page's records from their decoded values.
func decodedPage(c *client.Client, raw []byte, b *pageBuffer) (*passPage, error) {
	b.reset()
	list, err := c.ReadSandboxList(raw)
	if err != nil {
		pageBuffers.Put(b)
		return nil, err
	}
	for i := range list.Items {
		if err := b.decoded(&list.Items[i]); err != nil {
			pageBuffers.Put(b)
			return nil, err
		}
	}
	return b.page(list.Pagination), nil
}

// passThrough prints a page from its bytes into b; ok is false when the
// page is not one it takes.
func (b *pageBuffer) passThrough(raw []byte) (p client.Pagination, ok bool) {
	if need := 2 * len(raw); cap(b.out) < need {
		// About what the records need printed, so that out seldom grows.
		b.out = make([]byte, 0, need)
	}
	b.reset()
	s := newScan(raw)
	var seenItems, seenPagination bool
	if !s.open('{') {
		return p, false
	}
	for n := 0; s.more('}', &n); {
		key, esc := s.key()
		switch {
		case esc:
			return p, false
		case string(key.s) == "items":
			if seenItems {
				return p, false
			}
			seenItems = true
			s.items(b)
		case string(key.s) == "pagination":
			if seenPagination {
				return p, false
			}
			seenPagination = true
			p, s.ok = s.pagination()
		default:
			s.skip()
		}
	}
	s.ws()
	return p, s.ok && s.i == len(s.b)
}

// items prints the records of the items array; its other elements are
// skipped, as the decoded listing skips them.
func (s *scan) items(b *pageBuffer) {
	if s.peek() != '[' {
		s.skip()
		return
	}
	s.i++
	for n := 0; s.more(']', &n); {
		if s.peek() != '{' {
			s.skip()
			continue
		}
		start, mark := s.i, len(b.out)
		var r wireRecord
		s.declined = false
		s.record(&r)
		if !s.ok {
			return
		}
		if !s.declined {
			b.begin()
			b.out = r.print(b.out, s)
			b.mark(r.id.s)
			continue
		}
		b.out = b.out[:mark]
		if err := b.sb.UnmarshalJSON(s.b[start:s.i]); err != nil || b.decoded(&b.sb) != nil {
			s.ok = false
			return
		}
	}
}

// pagination reads the page's pagination: whole numbers and booleans, or
// null for zero and false.
func (s *scan) pagination() (p client.Pagination, ok bool) {
	switch s.peek() {
	case 'n':
		s.skip()
		return p, s.ok
	case '{':
	default:
		return p, false
	}
	s.i++
	var seen [5]bool
	fields := [5]string{"page", "pageSize", "totalItems", "totalPages", "hasNextPage"}
	ints := [4]*int{&p.Page, &p.PageSize, &p.TotalItems, &p.TotalPages}
	for n := 0; s.more('}', &n); {
		key, esc := s.key()
		if esc {
			return p, false
		}
		f := slices.Index(fields[:], string(key.s))
		if f < 0 {
			s.skip()
			continue
		}
		if seen[f] {
			return p, false
		}
		seen[f] = true
		if f == 4 {
			if p.HasNextPage, ok = s.boolean(); !ok {
				return p, false
			}
		} else if *ints[f], ok = s.whole(); !ok {
			return p, false
		}
	}
	return p, s.ok
}

// whole reads a whole number of at most 15 digits, or null as 0.
func (s *scan) whole() (int, bool) {
	if s.peek() == 'n' {
		s.skip()
		return 0, s.ok
	}
	n, digits := 0, 0
	for ; s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9'; s.i++ {
		n = n*10 + int(s.b[s.i]-'0')
		digits++
	}
	if digits == 0 || digits > 15 || (digits > 1 && n < pow10(digits-1)) {
		return 0, false
	}
	if s.i < len(s.b) && strings.IndexByte(".eE", s.b[s.i]) >= 0 {
		return 0, false
	}
	return n, true
}

func pow10(n int) int {
	p := 1
	for range n {
		p *= 10
	}
	return p
}

// boolean reads true or false, or null as false.
func (s *scan) boolean() (bool, bool) {
	switch s.peek() {
	case 't':
		return s.word("true"), s.ok
	case 'f':
		return !s.word("false"), s.ok
	case 'n':
		return !s.word("null"), s.ok
	}
	return false, false
}

// text is a string value's text as sent, without its quotes; set is false
// for a value that is absent or not a string.
type text struct {
	s     []byte
	set   bool
	ascii bool // no byte outside ASCII, so the text is printed as it is
}

type pair struct{ key, value text }

// wireRecord is where each field of a record is in the page. Fields the
// decoded record reads with gjson's Get take the first of a repeated key,
// the others the last, as the decoding does.
type wireRecord struct {
	id, snapshot, created, expires text

	state, reason, message, transition text

	image, auth, platform, allocation bool
	uri, username, os, arch           text
	mode, poolRef, allocState         text

	entrypoint           bool
	metadata, extensions bool
}

// record reads the record object at s.i.
func (s *scan) record(r *wireRecord) {
	s.i++
	s.entry = s.entry[:0]
	s.meta, s.ext = s.meta[:0], s.ext[:0]
	for n := 0; s.more('}', &n); {
		key, esc := s.key()
		if esc {
			s.declined = true
			s.skip()
			continue
		}
		switch string(key.s) {
		case "id":
			r.id = s.text()
		case "status":
			r.state, r.reason, r.message, r.transition = text{}, text{}, text{}, text{}
			s.status(r)
		case "image":
			s.imageOf(r)
		case "snapshotId":
			r.snapshot = s.text()
		case "entrypoint":
			s.list(r)
		case "metadata":
			r.metadata = s.strMap(&s.meta)
		case "extensions":
			r.extensions = s.strMap(&s.ext)
		case "platform":
			if s.peek() != '{' {
				s.skip()
				continue
			}
			r.platform = true
			r.os, r.arch = text{}, text{}
			s.firsts([]named{{"os", &r.os}, {"arch", &r.arch}})
		case "allocation":
			if s.peek() != '{' {
				s.skip()
				continue
			}
			r.allocation = true
			r.mode, r.poolRef, r.allocState = text{}, text{}, text{}
			s.firsts([]named{{"mode", &r.mode}, {"poolRef", &r.poolRef}, {"state", &r.allocState}})
		case "createdAt":
			r.created = s.text()
		case "expiresAt":
			r.expires = s.text()
		default:
			s.skip()
		}
	}
}

type named struct {
	key string
	t   *text
}

// status reads a status object, the last of a repeated key winning.
func (s *scan) status(r *wireRecord) {
	if s.peek() != '{' {
		s.skip()
		return
	}
	s.i++
	for n := 0; s.more('}', &n); {
		key, esc := s.key()
		if esc {
			s.declined = true
			s.skip()
			continue
		}
		switch string(key.s) {
		case "state":
			r.state = s.text()
		case "reason":
			r.reason = s.text()
		case "message":
			r.message = s.text()
		case "lastTransitionAt":
			r.transition = s.text()
		default:
			s.skip()
		}
	}
}

// imageOf reads an image object; anything else leaves the record's image
// as it was, as the decoding does.
func (s *scan) imageOf(r *wireRecord) {
	if s.peek() != '{' {
		s.skip()
		return
	}
	s.i++
	r.image, r.auth, r.uri, r.username = true, false, text{}, text{}
	var seenURI, seenAuth bool
	for n := 0; s.more('}', &n); {
		key, esc := s.key()
		switch {
		case esc:
			s.declined = true
			s.skip()
		case string(key.s) == "uri" && !seenURI:
			seenURI = true
			r.uri = s.text()
		case string(key.s) == "auth" && !seenAuth:
			seenAuth = true
			if s.peek() != '{' {
				s.skip()
				continue
			}
			r.auth = true
			s.firsts([]named{{"username", &r.username}})
		default:
			s.skip()
		}
	}
}

// firsts reads an object at s.i into the named texts, the first of a
// repeated key winning (gjson's Get).
func (s *scan) firsts(fields []named) {
	s.i++
	var seen [3]bool
	for n := 0; s.more('}', &n); {
		key, esc := s.key()
		if esc {
			s.declined = true
			s.skip()
			continue
		}
		f := slices.IndexFunc(fields, func(f named) bool { return f.key == string(key.s) })
		if f < 0 || seen[f] {
			s.skip()
			continue
		}
		seen[f] = true
		*fields[f].t = s.text()
	}
}

// list reads the entrypoint: an array's elements, each a string or ""; a
// value of another kind leaves the entrypoint as it was.
func (s *scan) list(r *wireRecord) {
	if s.peek() != '[' {
		s.skip()
		return
	}
	s.i++
	r.entrypoint = true
	s.entry = s.entry[:0]
	for n := 0; s.more(']', &n); {
		s.entry = append(s.entry, s.text())
	}
}

// strMap reads a map of strings into *m, which it reports present; values
// that are not strings are left out, and anything but an object is no map.
func (s *scan) strMap(m *[]pair) bool {
	*m = (*m)[:0]
	if s.peek() != '{' {
		s.skip()
		return false
	}
	s.i++
	for n := 0; s.more('}', &n); {
		key, esc := s.key()
		if esc {
			s.declined = true
		}
		if v := s.text(); v.set {
			*m = append(*m, pair{key: key, value: v})
		}
	}
	return true
}

// print writes the record as its view prints (see sandboxJSON).
func (r *wireRecord) print(out []byte, s *scan) []byte {
	out = append(out, "{\n      \"id\": "...)
	out = r.id.appendStr(out)
	out = append(out, ",\n      \"status\": {\n        \"state\": "...)
	if len(r.state.s) == 0 {
		// The official SDK's reading of a missing state (NewSandboxView).
		out = append(out, `"Unknown"`...)
	} else {
		out = r.state.appendStr(out)
	}
	out = append(out, ",\n        \"reason\": "...)
	out = r.reason.appendOpt(out)
	out = append(out, ",\n        \"message\": "...)
	out = r.message.appendOpt(out)
	out = append(out, ",\n        \"last_transition_at\": "...)
	out = r.transition.appendTime(out)
	out = append(out, "\n      },\n      \"entrypoint\": "...)
	out = appendList(out, r.entrypoint, s.entry)
	out = append(out, ",\n      \"expires_at\": "...)
	out = r.expires.appendTime(out)
	out = append(out, ",\n      \"created_at\": "...)
	out = r.created.appendTime(out)
	out = append(out, ",\n      \"image\": "...)
	if r.image {
		out = append(out, "{\n        \"image\": "...)
		out = r.uri.appendStr(out)
		out = append(out, ",\n        \"auth\": "...)
		if r.auth {
			out = append(out, "{\n          \"username\": "...)
			out = r.username.appendStr(out)
			out = append(out, ",\n          \"password\": \""+ops.MaskedPassword+"\"\n        }"...)
		} else {
			out = append(out, "null"...)
		}
		out = append(out, "\n      }"...)
	} else {
		out = append(out, "null"...)
	}
	out = append(out, ",\n      \"snapshot_id\": "...)
	out = r.snapshot.appendOpt(out)
	out = append(out, ",\n      \"platform\": "...)
	if r.platform {
		out = append(out, "{\n        \"os\": "...)
		out = r.os.appendStr(out)
		out = append(out, ",\n        \"arch\": "...)
		out = r.arch.appendStr(out)
		out = append(out, "\n      }"...)
	} else {
		out = append(out, "null"...)
	}
	out = append(out, ",\n      \"allocation\": "...)
	if r.allocation {
		out = append(out, "{\n        \"mode\": "...)
		out = r.mode.appendOpt(out)
		out = append(out, ",\n        \"pool_ref\": "...)
		out = r.poolRef.appendOpt(out)
		out = append(out, ",\n        \"state\": "...)
		out = r.allocState.appendOpt(out)
		out = append(out, "\n      }"...)
	} else {
		out = append(out, "null"...)
	}
	out = append(out, ",\n      \"metadata\": "...)
	out = appendMap(out, r.metadata, s.meta)
	out = append(out, ",\n      \"extensions\": "...)
	out = appendMap(out, r.extensions, s.ext)
	return append(out, "\n    }"...)
}

// appendStr writes the text as a JSON string, "" when unset.
func (t text) appendStr(out []byte) []byte {
	out = append(out, '"')
	if t.ascii {
		out = append(out, t.s...)
	} else {
		out, _ = jsontext.Append(out, t.s, false)
	}
	return append(out, '"')
}

// appendOpt writes the text as a JSON string, null when unset.
func (t text) appendOpt(out []byte) []byte {
	if !t.set {
		return append(out, "null"...)
	}
	return t.appendStr(out)
}

// appendTime writes a time as client.Time prints it (see writeTime),
// copying the text when it is already in the printed form.
func (t text) appendTime(out []byte) []byte {
	switch {
	case !t.set:
		return append(out, "null"...)
	case printedTime(t.s):
		return t.appendStr(out)
	}
	printed := client.ParseTime(string(t.s)).String()
	if strings.ContainsAny(printed, "<>&") {
		b, _ := json.Marshal(printed)
		return append(out, b...)
	}
	out, _ = jsontext.Append(append(out, '"'), []byte(printed), false)
	return append(out, '"')
}

// printedTime reports a text already in the form client.Time prints:
// YYYY-MM-DDTHH:MM:SS, then six digits of fraction that are not all zero
// or none, then Z or nothing. Such a text prints as it is whether it is a
// time or not (a date out of range is printed as sent).
func printedTime(s []byte) bool {
	if len(s) < 19 || !dateWord.fits(s[0:8]) || !clockWord.fits(s[8:16]) || s[16] != ':' || !digit(s[17]) || !digit(s[18]) {
		return false
	}
	switch rest := s[19:]; {
	case len(rest) == 0 || len(rest) == 1 && rest[0] == 'Z':
		return true
	case len(rest) == 8:
		return fractionZWord.fits(rest) && string(rest[1:7]) != "000000"
	case len(rest) == 7:
		var w [8]byte
		copy(w[:], rest)
		w[7] = 'Z'
		return fractionZWord.fits(w[:]) && string(rest[1:7]) != "000000"
	}
	return false
}

func digit(c byte) bool { return '0' <= c && c <= '9' }

// A wordPattern tests 8 bytes at once against a pattern in which '0'
// stands for any digit and any other byte for itself: each byte XORed with
// the pattern's must be at most 9 for a digit, 0 otherwise, which adding
// 0x76 or 0x7f to its low 7 bits shows in the high bit.
type wordPattern struct{ xor, add uint64 }

var (
	dateWord      = newWordPattern("0000-00-")
	clockWord     = newWordPattern("00T00:00")
	fractionZWord = newWordPattern(".000000Z")
)

func newWordPattern(p string) wordPattern {
	var w wordPattern
	for i := range 8 {
		w.xor |= uint64(p[i]) << (8 * i)
		add := uint64(0x7f)
		if p[i] == '0' {
			add = 0x76
		}
		w.add |= add << (8 * i)
	}
	return w
}

func (w wordPattern) fits(b []byte) bool {
	v := binary.LittleEndian.Uint64(b) ^ w.xor
	return (((v&^highBits)+w.add)|v)&highBits == 0
}

// appendList writes a list of strings as the view does, null when absent.
func appendList(out []byte, present bool, list []text) []byte {
	switch {
	case !present:
		return append(out, "null"...)
	case len(list) == 0:
		return append(out, "[]"...)
	}
	for i, t := range list {
		if i == 0 {
			out = append(out, "[\n        "...)
		} else {
			out = append(out, ",\n        "...)
		}
		out = t.appendStr(out)
	}
	return append(out, "\n      ]"...)
}

// appendMap writes a map of strings as JSON writes a Go map: keys sorted,
// the last of a repeated key winning; null when absent.
func appendMap(out []byte, present bool, m []pair) []byte {
	switch {
	case !present:
		return append(out, "null"...)
	case len(m) == 0:
		return append(out, "{}"...)
	}
	slices.SortStableFunc(m, func(a, b pair) int { return bytes.Compare(a.key.s, b.key.s) })
	first := true
	for i, p := range m {
		if i+1 < len(m) && bytes.Equal(p.key.s, m[i+1].key.s) {
			continue
		}
		if first {
			out = append(out, "{\n        "...)
			first = false
		} else {
			out = append(out, ",\n        "...)
		}
		out = p.key.appendStr(out)
		out = append(out, ": "...)
		out = p.value.appendStr(out)
	}
	return append(out, "\n      }"...)
}
