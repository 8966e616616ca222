package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/topology"
)

// TopologyOptions are the inputs of fabctl topology.
type TopologyOptions struct {
	IO      *IOStreams
	Factory *Factory
	JSON    bool
	Path    string
	Format  string
}

// NewCmdTopology returns `fabctl topology`.
func NewCmdTopology(f *Factory, runF func(*TopologyOptions) error) *cobra.Command {
	opts := &TopologyOptions{IO: f.IOStreams, Factory: f}
	cmd := &cobra.Command{
		Use:   "topology SPEC",
		Short: "The fabric's topology for the job scheduler: Slurm topology.conf or Kubernetes node labels",
		Long: `fabctl topology prints the switch hierarchy the spec's cabling defines, for
topology-aware placement: --format slurm is a topology.conf for Slurm's tree
plugin (TopologyPlugin=topology/tree), --format slurm-block one for its block
plugin (TopologyPlugin=topology/block, Slurm 23.11 or later), --format
k8s-labels the kubectl commands that set fabctl.io/fabric=<fabric> (where the
Kubernetes engine's agent runs) and topology.fabctl.io/leaf, /spine-group, /rail
and /rail-group on each host's node. In a rail-optimised pod the hosts whose NICs reach
the same leaf on every rail form a rail group: one leaf switch of the tree
(named after its leaves, "leaf1+leaf2") and one block.
--json (or --format json) prints the topology, the labels and both
topology.conf files as one document.

Exit status: 0 success, 1 spec invalid, 64 usage error.`,
		Example: "  fabctl topology examples/testbed --format slurm > /etc/slurm/topology.conf\n  fabctl topology examples/ai-pod --format slurm-block",
		Args:    usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Path, opts.JSON = args[0], f.Global.JSON
			if opts.Format == "json" { // as plan --format json: the --json document
				opts.JSON = true
			} else if opts.Format != "slurm" && opts.Format != "slurm-block" && opts.Format != "k8s-labels" {
				return FlagErrorf("--format must be slurm, slurm-block, k8s-labels or json, not %q", opts.Format)
			}
			if runF != nil {
				return runF(opts)
			}
			return topologyRun(opts)
		},
	}
	cmd.Flags().StringVar(&opts.Format, "format", "slurm", "Output `format`: slurm | slurm-block | k8s-labels | json (the --json document)")
	return cmd
}

func topologyRun(opts *TopologyOptions) error {
	s, err := loadSpecStopping(opts.Factory, opts.IO, opts.Path, opts.JSON, "no topology was written")
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
			SlurmBlock    string                       `json:"slurm_block_topology_conf"`
		}{jsonFormatVersion, tp, tp.Labels(), tp.Slurm(), tp.SlurmBlock()})
	}
	switch opts.Format {
	case "slurm":
		_, err = fmt.Fprint(opts.IO.Out, tp.Slurm())
	case "slurm-block":
		_, err = fmt.Fprint(opts.IO.Out, tp.SlurmBlock())
	default:
		_, err = fmt.Fprint(opts.IO.Out, tp.Kubectl())
	}
	return err
}
