package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/agent"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/telemetry"
)

// loadSpecFor loads and lints the spec at path for a read-only command;
// an invalid spec is reported (human or JSON) and exits 1.
func loadSpecFor(f *Factory, io *IOStreams, path string, jsonOut bool) (*spec.Spec, error) {
	lf, err := loadFabric(f, path, nil, nil)
	if errors.Is(err, errSpecInvalid) {
		format := formatHuman
		if jsonOut {
			format = formatJSON
		}
		return nil, reportSpecErrors(io, lf, format)
	}
	if err != nil {
		return nil, err
	}
	return lf.Spec, nil
}

// TelemetryOptions are the inputs of fabctl telemetry.
type TelemetryOptions struct {
	IO     *IOStreams
	JSON   bool
	Path   string
	Listen string
	Sample time.Duration
	Once   time.Duration
	// Rules
	PauseRate float64
	For       time.Duration
	Insecure  bool
}

// NewCmdTelemetry returns `fabctl telemetry` (serve, rules).
func NewCmdTelemetry(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "telemetry",
		Short: "Switch telemetry as Prometheus metrics (gNMI STREAM, SSH CLI show polls) and the alerting rules the spec implies",
		Long: `fabctl telemetry serve subscribes (gNMI Subscribe STREAM: counters sampled,
port state on change) to every gNMI switch of the spec, polls every SSH CLI
switch's counter show commands (SONiC, EOS, NX-OS, Cumulus) at the same
interval, and serves the values as
Prometheus metrics at /metrics, labelled fabric, host, nic, rail, leaf, port
from the spec's cabling. fabctl telemetry rules prints the Prometheus alerting
rules the spec implies. Host NIC metrics are served by fabctl agent --metrics.
docs/telemetry.md lists every metric and alert.

Exit status: 0 success, 1 failure (spec invalid, listen failed; serve --once:
a switch stream not established), 64 usage error.`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(newCmdTelemetryServe(f, nil), newCmdTelemetryRules(f, nil))
	return cmd
}

func newCmdTelemetryServe(f *Factory, runF func(*TelemetryOptions) error) *cobra.Command {
	opts := &TelemetryOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:     "serve SPEC",
		Short:   "Stream switch counters over gNMI and serve them at /metrics",
		Example: "  fabctl telemetry serve examples/testbed --listen 127.0.0.1:9465",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path, opts.JSON = args[0], f.Global.JSON
			if runF != nil {
				return runF(opts)
			}
			return telemetryServe(f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Listen, "listen", "127.0.0.1:9465", "Serve /metrics at this `address`")
	fl.DurationVar(&opts.Sample, "sample", 10*time.Second, "gNMI SAMPLE interval of the counters, and the SSH CLI poll interval")
	fl.DurationVar(&opts.Once, "once", 0, "Stream for this `duration`, print each switch's stream state and exit (1 if one never synced)")
	fl.BoolVar(&opts.Insecure, "insecure", false, "Skip SSH host-key and TLS certificate verification of the switches (lab use only)")
	// The spelling the SSH transport's known_hosts hint names; same switch.
	fl.BoolVar(&opts.Insecure, "insecure-skip-host-key", false, "Same as --insecure: skip SSH host-key (and TLS) verification")
	return cmd
}

// telemetryStatusJSON is format_version 1.0 of telemetry serve --json.
type telemetryStatusJSON struct {
	FormatVersion string            `json:"format_version"`
	OK            bool              `json:"ok"`
	Listen        string            `json:"listen"`
	Switches      map[string]string `json:"switches"` // switch -> "" (streaming) or why not
}

