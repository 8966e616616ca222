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
	fmt.Fprintf(opts.IO.ErrOut, "agent --kube %s: watching FabricHostConfig %s at %s\n", node, node, cfg.Host)
	return a.Run(ctx)
}
