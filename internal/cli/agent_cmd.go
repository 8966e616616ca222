package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/agent"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/host/agentproto"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
)

// AgentOptions are the inputs of fabctl agent.
type AgentOptions struct {
	IO   *IOStreams
	JSON bool

	// VersionCheck prints the handshake and exits.
	VersionCheck bool
	// Reapply is a saved desired state (file) or a directory of them.
	Reapply string
	// Watch is the same for --watch: report DCB drift of their NICs.
	Watch string
	// Metrics serves Prometheus metrics of the NICs of MetricsHosts in
	// the spec at MetricsSpec (telemetry_cmd.go).
	Metrics      string
	MetricsSpec  string
	MetricsHosts []string
	loadSpec     func(path string) (*spec.Spec, error)

	// Build returns the build information (tests replace it).
	Build func() BuildInfo
	// NewDriver builds the host driver the agent works with.
	NewDriver drivers.Factory
	// WatchDCB watches NICs in a namespace ("" = the agent's own) until
	// ctx ends: agent.WatchDCB (tests replace it).
	WatchDCB agent.WatchFunc

	// Kube runs the agent of the Kubernetes engine (kube_agent.go).
	Kube bool
	// KubeNetns and KubeTokenDir are test knobs of --kube: the network
	// namespace the host driver works in, and the directory of the
	// service-account token and CA (the harness acts as the kubelet).
	KubeNetns    string
	KubeTokenDir string
	// KubeProbeAddr serves --kube's readiness probe (/readyz) there.
	KubeProbeAddr string
	getenv        func(string) string
}

