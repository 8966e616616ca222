package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/kube"
	"github.com/fabctl/fabctl/kube/kubelock"
	"github.com/fabctl/fabctl/plan"
)

// Engines of apply, plan and drift.
const (
	engineSSH        = "ssh"
	engineKubernetes = "kubernetes"
)

// EngineOptions select the engine of apply, plan and drift.
type EngineOptions struct {
	Engine     string
	Kubeconfig string
	Context    string
}

func (e *EngineOptions) addFlags(fl *pflag.FlagSet) {
	fl.StringVar(&e.Engine, "engine", engineSSH, "How hosts are reached: `ssh` (the controller pushes to each host) or kubernetes (publish FabricHostConfig objects for the fabctl agent DaemonSet; docs/kubernetes.md)")
	fl.StringVar(&e.Kubeconfig, "kubeconfig", "", "With --engine kubernetes: the kubeconfig `file` (default as kubectl: $KUBECONFIG, ~/.kube/config)")
	fl.StringVar(&e.Context, "context", "", "With --engine kubernetes: the kubeconfig `context` (default: its current context)")
}

func (e *EngineOptions) check() error {
	switch e.Engine {
	case engineSSH:
		if e.Kubeconfig != "" || e.Context != "" {
			return FlagErrorf("--kubeconfig and --context go with --engine kubernetes")
		}
	case engineKubernetes:
	default:
		return FlagErrorf("invalid --engine %q: want ssh or kubernetes", e.Engine)
	}
	return nil
}

func (e *EngineOptions) clients() (*kube.Clients, error) {
	cfg, err := kube.ControllerConfig(e.Kubeconfig, e.Context)
	if err != nil {
		return nil, err
	}
	return kube.NewClients(cfg)
}

// RolloutFlags are apply's --engine kubernetes rollout flags.
type RolloutFlags struct {
	MaxUnavailable string
	Canary         int
	HostTimeout    time.Duration
}

func (r *RolloutFlags) addFlags(fl *pflag.FlagSet) {
	fl.StringVar(&r.MaxUnavailable, "max-unavailable", "10%", "With --engine kubernetes: hosts released but not yet applied at once, a `count or percentage` of the hosts to change")
	fl.IntVar(&r.Canary, "canary", 1, "With --engine kubernetes: `hosts` released first, alone; the rest waits until they applied (0: no canary)")
	fl.DurationVar(&r.HostTimeout, "host-timeout", 10*time.Minute, "With --engine kubernetes: a released host whose agent has not reported within this `duration` counts as failed")
}

// overlapFinding is an overlapping owner as a plan finding.
func overlapFinding(x kube.Overlap) drivers.Finding {
	return drivers.Finding{Severity: "warning", Path: "nic/" + x.NIC, Message: x.Message}
}

// kubePlan plans under the Kubernetes engine: hosts from their objects'
// status, switches through their drivers.
func kubePlan(ctx context.Context, f *Factory, eo *EngineOptions, lf *loadedFabric, popts plan.Options) (*plan.Plan, error) {
	cl, err := eo.clients()
	if err != nil {
		return nil, err
	}
	objs, _, err := kube.ListFabric(ctx, cl, lf.Fabric.Name)
	if err != nil {
		return nil, err
	}
	o := kube.ApplyOptions{Clients: cl, Spec: lf.Spec, Fabric: lf.Fabric, Registry: f.Drivers(), Plan: popts}
	p, _, err := kube.PlanFabric(ctx, o, objs)
	if err != nil {
		return nil, err
	}
	ov, err := kube.Overlaps(ctx, cl, lf.Fabric.Hosts)
	if err != nil {
		fmt.Fprintln(f.IOStreams.ErrOut, "Warning: "+err.Error())
	}
	for _, x := range ov {
		if d := p.Device("host." + x.Host); d != nil {
			d.Findings = append(d.Findings, overlapFinding(x))
		} else if d := p.Device(x.Host); d != nil {
			d.Findings = append(d.Findings, overlapFinding(x))
		}
	}
	return p, nil
}

// kubeApply runs apply --engine kubernetes and fills out.
func kubeApply(ctx context.Context, f *Factory, opts *ApplyOptions, lf *loadedFabric, popts plan.Options, hooks apply.Hooks, view ApplyView, out *applyOutcome) ExitCode {
	mu, err := kube.ParseMaxUnavailable(opts.Rollout.MaxUnavailable)
	if err != nil {
		out.Status, out.Err = applyStatusError, &FlagError{Err: err}
		return ExitUsage
	}
	cl, err := opts.EngineOptions.clients()
	if err != nil {
		out.Status, out.Err = applyStatusError, err
		return ExitError
	}
	o, err := kube.Apply(ctx, kube.ApplyOptions{
		Clients: cl, Locker: kubelock.Locker{Clients: cl}, Spec: lf.Spec, Fabric: lf.Fabric, Registry: f.Drivers(), Plan: popts,
		Parallelism: opts.Parallelism, OnFailure: apply.Policy(opts.OnFailure), MaxUnavailable: mu, Canary: opts.Rollout.Canary,
		HostTimeout: opts.Rollout.HostTimeout, LockTimeout: opts.LockTimeout, Version: readBuildInfo().Version, Hooks: hooks,
		StateDir: lf.StateDir, Journal: opts.Journal, Getenv: f.Getenv, Now: f.Now,
		Rollout: func(e kube.RolloutEvent) {
			f.Debugf("rollout: %s %s (in flight %d) %s", e.Host, e.Phase, e.InFlight, e.Message)
		},
	})
	view.ProgressDone()
	out.Status, out.Err, out.Plan, out.Waves, out.Lock, out.Journal = o.Status, err, o.Plan, o.Waves, o.Lock, o.Journal
	out.Warnings = append(out.Warnings, o.Warnings...)
	out.Result = o.Result()
	for _, x := range o.Overlaps {
		if d := o.Plan; d != nil {
			if dp := d.Device("host." + x.Host); dp != nil {
				dp.Findings = append(dp.Findings, overlapFinding(x))
			}
		}
	}
	if o.Rollout != nil {
		out.Warnings = append(out.Warnings, fmt.Sprintf("kubernetes rollout: %d host(s) applied, %d failed, at most %d in flight (--max-unavailable %s)",
			o.Rollout.Applied, o.Rollout.Failed, o.Rollout.MaxInFlight, mu))
	}
	return applyExitCode(o.Status, opts.DetailedExitcode)
}
