package lint

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
)

// topo is a small topology description for the deadlock tests.
type topo struct {
	b        strings.Builder
	head     string
	addrNext int
}

func newTopo(head string) *topo {
	if head == "" {
		head = `fabric "t" { transport = "rocev2" }`
	}
	tp := &topo{head: head}
	tp.b.WriteString(head + "\n")
	return tp
}

func (tp *topo) sw(name, extra string) *topo {
	tp.addrNext++
	fmt.Fprintf(&tp.b, "switch %q {\n  platform = \"openconfig\"\n  address = \"192.0.2.%d\"\n%s\n}\n", name, tp.addrNext, extra)
	return tp
}

func (tp *topo) host(name string, forwarding bool, nics ...string) *topo {
	tp.addrNext++
	fmt.Fprintf(&tp.b, "host %q {\n  address = \"192.0.2.%d\"\n  forwarding = %v\n", name, tp.addrNext, forwarding)
	for _, n := range nics {
		fmt.Fprintf(&tp.b, "  nic %q { device = \"mlx5_0\" }\n", n)
	}
	tp.b.WriteString("}\n")
	return tp
}

func (tp *topo) link(a, b string) *topo {
	fmt.Fprintf(&tp.b, "link {\n  endpoints = [%q, %q]\n  speed = \"100G\"\n}\n", a, b)
	return tp
}

func (tp *topo) raw(s string) *topo {
	tp.b.WriteString(s + "\n")
	return tp
}

func (tp *topo) String() string { return tp.b.String() }

func cycleString(dc deadlockCycle) string {
	hops := make([]string, len(dc.Hops))
	for i, h := range dc.Hops {
		hops[i] = h.String()
	}
	return strings.Join(hops, ", ")
}

// clos2 is a two-tier Clos: leaves x spines full mesh, hostsPerLeaf
// single-NIC hosts per leaf.
func clos2(leaves, spines, hostsPerLeaf int) *topo {
	tp := newTopo("")
	for s := 1; s <= spines; s++ {
		tp.sw(fmt.Sprintf("spine%d", s), `  role = "spine"`)
	}
	for l := 1; l <= leaves; l++ {
		tp.sw(fmt.Sprintf("leaf%d", l), "")
		for s := 1; s <= spines; s++ {
			tp.link(fmt.Sprintf("leaf%d:Ethernet%d", l, s), fmt.Sprintf("spine%d:Ethernet%d", s, l))
		}
		for h := 1; h <= hostsPerLeaf; h++ {
			name := fmt.Sprintf("h%d_%d", l, h)
			tp.host(name, false, "eth0")
			tp.link(fmt.Sprintf("leaf%d:Ethernet%d", l, 100+h), name+":eth0")
		}
	}
	return tp
}

func TestDeadlockClos2NoCycle(t *testing.T) {
	s := testutil.LoadSrc(t, clos2(4, 2, 2).String())
	if res := findDeadlocks(s, 20); len(res.Cycles) != 0 {
		t.Fatalf("2-tier Clos: unexpected cycle %s", cycleString(res.Cycles[0]))
	}
}

func TestDeadlockClos3NoCycle(t *testing.T) {
	tp := newTopo("")
	for x := 1; x <= 2; x++ {
		tp.sw(fmt.Sprintf("super%d", x), `  role = "superspine"`)
	}
	// Two pods of 2 leaves and 2 spines; every spine to every superspine.
	for pod := 1; pod <= 2; pod++ {
		for sp := 1; sp <= 2; sp++ {
			spine := fmt.Sprintf("p%dspine%d", pod, sp)
			tp.sw(spine, `  role = "spine"`)
			for x := 1; x <= 2; x++ {
				tp.link(fmt.Sprintf("%s:Up%d", spine, x), fmt.Sprintf("super%d:P%dS%d", x, pod, sp))
			}
		}
		for l := 1; l <= 2; l++ {
			leaf := fmt.Sprintf("p%dleaf%d", pod, l)
			tp.sw(leaf, "")
			for sp := 1; sp <= 2; sp++ {
				tp.link(fmt.Sprintf("%s:Up%d", leaf, sp), fmt.Sprintf("p%dspine%d:Down%d", pod, sp, l))
			}
			h := fmt.Sprintf("p%dh%d", pod, l)
			tp.host(h, false, "eth0", "eth1")
			tp.link(leaf+":Host1", h+":eth0")
		}
	}
	// Dual-homed non-forwarding host across pods: no transit, no cycle.
	tp.host("dual", false, "eth0", "eth1")
	tp.link("p1leaf1:Host2", "dual:eth0")
	tp.link("p2leaf1:Host2", "dual:eth1")
	s := testutil.LoadSrc(t, tp.String())
	if res := findDeadlocks(s, 20); len(res.Cycles) != 0 {
		t.Fatalf("3-tier Clos: unexpected cycle %s", cycleString(res.Cycles[0]))
	}
}

