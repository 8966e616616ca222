package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibspec"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/ibsim"
	"github.com/fabctl/fabctl/testbed/local"
)

// TestbedFaultOptions are the inputs of fabctl testbed fault.
type TestbedFaultOptions struct {
	TestbedOptions
	Kind string   // link-down, link-up, width, miswire, partition-drop
	Args []string // the kind's arguments
}

func newCmdTestbedFault(f *Factory) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "fault SPEC KIND ARGS...",
		Short: "Break the simulated InfiniBand fabric the way real ones break, for validate to catch",
		Long: `Inject a fault into the simulated InfiniBand subnet "testbed up" started for SPEC
(ibsim with the real opensm), the way a real fabric goes wrong. validate (and
plan) then name it by port. Ports are the spec's: SWITCH:PORT (leaf1:2) or
HOST:NIC (cn01:ib0).

  link-down PORT               take the cable at PORT down (ibsim Unlink)
  link-up PORT                 bring it back (ibsim ReLink)
  width PORT 1x|2x|4x|8x|12x   make the link at PORT train at that width
                               (ibportstate: LinkWidthEnabled)
  miswire PORT PORT            swap the far ends of the two ports' cables
                               (again to swap them back); opensm re-sweeps
  partition-drop PARTITION HOST:NIC
                               remove the port from the partition in opensm's
                               partitions.conf and have opensm sweep it in
                               (fabctl apply restores it)

Exit status: 0 done, 1 error (no simulated subnet, unknown port, ...).`,
		Example: `  fabctl testbed fault examples/ib-testbed link-down leaf1:2
  fabctl validate --skip-traffic examples/ib-testbed     # leaf1 port 2: no link to ... [link-down]
  fabctl testbed fault examples/ib-testbed link-up leaf1:2
  fabctl testbed fault examples/ib-testbed miswire cn01:ib0 cn03:ib0
  fabctl testbed fault examples/ib-testbed partition-drop storage cn04:ib0`,
		Args: usageArgs(cobra.MinimumNArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := &TestbedFaultOptions{TestbedOptions: *testbedOpts(f, args[:1]), Kind: args[1], Args: args[2:]}
			o.Dir = dir
			return testbedFaultRun(f, o)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "Testbed directory (default: .fabctl/testbed beside the spec)")
	return cmd
}

// faultArity is how many arguments each fault kind takes.
var faultArity = map[string]int{"link-down": 1, "link-up": 1, "width": 2, "miswire": 2, "partition-drop": 2}

