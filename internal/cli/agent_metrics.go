package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/fabctl/fabctl/agent"
	"github.com/fabctl/fabctl/telemetry"
)

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