func TestDeadlockLeafLeafLink(t *testing.T) {
	tp := newTopo("")
	tp.sw("spine1", `  role = "spine"`).sw("leaf1", "").sw("leaf2", "")
	tp.link("leaf1:Ethernet1", "spine1:Ethernet1")
	tp.link("leaf2:Ethernet1", "spine1:Ethernet2")
	tp.link("leaf1:Ethernet48", "leaf2:Ethernet48")
	tp.host("h1", false, "eth0").host("h2", false, "eth0")
	tp.link("leaf1:Ethernet2", "h1:eth0")
	tp.link("leaf2:Ethernet2", "h2:eth0")
	s := testutil.LoadSrc(t, tp.String())
	res := findDeadlocks(s, 20)
	if len(res.Cycles) != 1 {
		t.Fatalf("want 1 cycle, got %d", len(res.Cycles))
	}
	dc := res.Cycles[0]
	want := "leaf1:Ethernet48 -> leaf2:Ethernet48, leaf2:Ethernet1 -> spine1:Ethernet2, spine1:Ethernet1 -> leaf1:Ethernet1"
	if got := cycleString(dc); got != want {
		t.Errorf("cycle:\n got  %s\n want %s", got, want)
	}
	if dc.Kind != kindLateral || dc.Culprit.A.String() != "leaf1:Ethernet48" {
		t.Errorf("culprit %s kind %d, want the lateral link leaf1:Ethernet48--leaf2:Ethernet48", dc.Culprit.Address(), dc.Kind)
	}
	if fmt.Sprint(dc.Prios) != "[3]" {
		t.Errorf("priorities %v, want [3]", dc.Prios)
	}
	for i, want := range []hopDir{dirLateral, dirUp, dirDown} {
		if dc.Hops[i].Dir != want {
			t.Errorf("hop %d direction %s, want %s", i, dc.Hops[i].Dir, want)
		}
	}
}

func TestDeadlockLeafLeafInBigClos(t *testing.T) {
	tp := clos2(6, 3, 1)
	tp.link("leaf2:Ethernet48", "leaf3:Ethernet48")
	tp.link("leaf5:Ethernet48", "leaf6:Ethernet48")
	s := testutil.LoadSrc(t, tp.String())
	res := findDeadlocks(s, 20)
	if len(res.Cycles) != 2 {
		t.Fatalf("want a cycle per peer link (2), got %d", len(res.Cycles))
	}
	got := map[string]bool{}
	for _, dc := range res.Cycles {
		if dc.Kind != kindLateral || len(dc.Hops) != 3 || dc.Hops[0].Link != dc.Culprit {
			t.Errorf("cycle %s: want a 3-link cycle starting on its lateral culprit", cycleString(dc))
		}
		got[dc.Culprit.Address()] = true
	}
	for _, a := range []string{"link.leaf2:Ethernet48--leaf3:Ethernet48", "link.leaf5:Ethernet48--leaf6:Ethernet48"} {
		if !got[a] {
			t.Errorf("no cycle pinned to %s (got %v)", a, got)
		}
	}

	// With a limit of one, the rest is counted, not lost.
	res = findDeadlocks(s, 1)
	if len(res.Cycles) != 1 || len(res.Unreported) != 1 || res.Unreported[0].Channels == 0 {
		t.Fatalf("limit 1: got %d cycles, unreported %+v", len(res.Cycles), res.Unreported)
	}
}

