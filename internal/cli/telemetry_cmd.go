package cli

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/agent"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/telemetry"
)

// loadSpecFor loads and lints the spec at path for a read-only command;
// an invalid spec is reported (human or JSON) and exits 1.
func loadSpecFor(f *Factory, io *IOStreams, path string, jsonOut bool) (*spec.Spec, error) {
	return loadSpecStopping(f, io, path, jsonOut, "")
}

// loadSpecStopping is loadSpecFor for a command that reads no device:
// stopped says what a spec with errors stopped ("no topology was
// written"), not "no device was read".
func loadSpecStopping(f *Factory, io *IOStreams, path string, jsonOut bool, stopped string) (*spec.Spec, error) {
	lf, err := loadFabric(f, path, nil, nil)
	if errors.Is(err, errSpecInvalid) {
		lf.Stopped = stopped
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

// telemetryPlatforms names the platforms telemetry serve reads, from
// the build's drivers: gNMI platforms with telemetry paths (streamed),
// SSH CLI platforms whose driver reads counters (polled), and the others
// (not read: exported as fabctl_switch_up 0 with a reason).
func telemetryPlatforms(reg *drivers.Registry) (streamed, polled, unread []string) {
	var ssh []string
	for _, p := range builtin.Platforms() {
		switch {
		case p.InfiniBand:
		case p.Transport == drivers.TransportGNMI:
			if p.GNMITelemetry != nil {
				streamed = append(streamed, p.Name)
			} else {
				unread = append(unread, p.Name)
			}
		default:
			ssh = append(ssh, p.Name)
		}
	}
	polled = telemetry.PolledPlatforms(reg, ssh)
	for _, p := range ssh {
		if !slices.Contains(polled, p) {
			unread = append(unread, p)
		}
	}
	return streamed, polled, unread
}

func orNoneList(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// telemetryLong is telemetry's --help text: it names the platforms serve
// streams, polls and cannot read, from the build's drivers (reg).
func telemetryLong(reg *drivers.Registry) string {
	streamed, polled, unread := telemetryPlatforms(reg)
	return fmt.Sprintf(`fabctl telemetry serve subscribes (gNMI Subscribe STREAM: counters sampled,
port state on change) to every gNMI switch of the spec (%s), polls
the counter show commands of every SSH CLI switch whose platform has them
(%s) at the same interval, and serves the values as Prometheus
metrics at /metrics, labelled fabric, host, nic, rail, leaf, port from the
spec's cabling. A switch it cannot read (%s) is exported as
fabctl_switch_up 0 with the reason in its reason label, so the blind spot
is a series an alert sees. fabctl telemetry rules prints the Prometheus
alerting rules the spec implies. Host NIC metrics are served by fabctl agent
--metrics. docs/telemetry.md lists every metric and alert.

Exit status: 0 success, 1 failure (spec invalid, listen failed; serve --once:
a switch it streams or polls did not answer), 64 usage error.`, orNoneList(streamed), orNoneList(polled), orNoneList(unread))
}

// NewCmdTelemetry returns `fabctl telemetry` (serve, rules). Its help
// text is made when help is shown: which platforms are polled is asked of
// the drivers, and building the command tree contacts no driver.
func NewCmdTelemetry(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "telemetry",
		Short: "Switch telemetry as Prometheus metrics (gNMI STREAM, SSH CLI show polls) and the alerting rules the spec implies",
		Long:  "fabctl telemetry serve streams and polls the spec's switches and serves their counters as Prometheus metrics; fabctl telemetry rules prints the alerting rules the spec implies.",
		Args:  usageArgs(cobra.NoArgs),
	}
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		if c == cmd {
			c.Long = telemetryLong(f.Drivers())
		}
		if p := cmd.Parent(); p != nil {
			p.HelpFunc()(c, args)
			return
		}
		_ = c.Usage()
	})
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
	fl.DurationVar(&opts.Once, "once", 0, "Stream and poll for this `duration` (each switch read once at least: its poll allowed to finish, its gNMI stream to deliver a complete sample), print each switch's state and exit (1 if one did not answer)")
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
	// NotSeen are the spec's switches telemetry cannot read at all
	// (exported as fabctl_switch_up 0 with the reason); they do not fail.
	NotSeen map[string]string `json:"not_seen"`
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
			fmt.Fprintf(opts.IO.ErrOut, "telemetry: %s: %s (exported as fabctl_switch_up 0)\n", n, skipped[n])
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
	base, release := interruptContext(nil)
	defer release()
	ctx := base
	var until time.Time
	if opts.Once > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(base, opts.Once)
		defer cancel()
		until = time.Now().Add(opts.Once)
	}
	// Streams and polls run on base: --once ends them at its end, but
	// each switch is reported after one complete read (a poll that
	// finished, a stream's sync_response), or the failure of its last
	// attempt, never cut off mid-way (each within --sample more).
	streamDone, pollDone := make(chan struct{}), make(chan struct{})
	go func() {
		telemetry.Stream(base, s, c, telemetry.StreamOptions{Sample: opts.Sample, Insecure: opts.Insecure, Getenv: f.Getenv, Until: until})
		close(streamDone)
	}()
	go func() {
		telemetry.Poll(base, s, c, telemetry.PollOptions{Interval: opts.Sample, Insecure: opts.Insecure, Until: until})
		close(pollDone)
	}()
	if !opts.JSON {
		fmt.Fprintf(opts.IO.ErrOut, "telemetry: serving %d gNMI and %d SSH CLI switch(es) at http://%s/metrics\n", len(c.Switches())-len(polled), len(polled), ln.Addr())
	}
	if err := agent.ServeMetrics(ctx, ln, h); err != nil {
		return err
	}
	if opts.Once > 0 {
		for _, done := range []chan struct{}{streamDone, pollDone} {
			select {
			case <-done:
			case <-base.Done():
			}
		}
	}
	st := c.Status()
	unseen := c.NotSeen()
	doc := telemetryStatusJSON{FormatVersion: jsonFormatVersion, OK: true, Listen: ln.Addr().String(), Switches: st, NotSeen: unseen}
	names := make([]string, 0, len(st))
	for n, why := range st {
		names = append(names, n)
		if why != "" && unseen[n] == "" {
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
			switch {
			case unseen[n] != "":
				fmt.Fprintf(opts.IO.Out, "%s: %s\n", n, unseen[n])
			case st[n] == "":
				fmt.Fprintf(opts.IO.Out, "%s: %s\n", n, how)
			default:
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
	s, err := loadSpecStopping(f, opts.IO, opts.Path, opts.JSON, "no rules were written")
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
