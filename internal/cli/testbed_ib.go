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
	"github.com/fabctl/fabctl/testbed/ibsim"
	"github.com/fabctl/fabctl/testbed/local"
)

// TestbedFaultOptions are the inputs of fabctl testbed fault.
type TestbedFaultOptions struct {
	TestbedOptions
	Factory *Factory
	Kind    string   // one of ibsim.Faults
	Args    []string // the kind's arguments
}

func newCmdTestbedFault(f *Factory, runF func(*TestbedFaultOptions) error) *cobra.Command {
	var dir string
	var kinds strings.Builder
	for _, k := range ibsim.Faults {
		usage := k.Name + " " + strings.Join(k.Args, " ")
		fmt.Fprintf(&kinds, "  %-32s %s\n", usage, k.Usage)
	}
	cmd := &cobra.Command{
		Use:   "fault SPEC KIND ARGS...",
		Short: "Break the simulated InfiniBand fabric the way real ones break, for validate to catch",
		Long: `Inject a fault into the simulated InfiniBand subnet "testbed up" started for SPEC
(ibsim with the real opensm), the way a real fabric goes wrong. validate, plan
and drift then name it by port. Ports are the spec's: SWITCH:PORT (leaf1:2) or
HOST:NIC (cn01:ib0).

` + kinds.String() + `
Cabling faults (link-down, width, miswire, unreadable) are findings no change
fixes: plan and drift exit 6. Port-table faults (partition-drop and the SMP
ones) are changes: plan shows the restore, apply makes it.

Exit status: 0 done, 1 error (no simulated subnet, unknown port, ...), 64 usage.`,
		Example: `  fabctl testbed fault examples/ib-testbed link-down leaf1:2
  fabctl validate --skip-traffic examples/ib-testbed     # leaf1 port 2: no link to sm01:ib0 ... [link-down]
  fabctl testbed fault examples/ib-testbed link-up leaf1:2
  fabctl testbed fault examples/ib-testbed miswire cn01:ib0 cn03:ib0
  fabctl testbed fault examples/ib-testbed pkey-remove leaf2:2 storage
  fabctl plan examples/ib-testbed                        # restore leaf2 port 2's P_Key table ...`,
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
	n, ok := ibsim.FaultArity(o.Kind)
	if !ok {
		var names []string
		for _, k := range ibsim.Faults {
			names = append(names, k.Name)
		}
		return &FlagError{Err: fmt.Errorf("unknown fault %q: use %s", o.Kind, strings.Join(names, ", "))}
	}
	if len(o.Args) != n {
		return &FlagError{Err: fmt.Errorf("fault %s takes %d argument(s), got %d (fabctl testbed fault --help)", o.Kind, n, len(o.Args))}
	}
	s, err := loadSpecFor(o.Factory, o.IO, o.Spec, o.JSON)
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
	msg, err := sim.Inject(ctx, s, fab, o.Kind, o.Args)
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