func testbedFaultRun(f *Factory, o *TestbedFaultOptions) error {
	n, ok := faultArity[o.Kind]
	if !ok {
		return &FlagError{Err: fmt.Errorf("unknown fault %q: use link-down, link-up, width, miswire or partition-drop", o.Kind)}
	}
	if len(o.Args) != n {
		return &FlagError{Err: fmt.Errorf("fault %s takes %d argument(s), got %d (fabctl testbed fault --help)", o.Kind, n, len(o.Args))}
	}
	s, err := loadSpecFor(f, o.IO, o.Spec, o.JSON)
	if err != nil {
		return err
	}
	if !ibspec.HasFabric(s) {
		return errors.New("the spec has no InfiniBand switches and cabling: testbed fault breaks a simulated InfiniBand subnet")
	}
	fab, err := ibspec.FromSpec(s)
	if err != nil {
		return fmt.Errorf("InfiniBand topology: %w", err)
	}
	simDir := local.IBSimDir(o.dir())
	sim, err := ibsim.Attach(simDir)
	if err != nil {
		return fmt.Errorf("no simulated InfiniBand subnet in %s (fabctl testbed up %s): %w", filepath.Dir(simDir), o.Spec, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	msg, err := injectFault(ctx, sim, s, fab, o.Kind, o.Args)
	if err != nil {
		return err
	}
	if o.JSON {
		return writeJSON(o.IO.Out, map[string]any{"fault": o.Kind, "args": o.Args, "done": msg})
	}
	st := newStyles(o.IO.Out, o.IO.ColorEnabled())
	fmt.Fprintf(o.IO.Out, "%s %s\n", st.OK.Render("✔"), msg)
	return nil
}

// faultPort resolves a spec port (SWITCH:PORT or HOST:NIC) to the
// topology's port.
func faultPort(fab *ibspec.Fabric, ep string) (ibfabric.PortRef, error) {
	if r, ok := fab.Ports[ep]; ok {
		return r, nil
	}
	node, ps, _ := strings.Cut(ep, ":")
	if port, err := strconv.Atoi(ps); err == nil {
		for _, sw := range fab.Topology.Switches {
			if sw.Name == node {
				if port < 1 || port > sw.Ports {
					return ibfabric.PortRef{}, fmt.Errorf("%s: switch %s has ports 1..%d", ep, node, sw.Ports)
				}
				return ibfabric.PortRef{Node: node, Port: port}, nil
			}
		}
	}
	return ibfabric.PortRef{}, fmt.Errorf("%s is not a port of the InfiniBand fabric: use SWITCH:PORT (leaf1:2) or HOST:NIC of a cabled NIC (cn01:ib0)", ep)
}

// peerOf is the far end of the spec's cable at p.
func peerOf(fab *ibspec.Fabric, p ibfabric.PortRef) (ibfabric.PortRef, bool) {
	for _, l := range fab.Topology.Links {
		if l.A == p {
			return l.B, true
		}
		if l.B == p {
			return l.A, true
		}
	}
	return ibfabric.PortRef{}, false
}

// portGUID is what ibportstate -G addresses a port by: a switch's node
// GUID, an adapter port's port GUID.
func portGUID(fab *ibspec.Fabric, p ibfabric.PortRef) uint64 {
	for _, sw := range fab.Topology.Switches {
		if sw.Name == p.Node {
			return sw.SwitchGUID()
		}
	}
	for _, h := range fab.Topology.HCAs {
		if h.Name == p.Node {
			return h.PortGUID(p.Port)
		}
	}
	return 0
}

func injectFault(ctx context.Context, sim *ibsim.Sim, s *spec.Spec, fab *ibspec.Fabric, kind string, args []string) (string, error) {
	switch kind {
	case "link-down", "link-up":
		p, err := faultPort(fab, args[0])
		if err != nil {
			return "", err
		}
		if kind == "link-down" {
			return fmt.Sprintf("the cable at %s (%s) is down", args[0], fab.Name(p.Node, p.Port)), sim.LinkDown(ctx, p)
		}
		return fmt.Sprintf("the cable at %s (%s) is up again", args[0], fab.Name(p.Node, p.Port)), sim.LinkUp(ctx, p)
	case "width":
		p, err := faultPort(fab, args[0])
		if err != nil {
			return "", err
		}
		w, err := ibfabric.ParseWidth(args[1])
		if err != nil {
			return "", &FlagError{Err: err}
		}
		return fmt.Sprintf("the link at %s (%s) trains at %s", args[0], fab.Name(p.Node, p.Port), w), sim.SetWidth(ctx, p, portGUID(fab, p), w)
	case "miswire":
		a, err := faultPort(fab, args[0])
		if err != nil {
			return "", err
		}
		b, err := faultPort(fab, args[1])
		if err != nil {
			return "", err
		}
		pa, okA := peerOf(fab, a)
		pb, okB := peerOf(fab, b)
		if !okA || !okB || a == b || pa == b {
			return "", fmt.Errorf("miswire %s %s: two ports on two different cables of the spec", args[0], args[1])
		}
		// The simulated cabling may already be crossed (a second miswire
		// swaps back): ask the fabric where the cables end now.
		cur, err := ibfabric.Discover(ctx, sim.Runner(), ibfabric.Options{})
		if err != nil {
			return "", err
		}
		if now, ok := currentPeer(cur, fab, a); ok {
			pa = now
		}
		if now, ok := currentPeer(cur, fab, b); ok {
			pb = now
		}
		if err := sim.Recable(ctx, a, pa, b, pb); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s now cabled to %s, %s to %s", fab.Name(a.Node, a.Port), fab.Name(pb.Node, pb.Port), fab.Name(b.Node, b.Port), fab.Name(pa.Node, pa.Port)), nil
	case "partition-drop":
		p, err := faultPort(fab, args[1])
		if err != nil {
			return "", err
		}
		if s.InfiniBand == nil || partitionNamed(s, args[0]) == nil {
			return "", fmt.Errorf("the spec has no partition %q", args[0])
		}
		if err := sim.DropMember(ctx, args[0], portGUID(fab, p)); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s dropped from partition %s in opensm's partitions.conf; opensm swept it in", args[1], args[0]), nil
	}
	return "", fmt.Errorf("unknown fault %q", kind)
}

func partitionNamed(s *spec.Spec, name string) *spec.Partition {
	for _, p := range s.InfiniBand.Partitions {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// currentPeer is the topology port the discovered fabric cables p to.
func currentPeer(cur *ibfabric.Fabric, fab *ibspec.Fabric, p ibfabric.PortRef) (ibfabric.PortRef, bool) {
	guidToName := map[uint64]string{}
	var nodeGUID uint64
	for _, sw := range fab.Topology.Switches {
		guidToName[sw.SwitchGUID()] = sw.Name
		if sw.Name == p.Node {
			nodeGUID = sw.SwitchGUID()
		}
	}
	for _, h := range fab.Topology.HCAs {
		guidToName[h.NodeGUID()] = h.Name
		if h.Name == p.Node {
			nodeGUID = h.NodeGUID()
		}
	}
	n := cur.Node(nodeGUID)
	if n == nil || n.Ports[p.Port] == nil || n.Ports[p.Port].Peer == nil {
		return ibfabric.PortRef{}, false
	}
	peer := n.Ports[p.Port].Peer
	name, ok := guidToName[peer.Node]
	return ibfabric.PortRef{Node: name, Port: peer.Port}, ok
}
