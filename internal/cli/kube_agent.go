package cli

import (
	"context"
	"fmt"

	"github.com/fabctl/fabctl/agent"
	"github.com/fabctl/fabctl/kube"
)

// agentKube runs fabctl agent --kube until ctx ends.
func agentKube(ctx context.Context, opts *AgentOptions, srv *agent.Server) error {
	node := opts.getenv("NODE_NAME")
	if node == "" {
		return fmt.Errorf("agent --kube: NODE_NAME is not set (the DaemonSet sets it from the downward API, spec.nodeName)")
	}
	cfg, err := kube.AgentConfig(opts.KubeTokenDir)
	if err != nil {
		return fmt.Errorf("agent --kube: %w", err)
	}
	cl, err := kube.NewClients(cfg)
	if err != nil {
		return fmt.Errorf("agent --kube: %w", err)
	}
	a := &agent.KubeAgent{Node: node, Clients: cl, Server: srv, Netns: opts.KubeNetns, Watch: opts.WatchDCB, Log: opts.IO.ErrOut}
	var probe <-chan error
	pctx, stopProbe := context.WithCancel(ctx)
	defer stopProbe()
	if opts.KubeProbeAddr != "" {
		if probe, err = a.ServeProbe(pctx, opts.KubeProbeAddr); err != nil {
			return fmt.Errorf("agent --kube: %w", err)
		}
		fmt.Fprintf(opts.IO.ErrOut, "agent --kube %s: readiness probe at http://%s/readyz\n", node, opts.KubeProbeAddr)
	}
	fmt.Fprintf(opts.IO.ErrOut, "agent --kube %s: watching FabricHostConfig %s at %s\n", node, node, cfg.Host)
	err = a.Run(ctx)
	stopProbe()
	if probe != nil {
		if perr := <-probe; perr != nil && err == nil {
			err = fmt.Errorf("agent --kube: readiness probe: %w", perr)
		}
	}
	return err
}
