package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibspec"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/ibsim"
)

// The InfiniBand part of the testbed: a spec on an InfiniBand fabric with
// InfiniBand switches and cabling runs as a simulated subnet (ibsim, with
// the real opensm and infiniband-diags under libumad2sim; testbed/ibsim)
// in DIR/ibsim. Its topology is the spec's (drivers/sm/ibfabric/ibspec):
// switches, the adapters of the hosts cabled to them, every cable at its
// width and speed. opensm starts on the subnet manager host's adapter as
// on a freshly installed SM host: at its defaults, without fabctl's files
// (`fabctl apply` writes them and signals it, as on a real one: the spec
// points the opensm driver at DIR/ibsim/opensm/opensm.conf and
// DIR/ibsim/opensm.pid with infiniband { sm_connect = "local",
// opensm_conf, opensm_pid_file }). DIR/ibsim/bin holds wrappers that run
// infiniband-diags on the simulated subnet (ibsim.Sim.WriteDiagWrappers):
// with infiniband diags_dir pointing there, plan, apply and validate read
// the simulated fabric back as they read a real one on its SM host.

// IBSimDirName is the simulated subnet's directory under the testbed's.
const IBSimDirName = "ibsim"

// OpenSMPIDFile is the pid file the testbed writes for the simulated
// subnet's opensm, under IBSimDirName.
const OpenSMPIDFile = "opensm.pid"

// IBSimDir is the simulated subnet's directory of a testbed directory.
func IBSimDir(dir string) string { return filepath.Join(dir, IBSimDirName) }

// upIB starts the simulated subnet when the spec has an InfiniBand fabric.
func upIB(s *spec.Spec, r *Record, opts Options) error {
	if !ibspec.HasFabric(s) {
		return nil
	}
	if err := ibsim.Available(); err != nil {
		return fmt.Errorf("the spec has an InfiniBand fabric: %w", err)
	}
	f, err := ibspec.FromSpec(s)
	if err != nil {
		return fmt.Errorf("InfiniBand topology: %w", err)
	}
	if f.SMNode == "" {
		return errors.New("InfiniBand topology: the subnet manager host (infiniband subnet_manager) has no adapter cabled to an InfiniBand switch")
	}
	dir := IBSimDir(r.Dir)
	var logb bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	start := time.Now()
	sim, err := ibsim.Start(ctx, ibsim.Config{Topology: f.Topology, SMNode: f.SMNode, Dir: dir, Detach: true, Log: &logb})
	if err != nil {
		_ = os.RemoveAll(dir)
		return fmt.Errorf("simulated InfiniBand subnet: %w", err)
	}
	r.IBSim = dir
	if s.InfiniBand != nil && s.InfiniBand.SubnetManager != "" {
		r.Devices = append(r.Devices, "sm."+s.InfiniBand.SubnetManager)
	}
	if err := safefile.WriteFile(filepath.Join(dir, OpenSMPIDFile), []byte(strconv.Itoa(sim.OpenSMPID)+"\n"), 0o644, safefile.Testbed); err != nil {
		return err
	}
	if _, err := sim.WriteDiagWrappers(); err != nil {
		return fmt.Errorf("simulated InfiniBand subnet: %w", err)
	}
	logf(opts.Log, "InfiniBand: ibsim (pid %d) and opensm (pid %d, on %s) up in %s: %d switches, %d adapters, %d links; SUBNET UP",
		sim.IBSimPID, sim.OpenSMPID, f.SMNode, time.Since(start).Round(time.Millisecond), len(f.Topology.Switches), len(f.Topology.HCAs), len(f.Topology.Links))
	return nil
}

// downIB stops the simulated subnet and removes its directory.
func downIB(r *Record, log func(string, ...any)) error {
	if r.IBSim == "" {
		return nil
	}
	err := ibsim.Down(r.IBSim)
	if rerr := os.RemoveAll(r.IBSim); rerr != nil {
		err = errors.Join(err, rerr)
	}
	log("stopped the simulated InfiniBand subnet (%s)", r.IBSim)
	return err
}

// ibLive reports whether the recorded simulated subnet runs.
func ibLive(r *Record) bool {
	if r.IBSim == "" {
		return false
	}
	_, err := ibsim.Attach(r.IBSim)
	return err == nil
}
