package transfer

import (
	"fmt"
	"io"
	"time"

	"github.com/mattn/go-runewidth"
	"github.com/schollz/progressbar/v3"

	"github.com/osb-dev/osb/internal/iostreams"
)

// How much of the display fits: from fullProgressWidth columns on, the
// bytes moved of the total, the rate and the time left; from
// countProgressWidth, the time left goes; below it only the rate stays.
// Beside the label and a bar at least minBar wide, the percentage, the
// brackets and those figures take countFixed or compactFixed columns at
// most (the largest figures, "1023.9 MB").
const (
	fullProgressWidth  = 100
	countProgressWidth = 60
	countFixed         = 46
	compactFixed       = 24
	minBar             = 5
)

// Progress shows a transfer on stderr: bytes, rate and time left. A nil
// *Progress shows nothing, so callers need no conditions.
type Progress struct {
	bar *progressbar.ProgressBar
}

// NewProgress returns a progress display for a transfer of total bytes (-1:
// unknown), or nil when no one would see it: stderr is not a terminal, or
// the output is meant for a program (json, yaml).
func NewProgress(ios *iostreams.IOStreams, format, label string, total int64) *Progress {
	if !ios.ShowProgress() || (format != "" && format != "table") {
		return nil
	}
	// The library narrows the bar to the terminal, never the label or the
	// figures: on a narrow terminal those alone would wrap, and each redraw
	// would then add a line. There the label is cut and the figures are
	// only the rate.
	width := ios.StderrWidth()
	full, count := width >= fullProgressWidth, width >= countProgressWidth
	fixed := compactFixed
	if count {
		fixed = countFixed
	}
	maxLabel, barWidth := 30, 30
	if !full {
		maxLabel = max(width-fixed-minBar, 1)
	}
	label = runewidth.Truncate(label, maxLabel, "…")
	if !full {
		barWidth = max(minBar, min(30, width-fixed-runewidth.StringWidth(label)))
	}
	options := []progressbar.Option{
		progressbar.OptionSetWriter(ios.ErrOut),
		progressbar.OptionSetDescription(label),
		progressbar.OptionShowBytes(true),
		progressbar.OptionSetPredictTime(full),
		progressbar.OptionSetWidth(barWidth),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionEnableColorCodes(ios.ColorEnabledStderr()),
		// Only redraw on progress: no background goroutine to stop.
		progressbar.OptionSetSpinnerChangeInterval(0),
		// Without this, a transfer whose first drawing is its last (a small
		// file) leaves the full bar on the line: the library then draws it
		// without recording its width, and Clear erases nothing.
		progressbar.OptionClearOnFinish(),
	}
	if count {
		options = append(options,
			progressbar.OptionShowCount(), // bytes so far (of the total, when known)
			progressbar.OptionShowTotalBytes(true))
	}
	bar := progressbar.NewOptions64(total, options...)
	return &Progress{bar: bar}
}

// Reader counts the bytes read through r.
func (p *Progress) Reader(r io.Reader) io.Reader {
	if p == nil {
		return r
	}
	return io.TeeReader(r, p.bar)
}

// SetTotal gives the display its total once it is known (a transfer that
// starts before its size is worked out).
func (p *Progress) SetTotal(total int64) {
	if p == nil {
		return
	}
	p.bar.ChangeMax64(total)
}

// Done stops and erases the display, so that what comes next (a result
// line, an error) starts on a clean line.
func (p *Progress) Done() {
	if p == nil {
		return
	}
	p.bar.Exit()
	p.bar.Clear()
}

// Bytes is a size for people: 512 B, 1.5 KiB, 3.2 GiB.
func Bytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
