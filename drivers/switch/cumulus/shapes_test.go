package cumulus

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/switchtest"
	"github.com/fabctl/fabctl/testbed/cumulusemu"
	"github.com/fabctl/fabctl/testbed/sshemu"
)

const corpusDir = "../../../testdata/vendor/cumulus"

// shapeRow is one row of shapes.txt.
type shapeRow struct {
	shape, kind, status, evidence string
	line                          int
}

func loadShapes(t *testing.T) []shapeRow {
	t.Helper()
	f, err := os.Open(filepath.Join(corpusDir, "shapes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []shapeRow
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
		rows = append(rows, shapeRow{p[0], p[1], p[2], p[3], n})
	}
	return rows
}

// matchShape reports whether cmd has the form of shape (notation:
// docs/vendor-sources.md "Shape index format"): token by token, <lo-hi>
// an integer in range, <int> a non-negative integer, <word>/<rev> one
// token, <if> an swp name, {a|b} one of the words.
func matchShape(shape, cmd string) bool {
	st, ct := strings.Fields(shape), strings.Fields(cmd)
	if len(st) != len(ct) {
		return false
	}
	for i, s := range st {
		c := ct[i]
		switch {
		case s == "<int>":
			if _, err := strconv.ParseUint(c, 10, 64); err != nil {
				return false
			}
		case s == "<word>" || s == "<rev>" || s == "<time>":
			if c == "" {
				return false
			}
		case s == "<if>":
			if !regexp.MustCompile(`^swp[0-9]+(s[0-9]+)?$`).MatchString(c) {
				return false
			}
		case rangeRe.MatchString(s):
			m := rangeRe.FindStringSubmatch(s)
			lo, _ := strconv.Atoi(m[1])
			hi, _ := strconv.Atoi(m[2])
			v, err := strconv.Atoi(c)
			if err != nil || v < lo || v > hi || strconv.Itoa(v) != c {
				return false
			}
		case strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}"):
			ok := false
			for _, alt := range strings.Split(s[1:len(s)-1], "|") {
				ok = ok || alt == c
			}
			if !ok {
				return false
			}
		case strings.HasPrefix(s, "<"):
			return false // a placeholder this matcher does not know: no match
		default:
			if s != c {
				return false
			}
		}
	}
	return true
}

var rangeRe = regexp.MustCompile(`^<(\d+)-(\d+)>$`)

// documented returns the SOURCED/DERIVED row cmd matches, or nil.
func documented(rows []shapeRow, cmd string) *shapeRow {
	for i, r := range rows {
		if (r.status == "SOURCED" || r.status == "DERIVED") && matchShape(r.shape, cmd) {
			return &rows[i]
		}
	}
	return nil
}

// TestShapesIndex: every row is well formed and its evidence points at a
// line inside a corpus file; no row the driver sends is CONTRADICTED or
// NO-SOURCE.
func TestShapesIndex(t *testing.T) {
	for _, r := range loadShapes(t) {
		switch r.status {
		case "SOURCED", "DERIVED", "VENDOR-ONLY":
		default:
			t.Errorf("shapes.txt:%d: status %s: the driver must not send %q", r.line, r.status, r.shape)
		}
		ref, _, _ := strings.Cut(r.evidence, " -- ")
		file, ln, ok := strings.Cut(ref, ":")
		n, err := strconv.Atoi(ln)
		if !ok || err != nil {
			t.Errorf("shapes.txt:%d: evidence %q is not <file>:<line>", r.line, r.evidence)
			continue
		}
		b, err := os.ReadFile(filepath.Join(corpusDir, file))
		if err != nil {
			t.Errorf("shapes.txt:%d: %v", r.line, err)
			continue
		}
		if lines := strings.Count(string(b), "\n"); n < 1 || n > lines {
			t.Errorf("shapes.txt:%d: %s has %d lines, evidence points at %d", r.line, file, lines, n)
		}
	}
}

// TestShapesMatcherRefusesUndocumented: the matcher is not vacuous: the
// forms the driver sent before the vendor audit, with several attributes
// in one nv set, match no documented row.
func TestShapesMatcherRefusesUndocumented(t *testing.T) {
	rows := loadShapes(t)
	for _, bad := range []string{
		"nv set qos pfc default-global tx enable rx enable",
		"nv set qos congestion-control default-global traffic-class 3 min-threshold 150000 max-threshold 1500000 probability 100 ecn enable",
		"nv set qos egress-scheduler default-global traffic-class 0 mode dwrr bw-percent 50",
		"nv set qos pfc-watchdog polling-interval 100 robustness 2",
		"nv config apply -y",
		"nv config history",
		"nv set interface swp1 link mtu 9300",
		"nv set qos egress-scheduler default-global traffic-class 8 mode dwrr",
	} {
		if r := documented(rows, bad); r != nil {
			t.Errorf("%q matches shapes.txt:%d %q", bad, r.line, r.shape)
		}
	}
	if documented(rows, "nv set qos pfc default-global tx enable") == nil {
		t.Fatal("the matcher refuses a documented form")
	}
}