func telemetryServe(f *Factory, opts *TelemetryOptions) error {
	s, err := loadSpecFor(f, opts.IO, opts.Path, opts.JSON)
	if err != nil || s == nil {
		return err
	}
	c := telemetry.NewSwitchCollector(s, builtin.Platforms())
	polled, skipped := c.AddPolled(s, f.Drivers()) // SSH CLI switches: show-command poll
	skippedNames := make([]string, 0, len(skipped))
	for n := range skipped {
		skippedNames = append(skippedNames, n)
	}
	sort.Strings(skippedNames)
	for _, n := range skippedNames {
		if !opts.JSON {
			fmt.Fprintf(opts.IO.ErrOut, "telemetry: %s: not polled: %s\n", n, skipped[n])
		}
	}
	if len(c.Switches()) == 0 {
		return fmt.Errorf("%s: no switch to stream from (gNMI) or poll (SSH CLI)", opts.Path)
	}
	h, err := agent.MetricsHandler(c)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Listen)
	if err != nil {
		return err
	}
	ctx, release := interruptContext(nil)
	defer release()
	if opts.Once > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Once)
		defer cancel()
	}
	go telemetry.Stream(ctx, s, c, telemetry.StreamOptions{Sample: opts.Sample, Insecure: opts.Insecure, Getenv: f.Getenv})
	go telemetry.Poll(ctx, s, c, telemetry.PollOptions{Interval: opts.Sample, Insecure: opts.Insecure})
	if !opts.JSON {
		fmt.Fprintf(opts.IO.ErrOut, "telemetry: serving %d gNMI and %d SSH CLI switch(es) at http://%s/metrics\n", len(c.Switches())-len(polled), len(polled), ln.Addr())
	}
	if err := agent.ServeMetrics(ctx, ln, h); err != nil {
		return err
	}
	st := c.Status()
	doc := telemetryStatusJSON{FormatVersion: jsonFormatVersion, OK: true, Listen: ln.Addr().String(), Switches: st}
	names := make([]string, 0, len(st))
	for n, why := range st {
		names = append(names, n)
		if why != "" {
			doc.OK = false
		}
	}
	sort.Strings(names)
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, doc); err != nil {
			return err
		}
	} else {
		for _, n := range names {
			how := "streaming"
			for _, p := range polled {
				if p == n {
					how = "polled"
				}
			}
			if st[n] == "" {
				fmt.Fprintf(opts.IO.Out, "%s: %s\n", n, how)
			} else {
				fmt.Fprintf(opts.IO.Out, "%s: not %s: %s\n", n, how, st[n])
			}
		}
	}
	if !doc.OK {
		return exitWith(ExitError)
	}
	return nil
}

func newCmdTelemetryRules(f *Factory, runF func(*TelemetryOptions) error) *cobra.Command {
	opts := &TelemetryOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:     "rules SPEC",
		Short:   "Print the Prometheus alerting rules the spec implies (YAML, or JSON with --json)",
		Example: "  fabctl telemetry rules examples/ai-pod > /etc/prometheus/rules/fabctl.yml",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path, opts.JSON = args[0], f.Global.JSON
			if runF != nil {
				return runF(opts)
			}
			return telemetryRules(f, opts)
		},
	}
	cmd.Flags().Float64Var(&opts.PauseRate, "pause-rate", 1000, "PFC pause frames per second on a lossless priority that make a pause storm")
	cmd.Flags().DurationVar(&opts.For, "for", time.Minute, "How long a condition holds before the alert fires")
	return cmd
}

func telemetryRules(f *Factory, opts *TelemetryOptions) error {
	s, err := loadSpecFor(f, opts.IO, opts.Path, opts.JSON)
	if err != nil || s == nil {
		return err
	}
	rf := telemetry.Rules(s, telemetry.RuleOptions{PauseRate: opts.PauseRate, For: opts.For})
	if opts.JSON {
		return writeJSON(opts.IO.Out, struct {
			FormatVersion string `json:"format_version"`
			*telemetry.RuleFile
		}{jsonFormatVersion, rf})
	}
	b, err := rf.YAML()
	if err != nil {
		return err
	}
	_, err = opts.IO.Out.Write(b)
	return err
}