// NewCmdAgent returns `fabctl agent`.
func NewCmdAgent(f *Factory, runF func(*AgentOptions) error) *cobra.Command {
	opts := &AgentOptions{IO: f.IOStreams, Build: readBuildInfo}
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Plan and apply a host's settings on the host itself (run by the controller over SSH)",
		Long: `fabctl agent is fabctl on a host. The controller (fabctl plan/apply on
another machine) reaches a host with connect = "ssh" by running this same
binary there: it copies itself over SFTP when the host has another build,
then runs 'fabctl agent' (with sudo -n when the host says sudo = true),
writes the request (the host's desired state and read | plan | apply |
rollback) on stdin and reads the result from stdout. docs/agent.md
describes the protocol.

Without flags the agent reads one JSON request on stdin and writes one
JSON response on stdout (always JSON: it is a machine interface).
--version-check prints the handshake the controller compares (JSON).
--reapply PATH re-applies the desired state the last SSH apply saved
(/var/lib/fabctl/agent by default; a file or a directory of them),
planning, applying and verifying locally: a boot-time systemd unit runs
it, since DCB and link settings do not survive a reboot or driver reload.
It prints a line per host, or JSON with --json.
--watch PATH reports DCB drift of the RoCE NICs of the saved desired
state(s) at PATH as it happens (the kernel's DCB notifications: someone
ran dcb or mlnx_qos, lldpad or a willing NIC took the switch's DCBX
settings), against their state when the watch began, until stopped: a
line per change, or JSON lines with --json. With --reapply as well, it
re-applies first and then watches.
--kube runs the agent of the Kubernetes engine (the fabctl-agent DaemonSet,
docs/kubernetes.md): it watches this node's FabricHostConfig ($NODE_NAME),
applies it as --reapply does, writes its status and drift, and removes the
node's fabctl.io/unconfigured taint once the apply is verified; with
--kube-probe-addr ADDR it answers the DaemonSet's readiness probe there
(GET /readyz: 200 while its watch of the node's object is open).
--metrics ADDR --metrics-spec SPEC serves Prometheus metrics of this host's
NICs (PFC, ECN, CNP, retransmit and error counters, link, DCB drift; labelled
from the spec) at http://ADDR/metrics until stopped: docs/telemetry.md.

Exit status: 0 success, 1 failure (the JSON response says which kind),
64 usage error.`,
		Example: `  fabctl agent --version-check
  fabctl agent < request.json > response.json
  fabctl agent --reapply /var/lib/fabctl/agent
  fabctl agent --reapply /var/lib/fabctl/agent --watch /var/lib/fabctl/agent --json`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (opts.Metrics == "") != (opts.MetricsSpec == "") {
				return FlagErrorf("--metrics and --metrics-spec go together")
			}
			opts.loadSpec = func(p string) (*spec.Spec, error) { return loadSpecFor(f, opts.IO, p, f.Global.JSON) }
			if opts.Kube && (opts.VersionCheck || opts.Reapply != "" || opts.Watch != "" || opts.Metrics != "") {
				return FlagErrorf("--kube cannot be combined with --version-check, --reapply, --watch or --metrics")
			}
			if !opts.Kube && (opts.KubeNetns != "" || opts.KubeTokenDir != "" || opts.KubeProbeAddr != "") {
				return FlagErrorf("--kube-netns, --kube-token-dir and --kube-probe-addr go with --kube")
			}
			opts.getenv = f.Getenv
			if opts.VersionCheck && (opts.Reapply != "" || opts.Watch != "") {
				return FlagErrorf("--version-check cannot be combined with --reapply or --watch")
			}
			opts.JSON = f.Global.JSON
			if opts.NewDriver == nil {
				opts.NewDriver = func() drivers.Driver {
					d, err := f.Drivers().New(drivers.For(intent.Device{Kind: intent.KindHost}))
					if err != nil {
						panic(err) // the host driver is in every build's registry
					}
					return d
				}
			}
			if opts.WatchDCB == nil {
				opts.WatchDCB = agent.WatchDCB
			}
			if runF != nil {
				return runF(opts)
			}
			return agentRun(opts)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&opts.VersionCheck, "version-check", false, "Print the agent handshake (protocol, build identity, version, platform) as JSON and exit")
	fl.StringVar(&opts.Reapply, "reapply", "", "Re-apply the saved desired state in this `path` (a file, or a directory of <host>.json files) and verify it")
	fl.StringVar(&opts.Watch, "watch", "", "Report DCB drift of the NICs of the saved desired state in this `path` until stopped (after --reapply when both are given)")
	fl.StringVar(&opts.Metrics, "metrics", "", "Serve Prometheus metrics of the host's NICs at this `address` (/metrics) until stopped")
	fl.StringVar(&opts.MetricsSpec, "metrics-spec", "", "The spec (`path`) whose hosts, cabling and fabric label the metrics")
	fl.StringSliceVar(&opts.MetricsHosts, "metrics-host", nil, "The spec `host`(s) this agent serves (default: the one named like this machine)")
	fl.BoolVar(&opts.Kube, "kube", false, "Run as the Kubernetes engine's node agent (the fabctl-agent DaemonSet): converge this node's FabricHostConfig ($NODE_NAME) until stopped")
	fl.StringVar(&opts.KubeProbeAddr, "kube-probe-addr", "", "With --kube: answer the DaemonSet's readiness probe at this `address` (GET /readyz: 200 while the watch of this node's FabricHostConfig is open)")
	fl.StringVar(&opts.KubeNetns, "kube-netns", "", "Test knob of --kube: apply inside this network `namespace` instead of the host's own")
	fl.StringVar(&opts.KubeTokenDir, "kube-token-dir", "", "Test knob of --kube: read the service-account token and ca.crt from this `directory` instead of the pod's")
	_ = fl.MarkHidden("kube-netns")
	_ = fl.MarkHidden("kube-token-dir")
	_ = cmd.MarkFlagFilename("reapply", "json")
	_ = cmd.MarkFlagFilename("watch", "json")
	return cmd
}

func agentRun(opts *AgentOptions) error {
	hs := agentproto.Self(opts.Build().Version)
	if opts.VersionCheck {
		return writeJSON(opts.IO.Out, hs)
	}
	// SIGTERM or Ctrl-C: a transaction in progress finishes (and restores
	// on failure); nothing new starts.
	ctx, release := interruptContext(nil)
	defer release()
	srv := &agent.Server{NewDriver: opts.NewDriver, Handshake: hs, Progress: opts.IO.ErrOut}
	if opts.Kube {
		return agentKube(ctx, opts, srv) // kube_agent.go
	}
	if opts.Metrics != "" {
		if opts.Reapply != "" {
			if err := agentReapply(ctx, opts, srv); err != nil {
				fmt.Fprintln(opts.IO.ErrOut, "agent: re-apply failed; serving metrics anyway")
			}
		}
		return agentMetrics(ctx, opts) // agent_metrics.go
	}
	if opts.Reapply != "" || opts.Watch != "" {
		if opts.Reapply != "" {
			if err := agentReapply(ctx, opts, srv); err != nil && opts.Watch == "" {
				return err
			} else if err != nil {
				fmt.Fprintln(opts.IO.ErrOut, "agent: re-apply failed; watching anyway")
			}
		}
		if opts.Watch != "" {
			return agentWatch(ctx, opts)
		}
		return nil
	}
	resp := srv.Handle(ctx, opts.IO.In)
	if err := writeJSON(opts.IO.Out, resp); err != nil {
		return err
	}
	if !resp.OK {
		return exitWith(ExitError)
	}
	return nil
}

