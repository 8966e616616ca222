package cli

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibspec"
	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/testbed/ibsim"
	"github.com/fabctl/fabctl/testbed/local"
)

// TestbedFaultOptions are the inputs of fabctl testbed fault.
type TestbedFaultOptions struct {
	TestbedOptions
	Factory *Factory
	Kind    string   // one of ibsim.Faults, or local.EthFaultKinds on an Ethernet fabric
	Args    []string // the kind's arguments
}

func newCmdTestbedFault(f *Factory, runF func(*TestbedFaultOptions) error) *cobra.Command {
	var dir string
	var kinds, ethKinds strings.Builder
	for _, k := range ibsim.Faults {
		usage := k.Name + " " + strings.Join(k.Args, " ")
		fmt.Fprintf(&kinds, "  %-32s %s\n", usage, k.Usage)
	}
	for _, k := range local.EthFaultKinds {
		usage := k.Name + " " + strings.Join(k.Args, " ")
		fmt.Fprintf(&ethKinds, "  %-32s %s\n", usage, k.Usage)
	}
	cmd := &cobra.Command{
		Use:   "fault SPEC KIND ARGS...",
		Short: "Break the testbed's fabric the way real ones break, for validate to catch",
		Long: `Inject a fault into the fabric "testbed up" started for SPEC, the way a real
fabric goes wrong. validate, plan and drift then name it by port. Ports are the
spec's: SWITCH:PORT (leaf1:2, leaf1:Ethernet0) or HOST:NIC (cn01:ib0, h1:eth1).

On an InfiniBand fabric, the simulated subnet (ibsim with the real opensm):

` + kinds.String() + `
Cabling faults (link-down, width, miswire, unreadable) are findings no change
fixes: plan and drift exit 6. Port-table faults (partition-drop and the SMP
ones) are changes: plan shows the restore, apply makes it.

On an Ethernet fabric, the testbed's veth cabling (docs/testbed.md#ethernet-cabling-and-lldp):

` + ethKinds.String() + `
Each is a cabling finding no change fixes: plan and drift exit 6, validate
exits 6, naming the link, both ends and what was seen.

Exit status: 0 done, 1 error (no simulated subnet, unknown port, ...), 64 usage.`,
		Example: `  fabctl testbed fault examples/ib-testbed link-down leaf1:2
  fabctl validate --skip-traffic examples/ib-testbed     # leaf1 port 2: no link to sm01:ib0 ... [link-down]
  fabctl testbed fault examples/ib-testbed link-up leaf1:2
  fabctl testbed fault examples/ib-testbed miswire cn01:ib0 cn03:ib0
  fabctl testbed fault examples/ib-testbed pkey-remove leaf2:2 storage
  fabctl plan examples/ib-testbed                        # restore leaf2 port 2's P_Key table ...
  fabctl testbed fault examples/testbed miswire h1:eth1 h3:eth1
  fabctl validate --skip-traffic examples/testbed        # h1:eth1: LLDP neighbour is leaf2:Ethernet1, the spec cables leaf1:Ethernet0 [miswired]
  fabctl testbed fault examples/testbed miswire h1:eth1 h3:eth1   # cables back
  fabctl testbed fault examples/testbed speed leaf1:Ethernet0 1G`,
		Args: usageArgs(cobra.MinimumNArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := &TestbedFaultOptions{TestbedOptions: *testbedOpts(f, args[:1]), Factory: f, Kind: args[1], Args: args[2:]}
			o.Dir = dir
			if runF != nil {
				return runF(o)
			}
			return testbedFaultRun(o)
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "Testbed directory (default: .fabctl/testbed beside the spec)")
	return cmd
}

func testbedFaultRun(o *TestbedFaultOptions) error {
	_, ib := ibsim.FaultArity(o.Kind)
	_, eth := local.EthFaultArity(o.Kind)
	if !ib && !eth {
		var names []string
		for _, k := range ibsim.Faults {
			names = append(names, k.Name)
		}
		var ethNames []string
		for _, k := range local.EthFaultKinds {
			ethNames = append(ethNames, k.Name)
		}
		return &FlagError{Err: fmt.Errorf("unknown fault %q: use %s on InfiniBand, %s on Ethernet", o.Kind, strings.Join(names, ", "), strings.Join(ethNames, ", "))}
	}
	s, err := loadSpecFor(o.Factory, o.IO, o.Spec, o.JSON)
	if err != nil {
		return err
	}
	if linktruth.Applies(s) {
		return testbedEthFault(o)
	}
	n, ok := ibsim.FaultArity(o.Kind)
	if !ok {
		return &FlagError{Err: fmt.Errorf("fault %s is an Ethernet fault; the spec's fabric is InfiniBand", o.Kind)}
	}
	if len(o.Args) != n {
		return &FlagError{Err: fmt.Errorf("fault %s takes %d argument(s), got %d (fabctl testbed fault --help)", o.Kind, n, len(o.Args))}
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
	msg, err := sim.Inject(ctx, s, fab, o.Kind, o.Args)
	if err != nil {
		return err
	}
	return faultDone(o, msg)
}

func faultDone(o *TestbedFaultOptions, msg string) error {
	if o.JSON {
		return writeJSON(o.IO.Out, map[string]any{"fault": o.Kind, "args": o.Args, "done": msg})
	}
	st := newStyles(o.IO.Out, o.IO.ColorEnabled())
	fmt.Fprintf(o.IO.Out, "%s %s\n", st.OK.Render("✔"), msg)
	return nil
}

// testbedEthFault makes an Ethernet fault on the local testbed's veth
// cabling (testbed/local InjectEth).
func testbedEthFault(o *TestbedFaultOptions) error {
	n, ok := local.EthFaultArity(o.Kind)
	if !ok {
		return &FlagError{Err: fmt.Errorf("fault %s is an InfiniBand fault; the spec's fabric is Ethernet (fabctl testbed fault --help)", o.Kind)}
	}
	if len(o.Args) != n {
		return &FlagError{Err: fmt.Errorf("fault %s takes %d argument(s), got %d (fabctl testbed fault --help)", o.Kind, n, len(o.Args))}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	msg, err := local.InjectEth(ctx, o.dir(), o.Kind, o.Args)
	if err != nil {
		if errors.Is(err, local.ErrNoTestbed) {
			return fmt.Errorf("%w (fabctl testbed up %s)", err, o.Spec)
		}
		return err
	}
	return faultDone(o, msg)
}
