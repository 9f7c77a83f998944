package server

import (
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Diagnostics. The stable API (a `scope` query parameter) answers a JSON
// descriptor with the text inline: logs are the entrypoint's own output
// (scope container), events are the lifecycle events the server recorded
// for the sandbox (scope runtime); `all` gathers what there is. Without
// `scope` the legacy plain-text routes answer, as on the real server, with
// `Deprecation: true` on logs and events.

const codeScopeUnsupported = "DIAGNOSTICS_SCOPE_UNSUPPORTED"

const (
	maxEvents  = 1000    // events kept per sandbox, oldest dropped first
	maxInline  = 1 << 20 // bytes of log text a descriptor carries inline
	maxLogTail = 8 << 20 // bytes read from the end of the log for line tails
	textPlain  = "text/plain; charset=utf-8"
)

// diagnosticScopes are the scopes each kind supports here.
var diagnosticScopes = map[string][]string{
	"logs":   {"container", "all"},
	"events": {"runtime", "all"},
}

// event is one lifecycle event of a sandbox.
type event struct {
	at      time.Time
	reason  string
	message string
}

func (e event) line() string {
	if e.message == "" {
		return formatTime(e.at) + " " + e.reason
	}
	return formatTime(e.at) + " " + e.reason + ": " + e.message
}

// addEvent appends to the sandbox's history; call with Server.mu held.
func (rec *record) addEvent(reason, message string) {
	rec.events = append(rec.events, event{at: time.Now(), reason: reason, message: message})
	if n := len(rec.events); n > maxEvents {
		rec.events = append(rec.events[:0:0], rec.events[n-maxEvents:]...)
	}
}

// noteEvent records an event for a sandbox that may be gone already.
func (s *Server) noteEvent(id, reason, message string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec := s.records[id]; rec != nil {
		rec.addEvent(reason, message)
	}
}

// noteCreated records where a new sandbox came from and what it runs; call
// with Server.mu held.
func (rec *record) noteCreated(req createRequest) {
	switch {
	case req.templateID != "":
		rec.addEvent("Created", fmt.Sprintf("from template %s (image %s)", req.templateID, req.imageURI))
	case req.snapshotID != "":
		rec.addEvent("Created", "from snapshot "+req.snapshotID)
	default:
		rec.addEvent("Created", "from image "+req.imageURI)
	}
	rec.addEvent("Started", "entrypoint "+quoteArgs(rec.entrypoint))
	if rec.lowered != "" {
		rec.addEvent("LimitLowered", rec.lowered)
	}
}

// transitionEvents names the events of a pause or resume: [success, failure].
var transitionEvents = map[string][2]string{
	statePaused:  {"Paused", "PauseFailed"},
	stateRunning: {"Resumed", "ResumeFailed"},
}

// noteTransition records the outcome of a pause or resume; call with
// Server.mu held.
func (rec *record) noteTransition(to string, err error) {
	names := transitionEvents[to]
	if err != nil {
		rec.addEvent(names[1], err.Error())
		return
	}
	rec.addEvent(names[0], "")
}

// quoteArgs shows an argv as a shell would need it typed.
func quoteArgs(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// diagnosticJSON is the DiagnosticContentResponse descriptor (always inline here).
type diagnosticJSON struct {
	SandboxID     string   `json:"sandboxId"`
	Kind          string   `json:"kind"`
	Scope         string   `json:"scope"`
	Delivery      string   `json:"delivery"`
	ContentType   string   `json:"contentType"`
	Content       string   `json:"content"`
	ContentLength int      `json:"contentLength"`
	Truncated     bool     `json:"truncated"`
	Warnings      []string `json:"warnings,omitempty"`
}

func (s *Server) diagnosticLogs(w http.ResponseWriter, r *http.Request) {
	if !r.URL.Query().Has("scope") {
		s.legacyLogs(w, r)
		return
	}
	s.scopedDiagnostic(w, r, "logs")
}

func (s *Server) diagnosticEvents(w http.ResponseWriter, r *http.Request) {
	if !r.URL.Query().Has("scope") {
		s.legacyEvents(w, r)
		return
	}
	s.scopedDiagnostic(w, r, "events")
}

func (s *Server) scopedDiagnostic(w http.ResponseWriter, r *http.Request, kind string) {
	rec := s.lookup(w, r.PathValue("id"))
	if rec == nil {
		return
	}
	scope := r.URL.Query().Get("scope")
	d := diagnosticJSON{SandboxID: rec.id, Kind: kind, Scope: scope, Delivery: "inline", ContentType: textPlain}
	switch kind + "/" + scope {
	case "logs/container":
		d.Content, d.Truncated, d.Warnings = containerLog(rec)
	case "logs/all":
		logText, truncated, warnings := containerLog(rec)
		d.Content = "== container output ==\n" + withNewline(logText) + "== lifecycle events ==\n" + s.eventText(rec, 0)
		d.Truncated, d.Warnings = truncated, warnings
	case "events/runtime":
		d.Content = s.eventText(rec, 0)
	case "events/all":
		d.Content = s.eventText(rec, 0)
		d.Warnings = []string{"The current backend only contributes runtime events to the all scope."}
	default:
		// The real server's words, which clients show as they are.
		writeError(w, http.StatusBadRequest, codeScopeUnsupported, fmt.Sprintf("Unsupported %s diagnostics scope '%s'. Supported scopes: %s.",
			kind, scope, strings.Join(diagnosticScopes[kind], ", ")))
		return
	}
	d.ContentLength = len(d.Content)
	writeJSON(w, http.StatusOK, d)
}

// containerLog is the entrypoint's output, its last maxInline bytes (from a
// line start) when longer.
func containerLog(rec *record) (text string, truncated bool, warnings []string) {
	data, size, err := readTail(rec.sb.LogPath(), maxInline)
	if err != nil {
		return "", false, []string{"container output is unavailable: " + err.Error()}
	}
	if int64(len(data)) < size {
		truncated = true
		warnings = []string{fmt.Sprintf("showing the last %d of %d bytes of container output", len(data), size)}
	}
	return string(data), truncated, warnings
}

// readTail reads at most limit bytes from the end of a file, starting at a
// line when it had to skip some. A missing file reads as empty.
func readTail(path string, limit int64) ([]byte, int64, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	size := fi.Size()
	start := max(size-limit, 0)
	data, err := io.ReadAll(io.NewSectionReader(f, start, size-start))
	if err != nil {
		return nil, 0, err
	}
	if start > 0 {
		if i := strings.IndexByte(string(data), '\n'); i >= 0 {
			data = data[i+1:]
		}
	}
	return data, size, nil
}

// eventText renders a sandbox's events as the real server's Docker runtime
// does (a container's id, status, start and end, its exit code when not 0),
// then each other event the server recorded (pauses, renewals, snapshots),
// the last limit of them (0: all).
func (s *Server) eventText(rec *record, limit int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec.noteExit()
	var b strings.Builder
	fmt.Fprintf(&b, "Container:  %s (sandbox-%s)\n", rec.id[:min(12, len(rec.id))], rec.id)
	fmt.Fprintf(&b, "Status:     %s\n", runtimeStatus(rec.state))
	fmt.Fprintf(&b, "Created:    %s\n", formatTime(rec.createdAt))
	fmt.Fprintf(&b, "Started:    %s\n", formatTime(rec.createdAt))
	if rec.exitCode != nil {
		fmt.Fprintf(&b, "Finished:   %s\n", formatTime(rec.changedAt))
		if *rec.exitCode != 0 {
			fmt.Fprintf(&b, "Event:      Exited with code %d\n", *rec.exitCode)
		}
	}
	var others []event
	for _, e := range rec.events {
		if e.reason != "Created" && e.reason != "Started" && e.reason != "Exited" {
			others = append(others, e)
		}
	}
	if limit > 0 && len(others) > limit {
		others = others[len(others)-limit:]
	}
	for _, e := range others {
		b.WriteString("Event:      " + e.line() + "\n")
	}
	return b.String()
}

// runtimeStatus is a state as a container runtime words it.
func runtimeStatus(state string) string {
	switch state {
	case stateRunning, statePausing:
		return "running"
	case statePaused, stateResuming:
		return "paused"
	case stateStopping:
		return "removing"
	}
	return "exited"
}

func withNewline(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// legacyLogs is GET …/diagnostics/logs without scope: the last `tail` lines
// of the entrypoint's output. Its lines carry no times, so `since` works on
// the whole output: nothing when it was last written before the window.
func (s *Server) legacyLogs(w http.ResponseWriter, r *http.Request) {
	values := r.URL.Query()
	var v fields
	tail := v.queryInt(values, "tail", 100, 1, 10000)
	if len(v.details) > 0 {
		writeDetails(w, v.details)
		return
	}
	var since time.Duration
	if raw := values.Get("since"); raw != "" {
		d, err := parseSince(raw)
		if err != nil {
			writeError(w, http.StatusBadRequest, codeInvalidParameter, err.Error())
			return
		}
		since = d
	}
	rec := s.lookup(w, r.PathValue("id"))
	if rec == nil {
		return
	}
	writeText(w, logLines(rec, tail, since), true)
}

// parseSince reads 10m, 1h30m, 90s or a number of seconds.
func parseSince(raw string) (time.Duration, error) {
	if d, err := time.ParseDuration(raw); err == nil && d >= 0 {
		return d, nil
	}
	if secs, err := strconv.ParseUint(raw, 10, 32); err == nil {
		return time.Duration(secs) * time.Second, nil
	}
	return 0, fmt.Errorf("Invalid since value %q: use a duration like 10m, 1h or 90s.", raw)
}

// logLines is the last n lines of the entrypoint's output.
func logLines(rec *record, n int, since time.Duration) string {
	if since > 0 {
		if fi, err := os.Stat(rec.sb.LogPath()); err != nil || time.Since(fi.ModTime()) > since {
			return ""
		}
	}
	data, _, err := readTail(rec.sb.LogPath(), maxLogTail)
	if err != nil {
		return "[error] container output is unavailable: " + err.Error() + "\n"
	}
	lines := strings.SplitAfter(string(data), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines[max(len(lines)-n, 0):], "")
}

func (s *Server) legacyEvents(w http.ResponseWriter, r *http.Request) {
	var v fields
	limit := v.queryInt(r.URL.Query(), "limit", 50, 1, 500)
	if len(v.details) > 0 {
		writeDetails(w, v.details)
		return
	}
	rec := s.lookup(w, r.PathValue("id"))
	if rec == nil {
		return
	}
	writeText(w, s.eventText(rec, limit), true)
}

func (s *Server) diagnosticInspect(w http.ResponseWriter, r *http.Request) {
	rec := s.lookup(w, r.PathValue("id"))
	if rec == nil {
		return
	}
	writeText(w, s.inspectText(rec), false)
}

// diagnosticSummary is inspect, the last events and the last log lines in one text.
func (s *Server) diagnosticSummary(w http.ResponseWriter, r *http.Request) {
	values := r.URL.Query()
	var v fields
	tail := v.queryInt(values, "tail", 50, 1, 10000)
	limit := v.queryInt(values, "event_limit", 20, 1, 500)
	if len(v.details) > 0 {
		writeDetails(w, v.details)
		return
	}
	rec := s.lookup(w, r.PathValue("id"))
	if rec == nil {
		return
	}
	// Laid out as the real server lays it out.
	var b strings.Builder
	rule, sub := strings.Repeat("=", 72), strings.Repeat("-", 40)
	fmt.Fprintf(&b, "%s\nSANDBOX DIAGNOSTICS SUMMARY\nSandbox ID: %s\n%s\n", rule, rec.id, rule)
	section := func(title, text string) {
		fmt.Fprintf(&b, "\n%s\n%s\n%s\n%s", sub, title, sub, withNewline(text))
	}
	section("INSPECT", s.inspectText(rec))
	section("EVENTS", s.eventText(rec, limit))
	section(fmt.Sprintf("LOGS (last %d lines)", tail), logLines(rec, tail, 0))
	writeText(w, b.String(), false)
}

// inspectText describes a sandbox as key/value lines: first those the real
// server's Docker runtime shows for a container, then what only this server
// knows (isolation, where its files and log are).
func (s *Server) inspectText(rec *record) string {
	s.mu.Lock()
	rec.noteExit()
	source := "image " + rec.imageURI
	image := rec.imageURI
	if rec.snapshotID != "" {
		source, image = "snapshot "+rec.snapshotID, rec.snapshotID
	}
	expires := "never (manual cleanup)"
	if rec.expiresAt != nil {
		expires = formatTime(*rec.expiresAt)
	}
	exitCode, finished := "0", "0001-01-01T00:00:00Z"
	if rec.exitCode != nil {
		exitCode, finished = fmt.Sprint(*rec.exitCode), formatTime(rec.changedAt)
	}
	status := runtimeStatus(rec.state)
	rows := [][2]string{
		{"Container ID", rec.id[:min(12, len(rec.id))]},
		{"Name", "sandbox-" + rec.id},
		{"Image", image},
		{"Status", status},
		{"Running", pyBool(status == "running")},
		{"Paused", pyBool(status == "paused")},
		{"OOMKilled", "False"},
		{"Exit Code", exitCode},
		{"Started At", formatTime(rec.createdAt)},
		{"Finished At", finished},
		{"", ""},
		{"Sandbox", rec.id},
		{"State", rec.state},
		{"Reason", orNone(rec.reason)},
		{"Message", orNone(rec.statusMsg)},
		{"Source", source},
		{"Entrypoint", quoteArgs(rec.entrypoint)},
		{"Created", formatTime(rec.createdAt)},
		{"Expires", expires},
		{"Metadata", orNone(labelText(rec.metadata))},
	}
	s.mu.Unlock()
	rows = append(rows,
		[2]string{"Isolated", fmt.Sprint(rec.sb.Isolated())},
		[2]string{"Files", rec.sb.FSDir()},
		[2]string{"Log file", rec.sb.LogPath()},
		[2]string{"Data plane", s.Addr() + "/sandboxes/" + rec.id + "/proxy/{port}"},
	)
	var b strings.Builder
	for _, row := range rows {
		if row[0] == "" {
			b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&b, "%-16s%s\n", row[0]+":", row[1])
	}
	return b.String()
}

// pyBool is a boolean as the real (Python) server prints it.
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// labelText renders metadata as k=v pairs in key order.
func labelText(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	for i, k := range keys {
		keys[i] = k + "=" + m[k]
	}
	return strings.Join(keys, ", ")
}

// writeText answers plain text; deprecated marks the legacy logs and
// events answers as the real server does.
func writeText(w http.ResponseWriter, text string, deprecated bool) {
	w.Header().Set("Content-Type", textPlain)
	if deprecated {
		w.Header().Set("Deprecation", "true")
	}
	w.WriteHeader(http.StatusOK)
	io.WriteString(w, text)
}