func TestDeadlockLateralUTurnIsNoCycle(t *testing.T) {
	// Two routed leaves joined only by a lateral link: a packet can cross it
	// but never come back the same way, so there is no dependency cycle
	// (a plain per-device hub would see leaf1 -> leaf2 -> leaf1).
	tp := newTopo("")
	tp.sw("leaf1", "").sw("leaf2", "")
	tp.link("leaf1:Ethernet48", "leaf2:Ethernet48")
	tp.host("h1", false, "eth0").host("h2", false, "eth0")
	tp.link("leaf1:Ethernet1", "h1:eth0").link("leaf2:Ethernet1", "h2:eth0")
	if res := findDeadlocks(testutil.LoadSrc(t, tp.String()), 20); len(res.Cycles) != 0 {
		t.Fatalf("unexpected cycle %s", cycleString(res.Cycles[0]))
	}
	// The same pair bridged: still a line, not a loop.
	tp = newTopo("")
	tp.sw("sw1", `  forwarding = "bridged"`).sw("sw2", `  forwarding = "bridged"`)
	tp.link("sw1:Ethernet1", "sw2:Ethernet1")
	if res := findDeadlocks(testutil.LoadSrc(t, tp.String()), 20); len(res.Cycles) != 0 {
		t.Fatalf("unexpected cycle %s", cycleString(res.Cycles[0]))
	}
}

func TestDeadlockBridgedRing(t *testing.T) {
	tp := newTopo("")
	for i := 1; i <= 4; i++ {
		tp.sw(fmt.Sprintf("sw%d", i), `  forwarding = "bridged"`+"\n  unknown_unicast = \"drop\"")
	}
	for i := 1; i <= 4; i++ {
		tp.link(fmt.Sprintf("sw%d:Ethernet2", i), fmt.Sprintf("sw%d:Ethernet1", i%4+1))
	}
	res := findDeadlocks(testutil.LoadSrc(t, tp.String()), 20)
	if len(res.Cycles) != 1 {
		t.Fatalf("bridged ring: want 1 cycle, got %d", len(res.Cycles))
	}
	dc := res.Cycles[0]
	want := "sw1:Ethernet2 -> sw2:Ethernet1, sw2:Ethernet2 -> sw3:Ethernet1, sw3:Ethernet2 -> sw4:Ethernet1, sw4:Ethernet2 -> sw1:Ethernet1"
	if got := cycleString(dc); got != want || dc.Kind != kindBridged {
		t.Errorf("cycle %s (kind %d), want %s (bridged)", got, dc.Kind, want)
	}
	// The same ring routed (all tier 1: lateral links) is also a cycle:
	// lateral after lateral is allowed.
	ring := strings.ReplaceAll(tp.String(), `forwarding = "bridged"`, `forwarding = "routed"`)
	ring = strings.ReplaceAll(ring, `unknown_unicast = "drop"`, "")
	res = findDeadlocks(testutil.LoadSrc(t, ring), 20)
	if len(res.Cycles) != 1 || res.Cycles[0].Kind != kindLateral {
		t.Fatalf("routed ring: want 1 lateral cycle, got %d", len(res.Cycles))
	}
}

func TestDeadlockForwardingHost(t *testing.T) {
	build := func(forwarding bool) *spec.Spec {
		tp := newTopo("")
		tp.sw("spine1", `  role = "spine"`).sw("leaf1", "").sw("leaf2", "")
		tp.link("leaf1:Ethernet1", "spine1:Ethernet1").link("leaf2:Ethernet1", "spine1:Ethernet2")
		tp.host("gw", forwarding, "eth0", "eth1")
		tp.link("leaf1:Ethernet2", "gw:eth0").link("leaf2:Ethernet2", "gw:eth1")
		return testutil.LoadSrc(t, tp.String())
	}
	if res := findDeadlocks(build(false), 20); len(res.Cycles) != 0 {
		t.Fatalf("dual-homed host without forwarding: unexpected cycle %s", cycleString(res.Cycles[0]))
	}
	res := findDeadlocks(build(true), 20)
	if len(res.Cycles) != 1 {
		t.Fatalf("forwarding host: want 1 cycle, got %d", len(res.Cycles))
	}
	dc := res.Cycles[0]
	want := "leaf1:Ethernet2 -> gw:eth0, gw:eth1 -> leaf2:Ethernet2, leaf2:Ethernet1 -> spine1:Ethernet2, spine1:Ethernet1 -> leaf1:Ethernet1"
	if got := cycleString(dc); got != want || dc.Kind != kindHostTransit {
		t.Errorf("cycle %s (kind %d), want %s (host transit)", got, dc.Kind, want)
	}
}

