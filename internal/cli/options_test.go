package cli

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/fabctl/fabctl/validate/verbs"
)

// group is a command group holding one leaf, for running a leaf under a
// bare root as fabctl does.
func group(use string, leaf *cobra.Command) *cobra.Command {
	g := &cobra.Command{Use: use}
	g.AddCommand(leaf)
	return g
}

// TestLeafCommandsTakeRunF: the commands that run a testbed, the traffic
// test, telemetry or topology, inject a testbed fault, or write a completion script parse their flags into Options and
// hand them to an injected run function, as every other command does
// (cli/cli's NewCmdX(f, runF)): nothing runs.
func TestLeafCommandsTakeRunF(t *testing.T) {
	f, _, _, _ := testFactory()

	var vo *VerbsOptions
	code := execCmd(f, group("verbs", newCmdVerbsSide(f, false, func(o *VerbsOptions) error { vo = o; return nil })),
		"verbs", "client", "198.18.0.1", "--op", "read", "-s", "4KiB", "--backend", "perftest", "--cpus", "0-1")
	if code != ExitOK || vo == nil || vo.Server || vo.Peer != "198.18.0.1" || vo.Test.Op != verbs.Op("read") || vo.Test.Size != 4096 ||
		vo.Backend != "perftest" || len(vo.Local.CPUs) != 2 {
		t.Errorf("verbs client: exit %d, %+v", code, vo)
	}

	var to *TestbedOptions
	runTB := func(o *TestbedOptions) error { to = o; return nil }
	for _, c := range []struct {
		leaf *cobra.Command
		args []string
		want TestbedOptions
	}{
		{newCmdTestbedUp(f, runTB), []string{"up", "spec", "--dir", "d", "--fabric-netns", "fab2", "--yang-dir", "y"},
			TestbedOptions{Spec: "spec", Dir: "d", FabricNetns: "fab2", YANGDir: "y"}},
		{newCmdTestbedDown(f, runTB), []string{"down"}, TestbedOptions{Spec: "."}},
		{newCmdTestbedStatus(f, runTB), []string{"status", "s", "--dir", "d"}, TestbedOptions{Spec: "s", Dir: "d"}},
		{newCmdTestbedServe(f, runTB), []string{"serve", "--dir", "d"}, TestbedOptions{Dir: "d"}},
	} {
		to = nil
		code := execCmd(f, group("testbed", c.leaf), append([]string{"testbed"}, c.args...)...)
		if code != ExitOK || to == nil || to.Spec != c.want.Spec || to.Dir != c.want.Dir || to.FabricNetns != c.want.FabricNetns && c.want.FabricNetns != "" ||
			to.YANGDir != c.want.YANGDir || to.Getenv == nil {
			t.Errorf("testbed %v: exit %d, %+v", c.args, code, to)
		}
	}

	var co *ContainerlabOptions
	code = execCmd(f, group("testbed", newCmdTestbedContainerlab(f, func(o *ContainerlabOptions) error { co = o; return nil })),
		"testbed", "containerlab", "spec", "-o", "lab", "--strict", "--kind", "openconfig=arista_ceos")
	if code != ExitOK || co == nil || co.Path != "spec" || co.Out != "lab" || !co.Strict || len(co.Kinds) != 1 {
		t.Errorf("testbed containerlab: exit %d, %+v", code, co)
	}

	var tpo *TopologyOptions
	code = execCmd(f, NewCmdTopology(f, func(o *TopologyOptions) error { tpo = o; return nil }), "topology", "spec", "--format", "k8s-labels")
	if code != ExitOK || tpo == nil || tpo.Path != "spec" || tpo.Format != "k8s-labels" || tpo.Factory != f {
		t.Errorf("topology: exit %d, %+v", code, tpo)
	}
	var teo *TelemetryOptions
	runTel := func(o *TelemetryOptions) error { teo = o; return nil }
	code = execCmd(f, group("telemetry", newCmdTelemetryServe(f, runTel)), "telemetry", "serve", "spec", "--listen", "127.0.0.1:0", "--sample", "5s")
	if code != ExitOK || teo == nil || teo.Path != "spec" || teo.Listen != "127.0.0.1:0" || teo.Sample.Seconds() != 5 {
		t.Errorf("telemetry serve: exit %d, %+v", code, teo)
	}
	teo = nil
	code = execCmd(f, group("telemetry", newCmdTelemetryRules(f, runTel)), "telemetry", "rules", "spec", "--pause-rate", "50")
	if code != ExitOK || teo == nil || teo.Path != "spec" || teo.PauseRate != 50 {
		t.Errorf("telemetry rules: exit %d, %+v", code, teo)
	}

	var fo *TestbedFaultOptions
	code = execCmd(f, group("testbed", newCmdTestbedFault(f, func(o *TestbedFaultOptions) error { fo = o; return nil })),
		"testbed", "fault", "spec", "width", "leaf1:2", "4x", "--dir", "d")
	if code != ExitOK || fo == nil || fo.Spec != "spec" || fo.Dir != "d" || fo.Kind != "width" || len(fo.Args) != 2 || fo.Args[1] != "4x" {
		t.Errorf("testbed fault: exit %d, %+v", code, fo)
	}

	// ibmad parses its own arguments: they reach it as given.
	var ibo *IBMADOptions
	code = execCmd(f, NewCmdIBMAD(f, func(o *IBMADOptions) error { ibo = o; return nil }), "ibmad", "read", "--json", "-C", "mlx5_0")
	if code != ExitOK || ibo == nil || len(ibo.Args) != 4 || ibo.Args[1] != "--json" || ibo.Ctx == nil {
		t.Errorf("ibmad: exit %d, %+v", code, ibo)
	}

	var cpl *CompletionOptions
	code = execCmd(f, NewCmdCompletion(f, func(o *CompletionOptions) error { cpl = o; return nil }), "completion", "zsh")
	if code != ExitOK || cpl == nil || cpl.Shell != "zsh" || cpl.Root == nil {
		t.Errorf("completion: exit %d, %+v", code, cpl)
	}
}
