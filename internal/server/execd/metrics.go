package execd

import (
	"encoding/json"
	"math"
	"net/http"
	"runtime"
	"time"

	"github.com/osb-dev/osb/internal/server/sandbox"
)

// metrics is execd's Metrics schema. Unlike the real execd (host-wide memory),
// the used figures cover only this sandbox's processes.
type metrics struct {
	CPUCount    float64 `json:"cpu_count"`
	CPUUsedPct  float64 `json:"cpu_used_pct"`
	MemTotalMiB float64 `json:"mem_total_mib"`
	MemUsedMiB  float64 `json:"mem_used_mib"`
	Timestamp   int64   `json:"timestamp"` // unix ms, taken before sampling
}

func (h *handler) metricsRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /metrics", h.getMetrics)
	mux.HandleFunc("GET /metrics/watch", h.watchMetrics)
}

// getMetrics samples CPU over one interval, like the real execd (about 1 s).
func (h *handler) getMetrics(w http.ResponseWriter, r *http.Request) {
	start := h.sb.Usage()
	select {
	case <-time.After(h.opts.MetricsInterval):
	case <-r.Context().Done():
		return
	}
	writeJSON(w, http.StatusOK, between(start, h.sb.Usage()))
}

// watchMetrics streams one JSON object per line, each a reading over the last
// interval, until the client leaves or the sandbox dies. Framing as observed:
// stream headers, bare JSON, a single "\n"; sampling errors never stop it.
func (h *handler) watchMetrics(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr.Set("Content-Type", "text/event-stream")
	hdr.Set("Cache-Control", "no-cache")
	hdr.Set("Connection", "keep-alive")
	hdr.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flush(w)
	tick := time.NewTicker(h.opts.MetricsInterval)
	defer tick.Stop()
	prev := h.sb.Usage()
	enc := json.NewEncoder(w)
	for {
		select {
		case <-tick.C:
		case <-r.Context().Done():
			return
		case <-h.sb.Done():
			return
		}
		cur := h.sb.Usage()
		if err := enc.Encode(between(prev, cur)); err != nil {
			return
		}
		flush(w)
		prev = cur
	}
}

// between turns two usage readings into a Metrics sample. CPU percent is
// relative to the whole machine (all CPUs = 100), as execd reports it.
func between(a, b sandbox.Usage) metrics {
	cpus := runtime.NumCPU()
	m := metrics{CPUCount: float64(cpus), Timestamp: a.At.UnixMilli()}
	if secs := b.At.Sub(a.At).Seconds(); secs > 0 && b.CPUSeconds > a.CPUSeconds {
		m.CPUUsedPct = round2(math.Min(100, (b.CPUSeconds-a.CPUSeconds)/secs/float64(cpus)*100))
	}
	if total, err := sandbox.MemTotalBytes(); err == nil {
		if b.LimitBytes > 0 && b.LimitBytes < total {
			total = b.LimitBytes // what the sandbox may use, as in a container
		}
		m.MemTotalMiB = round2(float64(total) / (1 << 20))
	}
	m.MemUsedMiB = round2(float64(b.RSSBytes) / (1 << 20))
	return m
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }

func flush(w http.ResponseWriter) {
	http.NewResponseController(w).Flush()
}
