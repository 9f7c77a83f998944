package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// MetricsEvent is one line of a metrics watch: a sample, or the message of a
// sampling error the stream reported and went on after.
type MetricsEvent struct {
	Sample *Metrics
	Err    string
}

// sdkMetrics is the SDK's SandboxMetrics shape, which some servers stream
// instead of execd's: Metrics under other JSON names (the fields must stay
// in step, for the conversion).
type sdkMetrics struct {
	CPUCount   json.Number `json:"cpu_count"`
	CPUUsedPct json.Number `json:"cpu_used_percentage"`
	MemTotal   json.Number `json:"memory_total_in_mib"`
	MemUsed    json.Number `json:"memory_used_in_mib"`
	Timestamp  int64       `json:"timestamp"`
}

// WatchMetrics streams execd's /metrics/watch and calls fn for each event
// until the stream ends (nil), fn fails, or ctx ends (ctx.Err()). Lines may
// be bare JSON or SSE `data:` frames; comments and other SSE fields are
// skipped. A line that is not JSON ends the watch with an error.
func (d *DataPlane) WatchMetrics(ctx context.Context, fn func(MetricsEvent) error) error {
	resp, err := d.Stream(ctx, &Request{
		Method: http.MethodGet,
		Path:   "/metrics/watch",
		Header: http.Header{"Accept": {"text/event-stream"}},
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	for sc.Scan() {
		ev, ok, err := parseMetricsLine(sc.Bytes())
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("metrics stream: %w", err)
	}
	return nil
}

// parseMetricsLine reads one line of the stream; ok is false for lines that
// carry no event.
func parseMetricsLine(line []byte) (ev MetricsEvent, ok bool, err error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] == ':' {
		return ev, false, nil
	}
	for _, field := range []string{"event:", "id:", "retry:"} {
		if bytes.HasPrefix(line, []byte(field)) {
			return ev, false, nil
		}
	}
	if rest, found := bytes.CutPrefix(line, []byte("data:")); found {
		line = bytes.TrimSpace(rest)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(line, &fields); err != nil {
		return ev, false, fmt.Errorf("metrics stream sent a line that is not a JSON object: %.200q", line)
	}
	if msg := errorText(fields["error"]); msg != "" {
		return MetricsEvent{Err: msg}, true, nil
	}
	var m Metrics
	if _, execdShape := fields["cpu_used_pct"]; execdShape {
		err = json.Unmarshal(line, &m)
	} else {
		var s sdkMetrics
		err = json.Unmarshal(line, &s)
		m = Metrics(s) // the same fields under the SDK's names
	}
	if err != nil {
		return ev, false, fmt.Errorf("metrics stream sent a sample osb cannot read: %w", err)
	}
	return MetricsEvent{Sample: &m}, true, nil
}

// errorText is the message of an "error" field, "" when it is absent or
// empty (false, null, "", 0).
func errorText(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return ""
	}
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case bool:
		if !t {
			return ""
		}
	case float64:
		if t == 0 {
			return ""
		}
	}
	return string(raw)
}
