package cli

import (
	"context"
	"time"

	"github.com/spf13/pflag"

	"github.com/fabctl/fabctl/apply"
	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/kube"
	"github.com/fabctl/fabctl/kube/kubelock"
)

// Engines of apply, plan and drift: how hosts are reached. Either way
// the operation is one (plan.Make, apply.RunFabric); the engine picks the
// hosts' driver and the fabric lock's backend.
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
	fl.StringVar(&e.Engine, "engine", engineSSH, "How hosts are reached (`name`): ssh (the controller pushes to each host) or kubernetes (publish FabricHostConfig objects for the fabctl agent DaemonSet; docs/kubernetes.md)")
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

// RolloutFlags are apply's --engine kubernetes rollout flags: the batch
// policy of the hosts' wave and the wait for each node's agent.
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

// check validates the rollout flags of --engine kubernetes.
func (r *RolloutFlags) check() error {
	if r.Canary < 0 {
		return FlagErrorf("invalid --canary %d: want 0 or more", r.Canary)
	}
	if _, err := apply.ParseMaxUnavailable(r.MaxUnavailable); err != nil {
		return &FlagError{Err: err}
	}
	return nil
}

// batches is the hosts' batch policy the flags give.
func (r *RolloutFlags) batches() apply.BatchPolicy {
	mu, _ := apply.ParseMaxUnavailable(r.MaxUnavailable) // checked with the flags
	return apply.BatchPolicy{Canary: r.Canary, MaxUnavailable: mu}
}

// delivery is what an engine brings to a run: the drivers (with the
// hosts' one), the name plans give the hosts' driver, and the fabric
// lock's backend (nil: the state directory's lock file).
type delivery struct {
	Registry   *drivers.Registry
	HostDriver string
	Locker     apply.Locker
	Close      func()
}

// delivery wires the engine. Over SSH: the built-in drivers. Under
// kubernetes: the hosts' driver that publishes FabricHostConfig objects
// (kube.Hosts, which lists and watches them from here on) and the
// fabric's Lease as the lock.
func (e *EngineOptions) delivery(ctx context.Context, f *Factory, fabric string, o kube.HostsOptions) (*delivery, error) {
	d := &delivery{Registry: f.Drivers(), Close: func() {}}
	if e.Engine != engineKubernetes {
		return d, nil
	}
	cfg, err := kube.ControllerConfig(e.Kubeconfig, e.Context)
	if err != nil {
		return nil, err
	}
	cl, err := kube.NewClients(cfg)
	if err != nil {
		return nil, err
	}
	hosts := kube.NewHosts(cl, fabric, o)
	if err := hosts.Start(ctx); err != nil {
		return nil, err
	}
	if err := d.Registry.Register(kube.DriverName, hosts.Driver); err != nil {
		hosts.Close()
		return nil, err
	}
	d.HostDriver, d.Locker, d.Close = kube.DriverName, kubelock.Locker{Clients: cl}, hosts.Close
	return d, nil
}

// secretsFabric is the part of the fabric whose credentials the run
// resolves: under --engine kubernetes the hosts are reached through the
// cluster, so their SSH credentials are neither needed nor read.
func (e *EngineOptions) secretsFabric(f *intent.Fabric) *intent.Fabric {
	if e.Engine != engineKubernetes || f == nil {
		return f
	}
	sw := *f
	sw.Hosts = nil
	return &sw
}
