package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/ops"
	"github.com/osb-dev/osb/internal/output"
)

type metricsOptions struct {
	cmdutil.Base
	Sandbox cmdutil.Sandbox
	Watch   bool
}

func newCmdMetrics(f *cmdutil.Factory) *cobra.Command {
	opts := &metricsOptions{}
	return cmdutil.NewVerb(f, opts, cmdutil.Verb[metricsOptions]{
		Name:  "metrics",
		Short: "Show a sandbox's CPU and memory use, once or as a stream.",
		Long: "Show one CPU and memory sample of the sandbox, or with --watch one line per\n" +
			"sample as execd produces them, until Ctrl-C (which exits 0). Under -o json a\n" +
			"watch prints one compact JSON object per line (--jq and --template apply to\n" +
			"each); under -o yaml one YAML document per sample, each starting with ---.\n" +
			"Sampling errors the stream reports are warnings on stderr; the watch goes on.",
		Example: "  osb sandbox metrics sbx-123\n" +
			"  osb sandbox metrics sbx-123 --watch -q cpu_used_percentage",
		Args:    []cmdutil.Arg{cmdutil.SandboxArg(&opts.Sandbox)},
		Formats: cmdutil.AllFormats,
		Flags: func(fs *cmdutil.FlagSet) {
			fs.BoolVar(&opts.Watch, "watch", false, "Stream samples until interrupted.")
		},
		Run: runMetrics,
	})
}

func runMetrics(ctx context.Context, opts *metricsOptions) error {
	if opts.Watch && !opts.FormatGiven {
		opts.Format = output.Raw
	}
	dp, err := opts.Sandbox.Execd(ctx)
	if err != nil {
		return err
	}
	p := opts.Printer()
	if !opts.Watch {
		m, err := dp.Metrics(ctx)
		if err != nil {
			return err
		}
		return p.Object("Sandbox Metrics", ops.NewMetricsView(m))
	}
	err = dp.WatchMetrics(ctx, func(ev client.MetricsEvent) error {
		if ev.Sample == nil {
			p.Warning("Metrics stream error: " + ev.Err)
			return nil
		}
		return writeSample(p, ev.Sample)
	})
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		// Ctrl-C is how a watch is meant to end.
		return nil
	}
	return err
}

// sampleTime is RFC 3339 UTC at execd's millisecond precision, fixed width
// so that watch lines stay aligned.
const sampleTime = "2006-01-02T15:04:05.000Z07:00"

// writeSample prints one watched sample as soon as it arrives.
func writeSample(p *output.Printer, m *client.Metrics) error {
	if p.Structured() {
		return p.Line(ops.NewMetricsView(m))
	}
	_, err := fmt.Fprintf(p.IO.Out, "[%s] cpu=%.2f%% cores=%g mem=%.2f/%.2fMiB\n",
		time.UnixMilli(m.Timestamp).UTC().Format(sampleTime), float(m.CPUUsedPct), float(m.CPUCount), float(m.MemUsed), float(m.MemTotal))
	return err
}

func float(n json.Number) float64 {
	f, _ := n.Float64()
	return f
}