func TestDeadlockPFCOffBreaksCycle(t *testing.T) {
	build := func(portA string) *spec.Spec {
		tp := newTopo("")
		tp.sw("spine1", `  role = "spine"`).sw("leaf1", portA).sw("leaf2", "")
		tp.link("leaf1:Ethernet1", "spine1:Ethernet1").link("leaf2:Ethernet1", "spine1:Ethernet2")
		tp.link("leaf1:Ethernet48", "leaf2:Ethernet48")
		return testutil.LoadSrc(t, tp.String())
	}
	// Declaring ports makes the list exhaustive, so declare both.
	off := "  port \"Ethernet1\" {}\n  port \"Ethernet48\" {\n    pfc = []\n  }"
	if res := findDeadlocks(build(off), 20); len(res.Cycles) != 0 {
		t.Fatalf("PFC off on one end of the lateral link: unexpected cycle %s", cycleString(res.Cycles[0]))
	}
	on := "  port \"Ethernet1\" {}\n  port \"Ethernet48\" {}"
	if res := findDeadlocks(build(on), 20); len(res.Cycles) != 1 {
		t.Fatalf("PFC on: want 1 cycle, got %d", len(res.Cycles))
	}
}

func TestDeadlockPerPriority(t *testing.T) {
	// Two lossless priorities; the lateral link is lossless on 4 only.
	head := `fabric "t" {
  transport = "rocev2"
  max_lossless_priorities = 2
}
class "roce" {
  role = "rdma"
  priority = 3
  dscp = [26]
  lossless = true
  bandwidth = 40
  ecn {
    min = "150KB"
    max = "1.5MB"
  }
}
class "storage" {
  role = "rdma"
  priority = 4
  dscp = [28]
  lossless = true
  bandwidth = 30
  ecn {
    min = "150KB"
    max = "1.5MB"
  }
}
class "cnp" {
  role = "cnp"
  priority = 6
  dscp = [48]
  strict = true
}
class "default" {
  priority = 0
  default = true
  bandwidth = 30
}`
	tp := newTopo(head)
	tp.sw("spine1", `  role = "spine"`)
	tp.sw("leaf1", "  port \"Ethernet1\" {}\n  port \"Ethernet48\" {\n    pfc = [4]\n  }")
	tp.sw("leaf2", "  port \"Ethernet1\" {}\n  port \"Ethernet48\" {\n    pfc = [4]\n  }")
	tp.link("leaf1:Ethernet1", "spine1:Ethernet1").link("leaf2:Ethernet1", "spine1:Ethernet2").link("leaf1:Ethernet48", "leaf2:Ethernet48")
	res := findDeadlocks(testutil.LoadSrc(t, tp.String()), 20)
	if len(res.Cycles) != 1 || fmt.Sprint(res.Cycles[0].Prios) != "[4]" {
		t.Fatalf("want one cycle on priority 4 only, got %d cycles %+v", len(res.Cycles), res.Cycles)
	}
}

