package eos

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/eosemu"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

const platform = "eos"

// corpusDir is the EOS vendor corpus.
var corpusDir = filepath.Join("..", "..", "..", "testdata", "vendor", platform)

// loadShapes reads and compiles shapes.txt (switchtest: the notation of
// docs/vendor-sources.md, evidence checked to point into the corpus).
func loadShapes(t *testing.T) []switchtest.CompiledRow {
	t.Helper()
	return switchtest.CompileRows(t, platform, nil)
}

// normalise rebuilds the configuration mode of each typed command from the
// session's own headers and exits, giving the "A > B" form of shapes.txt.
func normalise(cmds []string) []string {
	var out []string
	var stack []string // mode headers below config
	config := false
	for _, c := range cmds {
		c = strings.TrimSpace(c)
		f := strings.Fields(c)
		if len(f) == 0 {
			continue
		}
		if !config {
			out = append(out, c)
			if len(f) == 3 && f[0] == "configure" && f[1] == "session" {
				config, stack = true, nil
			}
			continue
		}
		switch {
		case c == "exit":
			out = append(out, c)
			if len(stack) == 0 {
				config = false
			} else {
				stack = stack[:len(stack)-1]
			}
			continue
		case c == "end" || c == "commit" || c == "abort":
			out = append(out, c)
			config, stack = false, nil
			continue
		case strings.HasPrefix(c, "show "):
			out = append(out, c)
			continue
		}
		out = append(out, strings.Join(append(append([]string(nil), stack...), c), " > "))
		switch {
		case len(stack) == 0 && (len(f) == 3 && f[0] == "qos" && f[1] == "profile" || len(f) == 2 && f[0] == "interface"):
			stack = append(stack, c)
		case len(stack) == 1 && strings.HasPrefix(stack[0], "qos profile ") && len(f) == 2 && (f[0] == "tx-queue" || f[0] == "uc-tx-queue"):
			stack = append(stack, c)
		}
	}
	return out
}

