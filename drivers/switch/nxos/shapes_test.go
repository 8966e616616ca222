package nxos

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/nxosemu"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

// The vendor conformance test: every command the driver sends to the
// switch (configuration lines of renders and change lists, incl. removals
// and policy rebuilds, the checkpoint transaction, rollback, save and the
// read commands, and the SSH session set-up) must be a shape that
// testdata/vendor/nxos/shapes.txt lists as SOURCED or DERIVED, with
// evidence pointing into the corpus.

const platform = "nxos"

// corpusDir is the NX-OS vendor corpus.
var corpusDir = filepath.Join("..", "..", "..", "testdata", "vendor", platform)

// loadShapes reads and compiles shapes.txt (switchtest: the notation of
// docs/vendor-sources.md, evidence checked to point into the corpus).
func loadShapes(t testing.TB) []switchtest.CompiledRow {
	t.Helper()
	return switchtest.CompileRows(t, platform, nil)
}

// contextual turns the lines the switch received into shapes.txt's
// notation: a line typed inside a configuration mode is "MODE > LINE"
// (nested modes joined with " > "); exec lines stand alone. A new SSH
// session starts with scrapligo's `terminal width 511`.
func contextual(cmds []string) []string {
	var out, stack []string
	inConfig := false
	enters := func(depth int, l string) bool {
		if strings.HasPrefix(l, "no ") {
			return false
		}
		switch depth {
		case 0:
			return strings.HasPrefix(l, "class-map ") || strings.HasPrefix(l, "policy-map ") || l == "system qos" || strings.HasPrefix(l, "interface ")
		case 1:
			return strings.HasPrefix(stack[0], "policy-map ") && strings.HasPrefix(l, "class ")
		}
		return false
	}
	for _, raw := range cmds {
		l := strings.Join(strings.Fields(raw), " ")
		switch {
		case l == "":
			continue
		case l == "terminal width 511":
			stack, inConfig = nil, false
		case !inConfig:
			if l == "configure terminal" {
				inConfig = true
			}
		case l == "end":
			stack, inConfig = nil, false
		case l == "exit":
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			} else {
				inConfig = false
			}
		default:
			// Implicit exit: a line that opens a mode at a shallower depth.
			for d := len(stack); d >= 0; d-- {
				if d < len(stack) && enters(d, l) {
					stack = stack[:d]
					break
				}
			}
			ctx := append(append([]string(nil), stack...), l)
			out = append(out, strings.Join(ctx, " > "))
			if len(stack) < 2 && enters(len(stack), l) {
				stack = append(stack, l)
			}
			continue
		}
		out = append(out, l)
	}
	return out
}

// undocumented returns the commands (in shapes.txt's notation) no
// SOURCED/DERIVED row matches, each once.
func undocumented(rows []switchtest.CompiledRow, cmds []string) []string {
	var bad []string
	seen := map[string]bool{}
	for _, c := range contextual(cmds) {
		if _, ok := switchtest.Documented(rows, c); !ok && !seen[c] {
			seen[c] = true
			bad = append(bad, c)
		}
	}
	return bad
}

