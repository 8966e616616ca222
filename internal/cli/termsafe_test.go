package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/plan"
)

// rawControl is the first raw terminal control character in s (C0 but
// newline and tab, DEL, C1, bidi formatting), or -1.
func rawControl(s string) rune {
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f || r >= 0x80 && r <= 0x9f || r == 0x202e || r >= 0x2066 && r <= 0x2069 {
			return r
		}
	}
	return -1
}

// Issue 37: human output escapes control characters from any input: a
// saved plan whose fields carry terminal escapes (re-sealed, as anyone
// who can write the file can) is shown with the escapes visible, on a
// pipe and on a colour terminal alike, and its --json stays JSON.
func TestShowEscapesPlanFields(t *testing.T) {
	e := newApplyEnv(t)
	f, _, _, _ := e.factory()
	planFile := filepath.Join(e.dir, "plan.fab")
	sp := e.savePlan(f, planFile)
	const evil = "\x1b]0;owned\x07\x1b[2J\x1b[8mhidden\u202eexe.txt\r\u009b1A"
	for _, dp := range sp.Plan.Devices {
		dp.Error = "read failed: " + evil
		dp.Steps = append(dp.Steps, drivers.Change{Paths: []string{"x"}, Summary: "set " + evil, Payload: []string{"line " + evil}})
		dp.Unexpressible = append(dp.Unexpressible, plan.Unexpressible{Path: "port/" + evil, Value: evil, Reason: evil})
	}
	if err := sp.Write(planFile); err != nil {
		t.Fatal(err)
	}
	for _, tty := range []bool{false, true} {
		f, _, stdout, stderr := e.factory()
		f.IOStreams.SetStdoutTTY(tty)
		f.IOStreams.SetStderrTTY(tty)
		runCLI(f, "show", "--show-payload", planFile)
		out := stdout.String() + stderr.String()
		if !tty && rawControl(out) >= 0 {
			t.Errorf("tty=%v: raw control character %U in show output:\n%q", tty, rawControl(out), out)
		}
		if tty {
			// Only fabctl's own colour may pass: no OSC, no erase, no
			// concealed text.
			for _, bad := range []string{"\x1b]", "\x1b[2J", "\x1b[8m", "\u202e", "\r", "\u009b"} {
				if strings.Contains(out, bad) {
					t.Errorf("tty: %q reached the terminal:\n%q", bad, out)
				}
			}
		}
		if !strings.Contains(out, `\x1b]0;owned\x07`) || !strings.Contains(out, `\u202e`) {
			t.Errorf("tty=%v: escapes not shown:\n%s", tty, out)
		}
	}
	f, _, stdout, _ := e.factory()
	runCLI(f, "show", "--json", planFile)
	if !strings.Contains(stdout.String(), `\u001b]0;owned\u0007`) || rawControl(stdout.String()) >= 0 {
		t.Errorf("--json:\n%s", stdout)
	}
}

// Issue 37: a saved plan whose embedded spec carries a hostile port name
// (re-sealed, its spec_hash recomputed, as anyone who can write the file
// can) fails apply's re-check: apply loads the embedded sources again,
// and the loader refuses the name at its file:line before any device is
// read or changed.
func TestApplySavedPlanHostileSpec(t *testing.T) {
	e := newApplyEnv(t)
	e.converge()
	f, _, _, _ := e.factory()
	planFile := filepath.Join(e.dir, "plan.fab")
	sp := e.savePlan(f, planFile)
	src := string(sp.Sources[0].Data)
	bad := strings.Replace(src, `"leaf1:Ethernet0"`, `"leaf1:Ethernet0\nhostname PWNED"`, 1)
	if bad == src {
		t.Fatal("leaf1:Ethernet0 not in the test spec")
	}
	sp.Sources[0].Data = []byte(bad)
	sp.Plan.SpecHash = plan.SourceHash(sp.Sources)
	if err := sp.Write(planFile); err != nil {
		t.Fatal(err)
	}
	f, _, stdout, stderr := e.factory()
	code := runCLI(f, "apply", planFile)
	if code == ExitOK {
		t.Fatalf("applied\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
	if len(e.store.Applied) != 0 {
		t.Errorf("devices changed: %v", e.store.Applied)
	}
	if !strings.Contains(stderr.String()+stdout.String(), "Invalid port name") {
		t.Errorf("the refusal does not name the port:\nstdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}