// exercise drives the driver through everything it can send: plan and
// apply from empty, an empty re-apply, removals of every kind, commit
// timers confirmed and rolled back, a restore-session rollback, a dropped
// connection after the commit, save and the reads. It returns every
// command each emulator received.
func exercise(t *testing.T) []string {
	t.Helper()
	ctx := context.Background()
	var cmds []string

	// 1. Apply the intent with a pause port, then an intent that removes
	// things: the watchdog, ECN on a class, a class, PFC on a port, pause,
	// and a class that turns strict.
	r := newRig(t)
	richer := cloneSwitch(r.sw)
	richer.Ports[0].Pause = true
	apply := func(sw *intent.Switch, opts drivers.ApplyOptions) drivers.Result {
		t.Helper()
		tg := r.target
		tg.Intent = sw
		_, diff, steps := switchtest.Plan(t, r.drv, tg, switchtest.Desired(r.drv, sw))
		if len(diff) == 0 {
			return drivers.Result{}
		}
		res, err := r.drv.Apply(ctx, tg, steps, opts)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	apply(richer, drivers.ApplyOptions{})
	nowd := cloneSwitch(r.sw)
	nowd.Ports[2].Watchdog = false
	apply(nowd, drivers.ApplyOptions{})
	fewer := cloneSwitch(r.sw)
	fewer.Watchdog.Enabled = false
	fewer.Ports[1].PFC = nil
	var tcs []intent.TC
	for _, tc := range fewer.TCs {
		switch {
		case tc.ECN != nil:
			tc.ECN = nil
		case !tc.Strict:
			tc.Strict, tc.Bandwidth = true, 0
		case tc.Strict:
			continue // dropped
		}
		tcs = append(tcs, tc)
	}
	fewer.TCs = tcs
	apply(fewer, drivers.ApplyOptions{})
	// The same steps again: an empty session, aborted.
	tg := r.target
	tg.Intent = r.sw
	_, _, steps := switchtest.Plan(t, r.drv, tg, switchtest.Desired(r.drv, r.sw))
	if _, err := r.drv.Apply(ctx, tg, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.drv.Apply(ctx, tg, steps, drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	// Commit timer, confirmed; then a commit timer rolled back while pending.
	res := apply(richer, drivers.ApplyOptions{ConfirmTimeout: time.Minute})
	if err := r.drv.Confirm(ctx, tg, res); err != nil {
		t.Fatal(err)
	}
	res = apply(fewer, drivers.ApplyOptions{ConfirmTimeout: time.Minute})
	if err := r.drv.Rollback(ctx, tg, res); err != nil {
		t.Fatal(err)
	}
	// A normal commit rolled back with a restore session.
	res = apply(r.sw, drivers.ApplyOptions{})
	if err := r.drv.Rollback(ctx, tg, res); err != nil {
		t.Fatal(err)
	}
	if err := r.drv.Save(ctx, tg); err != nil {
		t.Fatal(err)
	}
	if _, err := r.drv.ReadLinks(ctx, tg); err != nil {
		t.Fatal(err)
	}
	cmds = append(cmds, r.emu.Commands()...)

	// 2. A prior configuration of someone else's, applied over and rolled
	// back (TestRollback's edit), and a drop right after the commit.
	r2 := newRig(t)
	r2.emu.Edit(func(c *eosemu.Config) {
		c.Interfaces["Ethernet1"].MTU = 9100
		c.Interfaces["Ethernet1"].Trust = "cos" // a trust line of the interface's own
		c.DSCP[10] = 2
		c.WDTimeout, c.WDRecovery, c.WDPolling = "1", "1", "0.5"
		other := eosemu.NewProfile()
		other.Trust, other.NoDrop[4], other.PFCOn = "cos", true, true
		c.Profiles["OTHER"] = other
	})
	_, _, steps = r2.plan(t)
	res, err := r2.drv.Apply(ctx, r2.target, steps, drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.drv.Rollback(ctx, r2.target, res); err != nil {
		t.Fatal(err)
	}
	r2.emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^commit$`), Kind: sshemu.DropAfter, Times: 1})
	if _, err := r2.drv.Apply(ctx, r2.target, steps, drivers.ApplyOptions{}); err == nil {
		t.Fatal("drop after commit not reported")
	}
	cmds = append(cmds, r2.emu.Commands()...)

	// 3. A Strata switch (uc-tx-queue): the intent, then the one that
	// clears ECN and bandwidth.
	r3 := newRigModel(t, "DCS-7060X6-64PE-F")
	for _, sw := range []*intent.Switch{r3.sw, fewer} {
		tg := r3.target
		tg.Intent = sw
		_, _, steps := switchtest.Plan(t, r3.drv, tg, switchtest.Desired(r3.drv, sw))
		if _, err := r3.drv.Apply(ctx, tg, steps, drivers.ApplyOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return append(cmds, r3.emu.Commands()...)
}

func cloneSwitch(sw *intent.Switch) *intent.Switch {
	c := *sw
	c.TCs = append([]intent.TC(nil), sw.TCs...)
	c.Ports = append([]intent.Port(nil), sw.Ports...)
	return &c
}

// TestShapesDocumented is the vendor conformance check: every command the
// driver sends (collected from the emulator) and every line it renders
// must match a SOURCED or DERIVED row of testdata/vendor/eos/shapes.txt.
func TestShapesDocumented(t *testing.T) {
	rows := loadShapes(t)
	cmds := normalise(exercise(t))
	// The rendered files (render shapes) of every example EOS switch.
	for _, c := range []struct{ dir, sw string }{{"testbed", "leaf2"}, {"ai-pod", "leaf3"}, {switchtest.MixedQoS, "leaf-eos"}} {
		var f *intent.Fabric
		if strings.HasPrefix(c.dir, "..") {
			_, f = switchtest.Load(t, c.dir)
		} else {
			_, f = load(t, c.dir)
		}
		sw := eosSwitch(t, f, c.sw)
		files, err := (&Driver{}).Render(drivers.Target{Device: sw.Device, Intent: sw})
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range strings.Split(string(files[0].Data), "\n") {
			if l == "" || l == "end" || strings.HasPrefix(strings.TrimSpace(l), "!") {
				continue
			}
			lines = append(lines, l)
		}
		cmds = append(cmds, normalise(append([]string{"configure session render"}, Script(lines)...))[1:]...)
	}
	switchtest.CheckConformance(t, platform, rows, cmds)
}

// TestShapeCheckFails: the check rejects an undocumented form (the one-line
// watchdog, `no priority-flow-control on`) and a range violation.
func TestShapeCheckFails(t *testing.T) {
	rows := loadShapes(t)
	for _, c := range normalise([]string{"configure session x",
		"priority-flow-control pause watchdog default timeout 0.2 recovery-time 0.4 polling-interval 0.1",
		"qos profile FABCTL", "no priority-flow-control on", "exit",
		"interface Ethernet1", "mtu 9300", "exit", "abort"}) {
		if strings.HasPrefix(c, "priority-flow-control") || strings.HasSuffix(c, "no priority-flow-control on") || strings.HasSuffix(c, "mtu 9300") {
			if r, ok := switchtest.Documented(rows, c); ok {
				t.Errorf("%q accepted as %q", c, r.Text)
			}
		} else if _, ok := switchtest.Documented(rows, c); !ok {
			t.Errorf("%q refused", c)
		}
	}
}
