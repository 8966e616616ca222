package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
	"github.com/fabctl/fabctl/drivers/sm/opensm"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/ibsim"
	"github.com/fabctl/fabctl/testbed/local"
	"github.com/fabctl/fabctl/validate/ibreadback"
)

// StageInfiniBand is validate's InfiniBand read-back stage: the fabric
// discovered over MADs against the spec's switches, cabling, partitions
// and QoS (validate/ibreadback).
const StageInfiniBand = "infiniband"

// runIBStage runs the InfiniBand stage: against the testbed's simulated
// subnet when one is up beside the spec, else with the diagnostics on the
// subnet manager host (over the opensm driver's connection).
func runIBStage(ctx context.Context, s *spec.Spec, opts *ValidateOptions) *ibreadback.Result {
	r, closeFn, where, err := ibRunner(ctx, s, opts)
	if err != nil {
		return &ibreadback.Result{Findings: []ibreadback.Finding{}, Error: err.Error()}
	}
	defer closeFn()
	if opts.Debugf != nil {
		opts.Debugf("infiniband: discovering the fabric %s", where)
	}
	return ibreadback.Run(ctx, s, r)
}

func ibRunner(ctx context.Context, s *spec.Spec, opts *ValidateOptions) (ibfabric.Runner, func(), string, error) {
	dir := local.IBSimDir(local.DefaultDir(opts.Path))
	if _, err := os.Stat(filepath.Join(dir, ibsim.StateFile)); err == nil {
		sim, err := ibsim.Attach(dir)
		if err != nil {
			return nil, nil, "", fmt.Errorf("the testbed's simulated subnet: %w", err)
		}
		return sim.Runner(), func() {}, "in the testbed's simulated subnet (" + dir + ")", nil
	}
	fab := intent.Compile(s)
	if len(fab.SubnetManagers) == 0 {
		return nil, nil, "", fmt.Errorf("no subnet manager to run the diagnostics on (infiniband subnet_manager)")
	}
	sm := fab.SubnetManagers[0]
	d := &opensm.Driver{}
	t := drivers.Target{Device: sm.Device, Intent: sm, Credentials: s.CredentialsByName(sm.Credentials), Insecure: opts.Insecure}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r, closeFn, err := d.DiagRunner(ctx, t)
	if err != nil {
		return nil, nil, "", fmt.Errorf("reach the subnet manager %s: %w", sm.Name, err)
	}
	return r, closeFn, "on the subnet manager " + sm.Name, nil
}

func writeIB(w io.Writer, st styles, r *ibreadback.Result) {
	switch {
	case r.Skipped != "":
		fmt.Fprintf(w, "InfiniBand: skipped: %s\n", r.Skipped)
		return
	case r.Error != "":
		fmt.Fprintf(w, "InfiniBand: %s %s\n", st.Fail.Render("✘ not read:"), r.Error)
		return
	}
	fmt.Fprintf(w, "InfiniBand: %s, %d cabled ports read in %s\n", r.Summary, r.Ports, r.Discover.Round(time.Millisecond))
	if r.Note != "" {
		fmt.Fprintf(w, "  i %s\n", r.Note)
	}
	if len(r.Findings) == 0 {
		fmt.Fprintf(w, "  %s cabling, link widths and speeds, MTU, P_Keys, SL2VL and VL arbitration match the spec\n", st.OK.Render("✔"))
		return
	}
	for _, f := range r.Findings {
		tail := ""
		switch f.Verdict {
		case ibreadback.VerdictRestorable:
			tail = " (fabctl apply restores it)"
		case ibreadback.VerdictMismatch:
			tail = " (no change fixes it)"
		}
		fmt.Fprintf(w, "  %s %s: %s [%s]%s\n", st.Fail.Render("✘"), f.Where, f.Message, f.Kind, tail)
	}
}
