package server

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

const maxPageSize = 200

func (s *Server) getSandbox(w http.ResponseWriter, r *http.Request) {
	rec := s.lookup(w, r.PathValue("id"))
	if rec == nil {
		return
	}
	s.mu.Lock()
	view := rec.view(true)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, view)
}

// deleteSandbox answers 204 once the processes are dead and the files gone.
func (s *Server) deleteSandbox(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	rec := s.remove(id)
	if rec == nil {
		writeError(w, http.StatusNotFound, codeNotFound, "Sandbox "+id+" not found.")
		return
	}
	if err := s.destroy(rec, "deleted"); err != nil {
		writeError(w, http.StatusInternalServerError, codeInternal, err.Error())
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) pauseSandbox(w http.ResponseWriter, r *http.Request) {
	s.transition(w, r.PathValue("id"), stateRunning, statePausing, statePaused, codeNotRunning,
		func(rec *record) error { return rec.sb.Pause() })
}

func (s *Server) resumeSandbox(w http.ResponseWriter, r *http.Request) {
	s.transition(w, r.PathValue("id"), statePaused, stateResuming, stateRunning, codeNotPaused,
		func(rec *record) error { return rec.sb.Resume() })
}

// transition moves a sandbox from -> via -> to around act, answering 202,
// or 409 with conflictCode when the sandbox is not in state from.
func (s *Server) transition(w http.ResponseWriter, id, from, via, to, conflictCode string, act func(*record) error) {
	s.mu.Lock()
	rec := s.records[id]
	if rec == nil {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, codeNotFound, "Sandbox "+id+" not found.")
		return
	}
	rec.noteExit()
	if rec.state != from {
		s.mu.Unlock()
		// The real server's words: clients show them as they are.
		writeError(w, http.StatusConflict, conflictCode,
			fmt.Sprintf("Sandbox is not in a %s state.", strings.ToLower(from)))
		return
	}
	rec.setState(via, "")
	s.mu.Unlock()
	err := act(rec)
	s.mu.Lock()
	if err != nil {
		rec.setState(from, "runtime_error")
	} else {
		rec.setState(to, "")
	}
	rec.noteTransition(to, err)
	s.mu.Unlock()
	if err != nil {
		writeError(w, http.StatusInternalServerError, codeInternal, err.Error())
		return
	}
	s.log.event("sandbox %s %s", id, strings.ToLower(to))
	w.WriteHeader(http.StatusAccepted)
}

func (s *Server) renewExpiration(w http.ResponseWriter, r *http.Request) {
	body, ok := readObject(w, r)
	if !ok {
		return
	}
	at, ok := parseExpiresAt(w, body)
	if !ok {
		return
	}
	id := r.PathValue("id")
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.records[id]
	switch {
	case rec == nil:
		writeError(w, http.StatusNotFound, codeNotFound, "Sandbox "+id+" not found.")
	case !at.After(time.Now()):
		writeError(w, http.StatusBadRequest, codeInvalidExpiration, "New expiration time must be in the future.")
	case rec.expiresAt == nil:
		writeError(w, http.StatusConflict, codeInvalidExpiration,
			"Sandbox "+id+" does not have automatic expiration enabled.") // the real server's words
	default:
		rec.expiresAt = &at
		rec.timer.Reset(time.Until(at))
		rec.addEvent("Renewed", "expires at "+formatTime(at))
		writeJSON(w, http.StatusOK, map[string]string{"expiresAt": formatTime(at)})
	}
}

// parseExpiresAt reads {"expiresAt": datetime}; a time without zone is UTC,
// as pydantic reads it.
func parseExpiresAt(w http.ResponseWriter, body map[string]any) (time.Time, bool) {
	loc := []any{"body", "expiresAt"}
	x, present := body["expiresAt"]
	if !present {
		writeDetails(w, []detail{missing(loc, body)})
		return time.Time{}, false
	}
	if s, ok := x.(string); ok {
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00"} {
			if t, err := time.Parse(layout, s); err == nil {
				return t.UTC(), true
			}
		}
	}
	writeDetails(w, []detail{typeErr(loc, "datetime_from_date_parsing", "Input should be a valid datetime", x)})
	return time.Time{}, false
}

// patchMetadata applies a JSON merge patch to the metadata.
func (s *Server) patchMetadata(w http.ResponseWriter, r *http.Request) {
	body, ok := readObject(w, r)
	if !ok {
		return
	}
	set := map[string]string{}
	var v fields
	for k, val := range body {
		switch x := val.(type) {
		case nil:
		case string:
			set[k] = x
		default:
			v.add(typeErr([]any{"body", k}, "string_type", "Input should be a valid string", x))
		}
	}
	if len(v.details) > 0 {
		writeDetails(w, v.details)
		return
	}
	if err := checkLabels(set); err != nil {
		writeError(w, http.StatusBadRequest, codeInvalidLabel, err.Error())
		return
	}
	rec := s.lookup(w, r.PathValue("id"))
	if rec == nil {
		return
	}
	s.mu.Lock()
	for k, val := range body {
		if val == nil {
			delete(rec.metadata, k)
		} else {
			rec.metadata[k] = set[k]
		}
	}
	view := rec.view(true)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, view)
}