// exercise drives the driver through what it can send: a first apply and
// its save, a read, drift repair (`no match dscp`), an intent change that
// drops classes, ECN, a no-drop class, strict priority, PFC and the
// watchdog (policy rebuilds, removal forms), a refused line (rollback to
// the checkpoint), Rollback and Release, and on a second switch the CoS
// policy and per-port trust changes. It returns the commands both
// emulators received.
func exercise(t *testing.T) []string {
	ctx := context.Background()
	r := newRig(t)
	_, _, steps := r.plan(t)
	res, err := r.drv.Apply(ctx, r.target, steps, drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.drv.Save(ctx, r.target); err != nil {
		t.Fatal(err)
	}
	if _, err := r.drv.ReadLinks(ctx, r.target); err != nil {
		t.Fatal(err)
	}
	if err := r.drv.Release(ctx, r.target, res); err != nil {
		t.Fatal(err)
	}
	r.emu.Edit(func(c *nxosemu.Config) {
		c.Interfaces["Ethernet1/1"].MTU = 1500 // below the floor the spec wants (a larger one is kept)
		c.ClassMaps[ClassMapPrefix+"6"].DSCP[30] = true
	})
	_, _, steps = r.plan(t)
	if res, err = r.drv.Apply(ctx, r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := r.drv.Rollback(ctx, r.target, res); err != nil {
		t.Fatal(err)
	}
	// A refused line: the apply rolls back to its checkpoint.
	r.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^mtu 9100$|^mtu 9000$`), Kind: sshemu.Reject, Output: "% Invalid command at '^' marker.\n", Times: 1})
	_, _, steps = r.plan(t)
	if _, err := r.drv.Apply(ctx, r.target, steps, drivers.ApplyOptions{}); err == nil {
		t.Fatal("a refused line did not fail the apply")
	}
	r.emu.ClearFaults()
	_, _, steps = r.plan(t)
	if _, err := r.drv.Apply(ctx, r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	sw := r.sw
	for d := 24; d < 32; d++ {
		sw.DSCPToTC[d] = 4
	}
	sw.TCs = []intent.TC{{TC: 0, Bandwidth: 40}, {TC: 4, Lossless: true, Bandwidth: 40}, {TC: 6, Bandwidth: 20}}
	sw.Watchdog = intent.Watchdog{}
	for i := range sw.Ports {
		sw.Ports[i].PFC = nil
		sw.Ports[i].Watchdog = false
	}
	_, _, steps = r.plan(t)
	if _, err := r.drv.Apply(ctx, r.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, diff, _ := r.plan(t); len(diff) != 0 {
		t.Fatalf("re-plan not empty: %+v", diff)
	}
	cmds := r.emu.Commands()

	// Second switch: ports trusting pcp (FABCTL-QOS-COS), then trust changes.
	_, f := switchtest.Load(t, switchtest.MixedQoS)
	sw2 := nxosSwitch(t, f, "leaf-nx")
	emu, err := nxosemu.Start(nxosemu.Options{Hostname: "leaf-nx", Password: switchtest.Password, Ports: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu.Close() })
	target, opts := switchtest.Connect(t, emu, sw2, "admin")
	r2 := &rig{emu: emu, drv: NewWith(opts), sw: sw2, target: target}
	_, _, steps = r2.plan(t)
	if _, err := r2.drv.Apply(ctx, r2.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range sw2.Ports {
		if sw2.Ports[i].Trust == spec.TrustPCP {
			sw2.Ports[i].Trust = spec.TrustDSCP
		} else {
			sw2.Ports[i].Trust = spec.TrustPCP
		}
	}
	_, _, steps = r2.plan(t)
	if _, err := r2.drv.Apply(ctx, r2.target, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, diff, _ := r2.plan(t); len(diff) != 0 {
		t.Fatalf("re-plan not empty: %+v", diff)
	}
	cmds = append(cmds, emu.Commands()...)

	// Third switch: Azure Local's configuration, class 7 left unmanaged
	// (its paths taken out of the diff, as the planner does): a class
	// change carries queue 7's `bandwidth percent 1` (carry.go).
	emu3, err := nxosemu.Start(nxosemu.Options{Hostname: "leaf-az", Password: switchtest.Password, Ports: 1, ExtraPorts: []string{"Ethernet1/17"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { emu3.Close() })
	emu3.Boot(corpusBody(t, "azure-local-tor-qos.cfg"))
	sw3 := &intent.Switch{Trust: "pcp", TCs: []intent.TC{{TC: 0, Bandwidth: 48}, {TC: 3, Lossless: true, Bandwidth: 60, ECN: &intent.ECN{Min: 300 * KByte, Max: 300 * KByte, Probability: 100}}},
		Ports: []intent.Port{{Name: "Ethernet1/17", Trust: "pcp", MTU: 9216, MTUFloor: true, PFC: []int{3}}}}
	target3, opts3 := switchtest.Connect(t, emu3, sw3, "admin")
	r3 := &rig{emu: emu3, drv: NewWith(opts3), sw: sw3, target: target3}
	unmanaged := func(diff []intent.AttrChange) []intent.AttrChange {
		var out []intent.AttrChange
		for _, c := range diff {
			if !strings.HasPrefix(c.Path, "tc/7/") && c.Path != "port/Ethernet1/17/trust" {
				out = append(out, c)
			}
		}
		return out
	}
	live3, diff3, _ := r3.plan(t)
	r3.target.Live = live3
	steps3, err := r3.drv.Changes(r3.target, unmanaged(diff3), expressible(sw3))
	if err != nil {
		t.Fatal(err)
	}
	from := len(emu3.Commands())
	if _, err := r3.drv.Apply(ctx, r3.target, steps3, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if live, diff, _ := r3.plan(t); len(unmanaged(diff)) != 0 || live["tc/7/sched"] != live3["tc/7/sched"] || live["tc/7/lossless"] != live3["tc/7/lossless"] {
		t.Fatalf("after the carried apply: diff %+v, tc/7 %q %q (ran %q %q)", unmanaged(diff), live["tc/7/sched"], live["tc/7/lossless"], live3["tc/7/sched"], live3["tc/7/lossless"])
	}
	return append(cmds, emu3.Commands()[from:]...)
}

func TestShapesConformance(t *testing.T) {
	rows := loadShapes(t)
	cmds := exercise(t)
	// Render output is what Changes sends; check it too.
	_, f := load(t, "testdata/nxlab")
	p, err := Build(nxosSwitch(t, f, "leaf4"))
	if err != nil {
		t.Fatal(err)
	}
	var rendered []string
	for _, l := range Script(strings.Split(strings.TrimSpace(p.Config()), "\n")) {
		if !strings.HasPrefix(l, "!") {
			rendered = append(rendered, l)
		}
	}
	all := append(append([]string{"configure terminal"}, rendered...), "end")
	all = append(all, cmds...)
	switchtest.CheckConformance(t, platform, rows, contextual(all))
}

// TestShapesCheckerCatchesUndocumented: the checker fails on forms with no
// vendor source (the audit's watchdog tokens, the old removal forms).
func TestShapesCheckerCatchesUndocumented(t *testing.T) {
	rows := loadShapes(t)
	for _, bad := range [][]string{
		{"configure terminal", "priority-flow-control watch-dog interval 100", "end"},
		{"configure terminal", "priority-flow-control auto-restore multiplier 4", "end"},
		{"configure terminal", "interface Ethernet1/1", "no priority-flow-control mode", "exit", "end"},
		{"configure terminal", "interface Ethernet1/1", "flowcontrol receive on", "exit", "end"},
		{"configure terminal", "policy-map type queuing Q", "class type queuing c-out-8q-q3", "no priority", "exit", "exit", "end"},
		{"configure terminal", "policy-map type network-qos N", "class type network-qos c-8q-nq3", "mtu 9300", "exit", "exit", "end"},
		{"write memory"},
	} {
		if got := undocumented(rows, bad); len(got) != 1 {
			t.Errorf("%q: checker reports %q, want the one undocumented line", bad, got)
		}
	}
	if got := undocumented(rows, []string{"configure terminal", "policy-map type queuing Q", "class type queuing c-out-8q-q3",
		"bandwidth remaining percent 0", "exit", "exit", "end", "copy running-config startup-config"}); len(got) != 0 {
		t.Errorf("documented lines reported: %q", got)
	}
}

// TestShapesEvidence: every row's evidence names a corpus file and a line
// inside it (NO-SOURCE rows: "- -- reason"; switchtest.LoadShapes), and no
// driver row is CONTRADICTED or NO-SOURCE.
func TestShapesEvidence(t *testing.T) {
	switchtest.CheckRows(t, platform, switchtest.LoadShapes(t, platform))
}
