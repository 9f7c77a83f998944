package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/osb-dev/osb/internal/client"
	"github.com/osb-dev/osb/internal/cmdutil"
	"github.com/osb-dev/osb/internal/output"
)

type metricsOptions struct {
	f         *cmdutil.Factory
	SandboxID string
	Watch     bool
	Format    string
}

func newCmdMetrics(f *cmdutil.Factory, runF func(context.Context, *metricsOptions) error) *cobra.Command {
	opts := &metricsOptions{f: f}
	cmd := &cobra.Command{
		Use:   "metrics SANDBOX_ID",
		Short: "Show a sandbox's CPU and memory use, once or as a stream.",
		Long: "Show one CPU and memory sample of the sandbox, or with --watch one line per\n" +
			"sample as execd produces them, until Ctrl-C (which exits 0). Under -o json a\n" +
			"watch prints one compact JSON object per line; under -o yaml one YAML\n" +
			"document per sample, each starting with ---. Sampling errors the stream\n" +
			"reports are warnings on stderr; the watch goes on.",
		Example: "  osb sandbox metrics sbx-123\n" +
			"  osb sandbox metrics sbx-123 --watch -o json | jq .cpu_used_percentage",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: cmdutil.CompleteSandboxIDs(f, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.SandboxID = args[0]
			if opts.Watch && !cmd.Flags().Changed("output") {
				opts.Format = output.Raw
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return runMetrics(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.Watch, "watch", false, "Stream samples until interrupted.")
	cmdutil.OutputFlag(cmd, &opts.Format, "table", "table", "json", "yaml", "raw")
	return cmd
}

func runMetrics(ctx context.Context, opts *metricsOptions) error {
	dp, err := opts.f.Execd(ctx, opts.SandboxID)
	if err != nil {
		return err
	}
	p := opts.f.Printer(opts.Format)
	if !opts.Watch {
		m, err := dp.Metrics(ctx)
		if err != nil {
			return err
		}
		return p.Object("Sandbox Metrics", metricsRecord(m))
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

// metricsRecord is a sample under the official client's names.
func metricsRecord(m *client.Metrics) output.Obj {
	return output.Obj{
		{Key: "cpu_count", Value: m.CPUCount},
		{Key: "cpu_used_percentage", Value: m.CPUUsedPct},
		{Key: "memory_total_in_mib", Value: m.MemTotal},
		{Key: "memory_used_in_mib", Value: m.MemUsed},
		{Key: "timestamp", Value: m.Timestamp},
	}
}

// sampleTime is RFC 3339 UTC at execd's millisecond precision, fixed width
// so that watch lines stay aligned.
const sampleTime = "2006-01-02T15:04:05.000Z07:00"

// writeSample prints one watched sample as soon as it arrives.
func writeSample(p *output.Printer, m *client.Metrics) error {
	var b []byte
	var err error
	switch p.Format {
	case output.JSONF:
		b, err = output.CompactJSON(metricsRecord(m))
	case output.YAMLF:
		b, err = output.YAML(metricsRecord(m))
		b = append([]byte("---\n"), b...)
	default:
		b = fmt.Appendf(nil, "[%s] cpu=%.2f%% cores=%g mem=%.2f/%.2fMiB\n",
			time.UnixMilli(m.Timestamp).UTC().Format(sampleTime), m.CPUUsedPct, m.CPUCount, m.MemUsed, m.MemTotal)
	}
	if err != nil {
		return err
	}
	_, err = p.IO.Out.Write(b)
	return err
}