// listQuery is a validated list request.
type listQuery struct {
	states   map[string]bool // lower-cased; empty means any
	metadata map[string]string
	page     int
	pageSize int
}

func (s *Server) listSandboxes(w http.ResponseWriter, r *http.Request) {
	q, ok := parseListQuery(w, r.URL.Query())
	if !ok {
		return
	}
	s.mu.Lock()
	var match []*record
	for _, rec := range s.records {
		rec.noteExit()
		if q.matches(rec) {
			match = append(match, rec)
		}
	}
	slices.SortFunc(match, func(a, b *record) int { return cmp.Compare(a.seq, b.seq) })
	views := make([]sandboxJSON, len(match))
	for i, rec := range match {
		views[i] = rec.view(true)
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, page(views, q))
}

// page cuts one page out of items, with the pagination block of every
// list response.
func page[T any](items []T, q listQuery) map[string]any {
	total := len(items)
	start := min((q.page-1)*q.pageSize, total)
	end := min(start+q.pageSize, total)
	pages := (total + q.pageSize - 1) / q.pageSize
	out := append(make([]T, 0, end-start), items[start:end]...)
	return map[string]any{
		"items": out,
		"pagination": map[string]any{"page": q.page, "pageSize": q.pageSize, "totalItems": total,
			"totalPages": pages, "hasNextPage": q.page < pages},
	}
}

// matches applies the filters; call with s.mu held.
func (q listQuery) matches(rec *record) bool {
	return q.stateMatches(rec.state) && labelsMatch(rec.metadata, q.metadata)
}

// stateMatches applies the state filter, which ignores case.
func (q listQuery) stateMatches(state string) bool {
	return len(q.states) == 0 || q.states[strings.ToLower(state)]
}

// labelsMatch reports whether have holds every key=value of want.
func labelsMatch(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func parseListQuery(w http.ResponseWriter, values url.Values) (listQuery, bool) {
	q := listQuery{states: map[string]bool{}}
	var v fields
	q.page = v.queryInt(values, "page", 1, 1, 0)
	q.pageSize = v.queryInt(values, "pageSize", 20, 1, maxPageSize)
	if len(v.details) > 0 {
		writeDetails(w, v.details)
		return q, false
	}
	for _, st := range values["state"] {
		q.states[strings.ToLower(st)] = true
	}
	if raw := values.Get("metadata"); raw != "" {
		m, err := parseMetadataFilter(raw)
		if err != nil {
			writeError(w, http.StatusBadRequest, codeInvalidMetaFormat, err.Error())
			return q, false
		}
		q.metadata = m
	}
	return q, true
}

// queryInt reads an integer query parameter with bounds (max 0 = none).
func (v *fields) queryInt(values url.Values, name string, def, lo, hi int) int {
	raw, present := values[name]
	if !present {
		return def
	}
	loc := []any{"query", name}
	n, err := strconv.Atoi(strings.TrimSpace(raw[len(raw)-1]))
	switch {
	case err != nil:
		v.add(typeErr(loc, "int_parsing", "Input should be a valid integer, unable to parse string as an integer", raw[len(raw)-1]))
	case n < lo:
		v.add(detail{Type: "greater_than_equal", Loc: loc, Input: raw[len(raw)-1],
			Msg: "Input should be greater than or equal to " + strconv.Itoa(lo), Ctx: map[string]any{"ge": lo}})
	case hi > 0 && n > hi:
		v.add(detail{Type: "less_than_equal", Loc: loc, Input: raw[len(raw)-1],
			Msg: "Input should be less than or equal to " + strconv.Itoa(hi), Ctx: map[string]any{"le": hi}})
	}
	return n
}

// parseMetadataFilter decodes the metadata query value, itself a
// form-encoded "k=v&k2=v2" string, strictly: every field needs a '='.
func parseMetadataFilter(raw string) (map[string]string, error) {
	out := map[string]string{}
	for _, field := range strings.Split(raw, "&") {
		k, v, ok := strings.Cut(field, "=")
		if !ok {
			return nil, fmt.Errorf("Invalid metadata format %q: expected key=value pairs joined by '&'.", raw)
		}
		key, err1 := url.QueryUnescape(k)
		val, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil || key == "" {
			return nil, fmt.Errorf("Invalid metadata format %q: bad encoding of %q.", raw, field)
		}
		out[key] = val
	}
	return out, nil
}