// agentReapplyJSON is format_version 1.0 of agent --reapply --json.
type agentReapplyJSON struct {
	FormatVersion string                 `json:"format_version"`
	OK            bool                   `json:"ok"`
	Results       []*agentproto.Response `json:"results"`
	Error         string                 `json:"error,omitempty"`
}

func agentReapply(ctx context.Context, opts *AgentOptions, srv *agent.Server) error {
	doc := agentReapplyJSON{FormatVersion: jsonFormatVersion, OK: true, Results: []*agentproto.Response{}}
	results, err := srv.ReapplyAll(ctx, opts.Reapply, func(file string, r *agentproto.Response) {
		if !opts.JSON {
			fmt.Fprintln(opts.IO.Out, reapplyLine(file, r))
		}
	})
	if err != nil {
		if opts.JSON {
			doc.OK, doc.Error = false, err.Error()
			if werr := writeJSON(opts.IO.Out, doc); werr != nil {
				return werr
			}
			return exitWith(ExitError)
		}
		return fmt.Errorf("--reapply: %w", err)
	}
	for _, r := range results {
		doc.Results = append(doc.Results, r)
		doc.OK = doc.OK && r.OK
	}
	if opts.JSON {
		if err := writeJSON(opts.IO.Out, doc); err != nil {
			return err
		}
	}
	if !doc.OK {
		return exitWith(ExitError)
	}
	return nil
}

// reapplyLine is the human summary of one re-applied host.
func reapplyLine(file string, r *agentproto.Response) string {
	name := r.Host
	if name == "" {
		name = file
	}
	if !r.OK {
		return fmt.Sprintf("%s: FAILED: %v", name, r.Err())
	}
	var warn string
	for _, w := range r.Warnings {
		warn += "; warning: " + w
	}
	res, err := agent.Result(r)
	if err != nil {
		return fmt.Sprintf("%s: FAILED: %v", name, err)
	}
	if res == nil || res.Changes == 0 {
		return name + ": no changes (live state matches the saved desired state)" + warn
	}
	return fmt.Sprintf("%s: applied %s, verified by read-back%s", name, plural(res.Changes, "change", "changes"), warn)
}

// agentWatch watches the RoCE NICs of every saved host until ctx ends:
// a line per event, or JSON lines. It fails only when no watch could run.
func agentWatch(ctx context.Context, opts *AgentOptions) error {
	ok, err := agent.Watch(ctx, opts.Watch, opts.WatchDCB, func(e agent.WatchEvent) {
		if opts.JSON {
			b, _ := json.Marshal(e)
			fmt.Fprintf(opts.IO.Out, "%s\n", b)
			return
		}
		fmt.Fprintln(opts.IO.Out, watchLine(e))
	})
	if err != nil {
		return fmt.Errorf("--watch: %w", err)
	}
	if !ok {
		return exitWith(ExitError)
	}
	return nil
}

// watchLine is the human form of a watch event.
func watchLine(l agent.WatchEvent) string {
	if l.Error != "" {
		return l.Host + ": watch: " + l.Error
	}
	d := l.Drift
	head := fmt.Sprintf("%s %s %s", d.Time.UTC().Format(time.RFC3339), l.Host, d.NIC)
	if len(d.Changes) == 0 {
		return head + ": DCB back at its state when the watch began (" + d.Cmd + ")"
	}
	parts := make([]string, 0, len(d.Changes))
	for _, c := range d.Changes {
		parts = append(parts, fmt.Sprintf("%s %q -> %q", c.Path, c.Before, c.After))
	}
	return fmt.Sprintf("%s: DCB drift (%s): %s", head, d.Cmd, strings.Join(parts, "; "))
}