// TestShapesConformance collects every command the driver sends to the
// emulator (sshemu records them) over representative runs: render, plan
// and apply from empty with several profiles, a port moved back to
// default-global (nv unset), drift repair, a refused line (detach), a drop
// after the apply (re-apply of the recorded revision), Rollback, Read and
// Save; plus every line of Render for the golden specs. It fails on any
// command that matches no SOURCED or DERIVED row of shapes.txt.
func TestShapesConformance(t *testing.T) {
	rows := loadShapes(t)
	sent := map[string]bool{}
	for _, lines := range renderAll(t) {
		for _, l := range lines {
			sent[l] = true
		}
	}

	_, f := switchtest.Load(t, switchtest.MixedQoS)
	sw := clSwitch(t, f, "leaf-cl")
	emu, err := cumulusemu.Start(cumulusemu.Options{Hostname: "leaf-cl", Password: switchtest.Password, Ports: 4, AutoSave: "disabled"})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Close()
	target, opts := switchtest.Connect(t, emu, sw, "cumulus")
	drv := &Driver{SSH: opts}
	ctx := context.Background()
	planApply := func(opts drivers.ApplyOptions) (drivers.Result, error) {
		t.Helper()
		_, _, steps := switchtest.Plan(t, drv, target, expressible(sw))
		return drv.Apply(ctx, target, steps, opts)
	}
	res, err := planApply(drivers.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := drv.Save(ctx, target); err != nil {
		t.Fatal(err)
	}
	if err := drv.Rollback(ctx, target, res); err != nil {
		t.Fatal(err)
	}
	// A refused line: the pending revision is detached.
	emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`link mtu`), Kind: sshemu.Reject, Output: "Error: refused\n", Times: 1})
	if _, err := planApply(drivers.ApplyOptions{}); err == nil {
		t.Fatal("refused line applied")
	}
	// A drop right after the apply: the recorded revision is re-applied.
	emu.Inject(sshemu.Fault{Match: regexp.MustCompile(`^nv config apply --assume-yes$`), Kind: sshemu.DropAfter, Times: 1})
	if _, err := planApply(drivers.ApplyOptions{}); err == nil {
		t.Fatal("dropped apply succeeded")
	}
	if _, err := planApply(drivers.ApplyOptions{ConfirmTimeout: 1}); err != nil {
		t.Fatal(err)
	}
	// Drift, then the legacy port returns to default-global (nv unset).
	emu.Edit(func(tr map[string]any) { cumulusemu.SetPath(tr, "interface.swp2.link.mtu", 1600) })
	for i := range sw.Ports {
		if sw.Ports[i].Name == "swp4" {
			sw.Ports[i].Trust = "dscp"
		}
		if sw.Ports[i].Name == "swp3" {
			sw.Ports[i].PFC = []int{3}
		}
	}
	if _, err := planApply(drivers.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := drv.Save(ctx, target); err != nil {
		t.Fatal(err)
	}
	// A telemetry poll (counters.go).
	if _, err := drv.ReadCounters(ctx, target); err != nil {
		t.Fatal(err)
	}
	for _, c := range emu.Commands() {
		c = strings.TrimSpace(c)
		if c == "" || c == "exit" { // scrapligo's on-close (Platform)
			continue
		}
		sent[c] = true
	}

	var bad []string
	used := map[int]bool{}
	for c := range sent {
		if r := documented(rows, c); r != nil {
			used[r.line] = true
		} else {
			bad = append(bad, c)
		}
	}
	sort.Strings(bad)
	for _, c := range bad {
		t.Errorf("sent without a SOURCED/DERIVED shape in testdata/vendor/cumulus/shapes.txt: %s", c)
	}
	for _, r := range rows {
		if r.status != "VENDOR-ONLY" && !used[r.line] {
			t.Errorf("shapes.txt:%d lists %q as sent, but no run sent it", r.line, r.shape)
		}
	}
	t.Logf("%d distinct commands, %d shapes", len(sent), len(used))
}
