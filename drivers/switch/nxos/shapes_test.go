package nxos

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
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

const corpusDir = "../../../testdata/vendor/nxos"

// shapeRow is one row of shapes.txt.
type shapeRow struct {
	shape, kind, status, evidence string
	re                            *regexp.Regexp
	ranges                        [][2]int // <lo-hi> placeholders, in capture order
}

func loadShapes(t testing.TB) []*shapeRow {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "shapes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []*shapeRow
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		p := strings.Split(l, "\t")
		if len(p) != 4 {
			t.Fatalf("shapes.txt:%d: %d fields, want 4", n, len(p))
		}
		r := &shapeRow{shape: p[0], kind: p[1], status: p[2], evidence: p[3]}
		expr, ranges := shapeExpr(r.shape)
		r.re, r.ranges = regexp.MustCompile("^"+expr+"$"), ranges
		rows = append(rows, r)
	}
	return rows
}

// shapeExpr turns the shape notation of docs/vendor-sources.md into a
// regular expression; <lo-hi> become captures checked against ranges.
func shapeExpr(s string) (string, [][2]int) {
	var b strings.Builder
	var ranges [][2]int
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '<':
			j := strings.IndexByte(s[i:], '>') + i
			ph := s[i+1 : j]
			switch ph {
			case "word", "if", "path", "rev", "time", "json":
				b.WriteString(`\S+`)
			case "int":
				b.WriteString(`\d+`)
			case "dec":
				b.WriteString(`\d+(?:\.\d+)?`)
			case "ints":
				b.WriteString(`\d+(?: \d+)*`)
			case "list":
				b.WriteString(`\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*`)
			default:
				lo, hi, _ := strings.Cut(ph, "-")
				a, _ := strconv.Atoi(lo)
				z, _ := strconv.Atoi(hi)
				ranges = append(ranges, [2]int{a, z})
				b.WriteString(`(\d+)`)
			}
			i = j
		case '{':
			depth, j := 0, i
			for ; j < len(s); j++ {
				if s[j] == '{' {
					depth++
				} else if s[j] == '}' {
					depth--
					if depth == 0 {
						break
					}
				}
			}
			var alts []string
			for _, a := range strings.Split(s[i+1:j], "|") {
				e, r := shapeExpr(a)
				alts = append(alts, e)
				ranges = append(ranges, r...)
			}
			b.WriteString("(?:" + strings.Join(alts, "|") + ")")
			i = j
		case '[':
			j := strings.IndexByte(s[i:], ']') + i
			e, r := shapeExpr(s[i+1 : j])
			b.WriteString("(?:" + e + ")?")
			ranges = append(ranges, r...)
			i = j
		default:
			b.WriteString(regexp.QuoteMeta(string(s[i])))
		}
	}
	return b.String(), ranges
}

// matches reports whether the normalised command fits the row.
func (r *shapeRow) matches(cmd string) bool {
	m := r.re.FindStringSubmatch(cmd)
	if m == nil {
		return false
	}
	for i, rg := range r.ranges {
		if i+1 >= len(m) || m[i+1] == "" {
			continue
		}
		n, err := strconv.Atoi(m[i+1])
		if err != nil || n < rg[0] || n > rg[1] {
			return false
		}
	}
	return true
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

// undocumented returns the commands no SOURCED/DERIVED row matches, and
// counts the rows used.
func undocumented(rows []*shapeRow, cmds []string, used map[string]int) []string {
	var bad []string
	seen := map[string]bool{}
	for _, c := range contextual(cmds) {
		ok := false
		for _, r := range rows {
			if (r.status == "SOURCED" || r.status == "DERIVED") && r.matches(c) {
				ok = true
				if used != nil {
					used[r.shape]++
				}
			}
		}
		if !ok && !seen[c] {
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
	if err := r.drv.Release(ctx, r.target, res); err != nil {
		t.Fatal(err)
	}
	r.emu.Edit(func(c *nxosemu.Config) {
		c.Interfaces["Ethernet1/1"].MTU = 9100
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
	r2 := &rig{emu: emu, drv: &Driver{SSH: opts}, sw: sw2, target: target}
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
	return append(cmds, emu.Commands()...)
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
	used := map[string]int{}
	if bad := undocumented(rows, all, used); len(bad) > 0 {
		t.Fatalf("the driver sends %d command shape(s) with no SOURCED/DERIVED row in testdata/vendor/nxos/shapes.txt:\n  %s", len(bad), strings.Join(bad, "\n  "))
	}
	var unused []string
	for _, r := range rows {
		if r.status != "VENDOR-ONLY" && used[r.shape] == 0 {
			unused = append(unused, r.shape)
		}
	}
	sort.Strings(unused)
	if len(unused) > 0 {
		t.Errorf("shapes.txt lists shapes the driver no longer sends (make them VENDOR-ONLY or drop them):\n  %s", strings.Join(unused, "\n  "))
	}
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
		if got := undocumented(rows, bad, nil); len(got) != 1 {
			t.Errorf("%q: checker reports %q, want the one undocumented line", bad, got)
		}
	}
	if got := undocumented(rows, []string{"configure terminal", "policy-map type queuing Q", "class type queuing c-out-8q-q3",
		"bandwidth remaining percent 0", "exit", "exit", "end", "copy running-config startup-config"}, nil); len(got) != 0 {
		t.Errorf("documented lines reported: %q", got)
	}
}

// TestShapesEvidence: every row's evidence names a corpus file and a line
// inside it (NO-SOURCE rows: "- -- reason"), and no driver row is
// CONTRADICTED or NO-SOURCE.
func TestShapesEvidence(t *testing.T) {
	lines := map[string]int{}
	for _, r := range loadShapes(t) {
		switch r.status {
		case "SOURCED", "DERIVED", "VENDOR-ONLY":
		default:
			t.Errorf("%s: status %s: the driver must not send it", r.shape, r.status)
			continue
		}
		ref, _, _ := strings.Cut(r.evidence, " -- ")
		file, ln, ok := strings.Cut(ref, ":")
		n, err := strconv.Atoi(ln)
		if !ok || err != nil || n < 1 {
			t.Errorf("%s: evidence %q is not <file>:<line>", r.shape, r.evidence)
			continue
		}
		if _, ok := lines[file]; !ok {
			b, err := os.ReadFile(filepath.Join(corpusDir, file))
			if err != nil {
				t.Errorf("%s: %v", r.shape, err)
				continue
			}
			lines[file] = strings.Count(string(b), "\n")
		}
		if n > lines[file] {
			t.Errorf("%s: %s has %d lines, evidence names line %d", r.shape, file, lines[file], n)
		}
	}
	_ = fmt.Sprint
}
