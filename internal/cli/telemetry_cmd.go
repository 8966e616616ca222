package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/agent"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/telemetry"
	"github.com/fabctl/fabctl/topology"
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
	cmd.AddCommand(newCmdTelemetryServe(f), newCmdTelemetryRules(f))
	return cmd
}

func newCmdTelemetryServe(f *Factory) *cobra.Command {
	opts := &TelemetryOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:     "serve SPEC",
		Short:   "Stream switch counters over gNMI and serve them at /metrics",
		Example: "  fabctl telemetry serve examples/testbed --listen 127.0.0.1:9465",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path, opts.JSON = args[0], f.Global.JSON
			return telemetryServe(f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Listen, "listen", "127.0.0.1:9465", "Serve /metrics at this `address`")
	fl.DurationVar(&opts.Sample, "sample", 10*time.Second, "gNMI SAMPLE interval of the counters, and the SSH CLI poll interval")
	fl.DurationVar(&opts.Once, "once", 0, "Stream for this `duration`, print each switch's stream state and exit (1 if one never synced)")
	fl.BoolVar(&opts.Insecure, "insecure", false, "Skip TLS verification of the switches (tests only)")
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

func newCmdTelemetryRules(f *Factory) *cobra.Command {
	opts := &TelemetryOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:     "rules SPEC",
		Short:   "Print the Prometheus alerting rules the spec implies (YAML, or JSON with --json)",
		Example: "  fabctl telemetry rules examples/ai-pod > /etc/prometheus/rules/fabctl.yml",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path, opts.JSON = args[0], f.Global.JSON
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
		},
	}
	cmd.Flags().Float64Var(&opts.PauseRate, "pause-rate", 1000, "PFC pause frames per second on a lossless priority that make a pause storm")
	cmd.Flags().DurationVar(&opts.For, "for", time.Minute, "How long a condition holds before the alert fires")
	return cmd
}

// TopologyOptions are the inputs of fabctl topology.
type TopologyOptions struct {
	IO     *IOStreams
	JSON   bool
	Path   string
	Format string
}

// NewCmdTopology returns `fabctl topology`.
func NewCmdTopology(f *Factory) *cobra.Command {
	opts := &TopologyOptions{IO: f.IOStreams}
	cmd := &cobra.Command{
		Use:   "topology SPEC",
		Short: "The fabric's topology for the job scheduler: Slurm topology.conf or Kubernetes node labels",
		Long: `fabctl topology prints the switch hierarchy the spec's cabling defines, for
topology-aware placement: --format slurm is a topology.conf for Slurm's tree
plugin (TopologyPlugin=topology/tree), --format k8s-labels the kubectl commands
that set fabctl.io/fabric=<fabric> (where the Kubernetes engine's agent runs)
and topology.fabctl.io/leaf, /spine-group and /rail on each host's node.
--json prints the topology, the labels and the topology.conf as one document.

Exit status: 0 success, 1 spec invalid, 64 usage error.`,
		Example: "  fabctl topology examples/testbed --format slurm > /etc/slurm/topology.conf",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path, opts.JSON = args[0], f.Global.JSON
			if opts.Format != "slurm" && opts.Format != "k8s-labels" {
				return FlagErrorf("--format must be slurm or k8s-labels, not %q", opts.Format)
			}
			s, err := loadSpecFor(f, opts.IO, opts.Path, opts.JSON)
			if err != nil || s == nil {
				return err
			}
			tp := topology.FromSpec(s)
			if opts.Format == "k8s-labels" {
				if err := tp.CheckLabels(); err != nil {
					return err
				}
			}
			if opts.JSON {
				return writeJSON(opts.IO.Out, struct {
					FormatVersion string                       `json:"format_version"`
					Topology      *topology.Topology           `json:"topology"`
					Labels        map[string]map[string]string `json:"labels"`
					Slurm         string                       `json:"slurm_topology_conf"`
				}{jsonFormatVersion, tp, tp.Labels(), tp.Slurm()})
			}
			if opts.Format == "slurm" {
				_, err = fmt.Fprint(opts.IO.Out, tp.Slurm())
			} else {
				_, err = fmt.Fprint(opts.IO.Out, tp.Kubectl())
			}
			return err
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "slurm", "Output `format`: slurm | k8s-labels")
	return cmd
}

// agentMetrics is fabctl agent --metrics: the NICs of the served hosts,
// read at every scrape, their DCB watched for drift.
func agentMetrics(ctx context.Context, opts *AgentOptions) error {
	s, err := opts.loadSpec(opts.MetricsSpec)
	if err != nil || s == nil {
		return err
	}
	hosts := opts.MetricsHosts
	if len(hosts) == 0 {
		name, err := os.Hostname()
		if err != nil {
			return err
		}
		hosts = []string{name}
	}
	nics, unknown := telemetry.NICs(s, hosts)
	if len(unknown) > 0 {
		return FlagErrorf("--metrics-host: no host %s in %s", strings.Join(unknown, ", "), opts.MetricsSpec)
	}
	c := telemetry.NewHostCollector(nics, "/sys")
	agent.WatchMetrics(ctx, c, opts.WatchDCB, func(h string, err error) {
		fmt.Fprintf(opts.IO.ErrOut, "agent: %s: DCB watch: %v\n", h, err)
	})
	h, err := agent.MetricsHandler(c)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Metrics)
	if err != nil {
		return err
	}
	fmt.Fprintf(opts.IO.ErrOut, "agent: serving metrics of %d NIC(s) at http://%s/metrics\n", len(nics), ln.Addr())
	return agent.ServeMetrics(ctx, ln, h)
}
