package client

import (
	"bytes"
	"fmt"

	"github.com/tidwall/gjson"
)

// Sandboxes are decoded with gjson, in one pass over each record: a listing
// of every sandbox reads thousands of them, and reflection-driven decoding
// was most of its time. The rules are encoding/json's, made lenient: unknown
// fields are ignored, a field of an unexpected type is treated as absent, and
// a time keeps the server's text even when it does not parse (see Time).

// UnmarshalJSON reads one sandbox record.
func (sb *Sandbox) UnmarshalJSON(b []byte) error {
	r := gjson.ParseBytes(b)
	if !r.IsObject() {
		return fmt.Errorf("a sandbox record is a JSON object, not %s", kindOf(r))
	}
	*sb = readSandbox(r)
	return nil
}

func kindOf(r gjson.Result) string {
	switch {
	case r.IsArray():
		return "an array"
	case r.Type == gjson.Null:
		return "null"
	}
	return "a " + r.Type.String()
}

func readSandbox(r gjson.Result) Sandbox {
	var sb Sandbox
	r.ForEach(func(key, v gjson.Result) bool {
		switch key.Str {
		case "id":
			sb.ID = str(v)
		case "status":
			sb.Status = readStatus(v)
		case "image":
			if v.IsObject() {
				img := &ImageSpec{URI: str(v.Get("uri"))}
				if a := v.Get("auth"); a.IsObject() {
					img.Auth = &ImageAuth{Username: str(a.Get("username")), Password: str(a.Get("password"))}
				}
				sb.Image = img
			}
		case "snapshotId":
			sb.SnapshotID = optStr(v)
		case "entrypoint":
			if v.IsArray() {
				sb.Entrypoint = []string{}
				v.ForEach(func(_, e gjson.Result) bool {
					sb.Entrypoint = append(sb.Entrypoint, str(e))
					return true
				})
			}
		case "metadata":
			sb.Metadata = strMap(v)
		case "extensions":
			sb.Extensions = strMap(v)
		case "platform":
			if v.IsObject() {
				sb.Platform = &Platform{OS: str(v.Get("os")), Arch: str(v.Get("arch"))}
			}
		case "allocation":
			if v.IsObject() {
				sb.Allocation = &Allocation{Mode: optStr(v.Get("mode")), PoolRef: optStr(v.Get("poolRef")), State: optStr(v.Get("state"))}
			}
		case "createdAt":
			sb.CreatedAt = optTime(v)
		case "expiresAt":
			sb.ExpiresAt = optTime(v)
		}
		return true
	})
	return sb
}

func readStatus(v gjson.Result) Status {
	var s Status
	if !v.IsObject() {
		return s
	}
	v.ForEach(func(key, f gjson.Result) bool {
		switch key.Str {
		case "state":
			s.State = str(f)
		case "reason":
			s.Reason = optStr(f)
		case "message":
			s.Message = optStr(f)
		case "lastTransitionAt":
			s.LastTransitionAt = optTime(f)
		}
		return true
	})
	return s
}

// str is a string field's value; anything else reads as "".
func str(v gjson.Result) string {
	if v.Type == gjson.String {
		return v.Str
	}
	return ""
}

func optStr(v gjson.Result) *string {
	if v.Type != gjson.String {
		return nil
	}
	s := v.Str
	return &s
}

// optTime keeps a time's text as the server sent it (see Time).
func optTime(v gjson.Result) *Time {
	if v.Type != gjson.String {
		return nil
	}
	t := ParseTime(v.Str)
	return &t
}

func strMap(v gjson.Result) map[string]string {
	if !v.IsObject() {
		return nil
	}
	m := map[string]string{}
	v.ForEach(func(k, e gjson.Result) bool {
		if e.Type == gjson.String {
			m[k.Str] = e.Str
		}
		return true
	})
	return m
}

// parseSandboxList reads one page of a sandbox listing.
func parseSandboxList(raw []byte) (*SandboxList, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil, fmt.Errorf("an empty body where a page of sandboxes was expected")
	}
	if !gjson.ValidBytes(raw) {
		return nil, fmt.Errorf("a body that is not JSON")
	}
	r := gjson.ParseBytes(raw)
	if !r.IsObject() {
		return nil, fmt.Errorf("%s where a page of sandboxes was expected", kindOf(r))
	}
	p := r.Get("pagination")
	list := &SandboxList{Items: make([]Sandbox, 0, min(max(p.Get("pageSize").Int(), 0), MaxPageSize))}
	items := r.Get("items")
	if items.IsArray() {
		items.ForEach(func(_, item gjson.Result) bool {
			if item.IsObject() {
				list.Items = append(list.Items, readSandbox(item))
			}
			return true
		})
	}
	list.Pagination = Pagination{Page: int(p.Get("page").Int()), PageSize: int(p.Get("pageSize").Int()),
		TotalItems: int(p.Get("totalItems").Int()), TotalPages: int(p.Get("totalPages").Int()), HasNextPage: p.Get("hasNextPage").Bool()}
	return list, nil
}