func TestDeadlockRuleFinding(t *testing.T) {
	tp := newTopo("")
	tp.sw("spine1", `  role = "spine"`).sw("leaf1", "").sw("leaf2", "")
	tp.link("leaf1:Ethernet1", "spine1:Ethernet1").link("leaf2:Ethernet1", "spine1:Ethernet2")
	tp.raw(`link {
  endpoints = ["leaf1:Ethernet48", "leaf2:Ethernet48"]
  speed = "100G"
}`)
	s := testutil.LoadSrc(t, tp.String())
	rules := safetyRules()
	var safe2 []Rule
	for _, r := range rules {
		if r.ID == "SAFE-2" {
			safe2 = append(safe2, r)
		}
	}
	res := RunRules(s, safe2)
	if len(res.Diagnostics) != 1 {
		t.Fatalf("want one SAFE-2 finding, got %v", res.Diagnostics)
	}
	d := res.Diagnostics[0]
	info := spec.Info(d)
	if info == nil || info.Rule != "SAFE-2" || info.Address != "link.leaf1:Ethernet48--leaf2:Ethernet48" {
		t.Errorf("finding info %+v", info)
	}
	if !strings.Contains(d.Detail, "leaf1:Ethernet48 -> leaf2:Ethernet48, leaf2:Ethernet1 -> spine1:Ethernet2, spine1:Ethernet1 -> leaf1:Ethernet1") ||
		!strings.Contains(d.Detail, "tier-1") {
		t.Errorf("detail does not name the cycle and the lateral link:\n%s", d.Detail)
	}
	// The finding is pinned to the endpoints of the lateral link.
	if src := string(d.Subject.SliceBytes([]byte(tp.String()))); src != `["leaf1:Ethernet48", "leaf2:Ethernet48"]` {
		t.Errorf("subject %q", src)
	}
	// lint_ignore on the link silences it and counts it.
	ign := strings.Replace(tp.String(), `  endpoints = ["leaf1:Ethernet48", "leaf2:Ethernet48"]`,
		`  endpoints = ["leaf1:Ethernet48", "leaf2:Ethernet48"]`+"\n  lint_ignore = { \"SAFE-2\" = \"MLAG peer link, lossy routes only\" }", 1)
	res = RunRules(testutil.LoadSrc(t, ign), safe2)
	if len(res.Diagnostics) != 0 || res.Suppressed != 1 {
		t.Errorf("ignored: got %d findings, %d suppressed", len(res.Diagnostics), res.Suppressed)
	}
}

// TestDeadlockMatchesBruteForce compares the linear hub graph with the
// exact quadratic channel dependency graph on random small topologies.
func TestDeadlockMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	cycles := 0
	for iter := 0; iter < 300; iter++ {
		nsw := 2 + rng.Intn(5)
		nh := rng.Intn(4)
		nodes := nsw + nh
		name := func(i int) string {
			if i < nsw {
				return fmt.Sprintf("s%d", i)
			}
			return fmt.Sprintf("h%d", i-nsw)
		}
		// Links first, so switches can declare their ports.
		ports := make([][]string, nodes)
		var links [][2]string
		for k, nl := 0, rng.Intn(2*nodes); k < nl; k++ {
			a, b := rng.Intn(nodes), rng.Intn(nodes)
			if a == b || a >= nsw && len(ports[a]) == 3 || b >= nsw && len(ports[b]) == 3 {
				continue
			}
			var ends [2]string
			for e, i := range []int{a, b} {
				port := fmt.Sprintf("p%d", k)
				if i >= nsw {
					port = fmt.Sprintf("n%d", len(ports[i]))
				}
				ports[i] = append(ports[i], port)
				ends[e] = name(i) + ":" + port
			}
			links = append(links, ends)
		}
		tp := newTopo("")
		for i := 0; i < nsw; i++ {
			extra := fmt.Sprintf("  tier = %d", 1+rng.Intn(3))
			if rng.Intn(4) == 0 {
				extra += "\n  forwarding = \"bridged\"\n  unknown_unicast = \"drop\""
			}
			switch rng.Intn(8) {
			case 0:
				extra += "\n  pfc = []"
			case 1, 2:
				for _, p := range ports[i] {
					if rng.Intn(3) == 0 {
						extra += fmt.Sprintf("\n  port %q {\n    pfc = []\n  }", p)
					} else {
						extra += fmt.Sprintf("\n  port %q {}", p)
					}
				}
			}
			tp.sw(name(i), extra)
		}
		for i := nsw; i < nodes; i++ {
			fmt.Fprintf(&tp.b, "host %q {\n  address = \"192.0.2.%d\"\n  forwarding = %v\n", name(i), 100+i, rng.Intn(2) == 0)
			for n := 0; n < 3; n++ {
				pfc := ""
				if rng.Intn(5) == 0 {
					pfc = "\n    pfc = []"
				}
				fmt.Fprintf(&tp.b, "  nic \"n%d\" {\n    device = \"mlx5_0\"%s\n  }\n", n, pfc)
			}
			tp.b.WriteString("}\n")
		}
		for _, l := range links {
			tp.link(l[0], l[1])
		}
		s := testutil.LoadSrc(t, tp.String())
		res := findDeadlocks(s, 1)
		want := bruteForceHasCycle(s)
		if got := len(res.Cycles) > 0; got != want {
			t.Fatalf("iteration %d: analysis says cycle=%v, exact graph says %v\n%s", iter, got, want, tp.String())
		}
		// The hub graph itself is exact: it has a non-trivial SCC exactly
		// when the channel graph has a cycle (no U-turn artefacts).
		if got := hubGraphHasSCC(s); got != want {
			t.Fatalf("iteration %d: hub graph SCC=%v, exact graph cycle=%v\n%s", iter, got, want, tp.String())
		}
		if want {
			cycles++
		}
	}
	if cycles < 30 {
		t.Errorf("only %d of 300 random topologies had a cycle: the generator does not exercise the check", cycles)
	}
}

// hubGraphHasSCC builds the priority-3 hub graph and reports whether it
// has a strongly connected component of more than one node.
func hubGraphHasSCC(s *spec.Spec) bool {
	nodes := newDLNodes(s)
	masks, ends := linkPFCMasks(s, nodes)
	var links []*spec.Link
	var lends [][2]int32
	for i, l := range s.Links {
		if masks[i]&(1<<3) != 0 {
			links = append(links, l)
			lends = append(lends, ends[i])
		}
	}
	g := buildDLGraph(nodes, links, lends)
	g.activate(nil)
	return len(g.sccs(nil)) > 0
}

// bruteForceHasCycle builds the exact channel dependency graph (every
// allowed arrival/departure pair, written out independently of dlGraph)
// and looks for a cycle by DFS.
func bruteForceHasCycle(s *spec.Spec) bool {
	type ch struct {
		link     int
		from, to string
	}
	tier := func(n string) int {
		if sw := s.Switch(n); sw != nil {
			return sw.Tier
		}
		return 0
	}
	mode := func(n string) string {
		if sw := s.Switch(n); sw != nil {
			return sw.Forwarding
		}
		if s.Host(n).Forwarding {
			return "any"
		}
		return "none"
	}
	pfc3 := func(e End) bool {
		if e.Switch != nil {
			return containsInt(s.PortPFC(e.Switch, e.Port), 3)
		}
		return containsInt(s.NICPFC(e.NIC), 3)
	}
	var chans []ch
	for i, l := range s.Links {
		if a, b := Ends(s, l); !pfc3(a) || !pfc3(b) {
			continue
		}
		chans = append(chans, ch{i, l.A.Node, l.B.Node}, ch{i, l.B.Node, l.A.Node})
	}
	up := func(c ch) int { return tier(c.to) - tier(c.from) } // >0 up, <0 down
	adj := make([][]int, len(chans))
	for i, a := range chans {
		for j, b := range chans {
			if a.to != b.from || a.link == b.link {
				continue
			}
			switch mode(a.to) {
			case "none":
				continue
			case spec.Routed:
				if up(a) < 0 && up(b) > 0 {
					continue
				}
			}
			adj[i] = append(adj[i], j)
		}
	}
	color := make([]int, len(chans))
	var dfs func(int) bool
	dfs = func(v int) bool {
		color[v] = 1
		for _, w := range adj[v] {
			if color[w] == 1 || color[w] == 0 && dfs(w) {
				return true
			}
		}
		color[v] = 2
		return false
	}
	for v := range chans {
		if color[v] == 0 && dfs(v) {
			return true
		}
	}
	return false
}
