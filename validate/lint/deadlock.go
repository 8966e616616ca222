package lint

// PFC deadlock analysis (SAFE-2).
//
// A lossless packet holds a buffer at the ingress of the link it arrived on
// while it waits for the next link's receiver to have room. The waits form
// the buffer (channel) dependency graph: one node per directed link end
// ("channel" u->v) and an edge a->b whenever a packet that arrived on a may
// leave on b. A cycle in that graph can deadlock under PFC: every buffer on
// it waits for the next and the pauses never clear (Hu et al., HotNets 2016).
//
// Which transitions exist is the routing model:
//   - routed switches forward valley-free (up-down): after arriving on an up
//     or lateral hop a packet may go up, lateral or down; after a down hop
//     only down or lateral. Never back out of the link it came in on.
//   - bridged switches forward any to any (L2 paths and flooding).
//   - hosts terminate traffic unless forwarding = true (host transit), in
//     which case they forward any to any.
//
// Tiers order the hops: hosts are tier 0, switches their Clos tier.
//
// The exact graph has in-degree x out-degree edges per device. To stay
// linear, each forwarding device gets hub nodes: one family of hubs for the
// outgoing channels an up/lateral arrival may take (all of them; every
// arrival at a bridged switch or forwarding host uses this family too) and
// one for what a down arrival may take (down and lateral). Within a family
// the outgoing channels are in a list with prefix hubs P_i (reaching
// out[0..i]) and suffix hubs S_i (reaching out[i..k-1]); an arrival
// connects to P_{j-1} and S_{j+1}, where j is the position of its own
// link's reverse channel, so the U-turn is excluded exactly. Hub-to-hub
// edges only run down a prefix chain or up a suffix chain, so every cycle
// passes through a channel, and a path channel -> hubs -> channel exists
// exactly when the transition is allowed. The SCCs of this graph (iterative
// Tarjan) therefore hold a cycle of the real dependency graph exactly when
// they have more than one node (a randomised test checks this against the
// quadratic graph). Channels into hosts that do not forward are sinks and
// channels out of them sources; neither can be on a cycle, so they are
// left out of the hub part, which in a GPU fabric keeps only the
// switch-to-switch channels there.
//
// Each non-trivial SCC is then re-checked with the exact transition rule:
// a BFS over the SCC's channels alone (no hubs) from its likeliest culprit
// link (lateral, then host transit, then bridged, then spec order) finds a
// real cycle with the fewest links through it. The culprit link is taken
// out and the SCC decomposed again, so cycles that do not use it are
// reported too, up to a limit.

import (
	"github.com/fabctl/fabctl/spec"
)

type fwdMode uint8

const (
	fwdNone   fwdMode = iota // a host that does not forward: traffic ends here
	fwdUpDown                // routed switch: valley-free forwarding
	fwdAny                   // bridged switch or forwarding host: any to any
)

type hopDir uint8

const (
	dirUp hopDir = iota
	dirLateral
	dirDown
)

func (d hopDir) String() string {
	return [...]string{"up", "lateral", "down"}[d]
}

// linkKind classifies a link by how likely it is the cause of a cycle;
// higher is likelier.
type linkKind uint8

const (
	kindOther       linkKind = iota
	kindBridged              // an end is a bridged switch
	kindHostTransit          // an end is a forwarding host
	kindLateral              // two routed switches of the same tier
)

// dlNodes are the devices of the analysis: switches first, then hosts.
type dlNodes struct {
	names    []string
	tier     []int
	mode     []fwdMode
	isHost   []bool
	switches []*spec.Switch // by id, nil for hosts
	hosts    []*spec.Host   // by id, nil for switches
	id       map[string]int32
}

func newDLNodes(s *spec.Spec) *dlNodes {
	n := len(s.Switches) + len(s.Hosts)
	d := &dlNodes{
		names: make([]string, 0, n), tier: make([]int, 0, n), mode: make([]fwdMode, 0, n), isHost: make([]bool, 0, n),
		switches: make([]*spec.Switch, 0, n), hosts: make([]*spec.Host, 0, n), id: make(map[string]int32, n),
	}
	for _, sw := range s.Switches {
		m := fwdUpDown
		if sw.Forwarding == spec.Bridged {
			m = fwdAny
		}
		d.add(sw.Name, sw.Tier, m, false)
		d.switches[len(d.switches)-1] = sw
	}
	for _, h := range s.Hosts {
		m := fwdNone
		if h.Forwarding {
			m = fwdAny
		}
		d.add(h.Name, 0, m, true)
		d.hosts[len(d.hosts)-1] = h
	}
	return d
}

func (d *dlNodes) add(name string, tier int, m fwdMode, host bool) {
	d.id[name] = int32(len(d.names))
	d.names = append(d.names, name)
	d.tier = append(d.tier, tier)
	d.mode = append(d.mode, m)
	d.isHost = append(d.isHost, host)
	d.switches = append(d.switches, nil)
	d.hosts = append(d.hosts, nil)
}

// dlGraph is the linearised dependency graph of one set of lossless links.
// Node ids 0..nch-1 are channels: channel c runs on links[c>>1], from end A
// to end B when c is even and from B to A when odd. Hub nodes follow.
type dlGraph struct {
	nodes *dlNodes
	links []*spec.Link
	ends  [][2]int32 // node ids of ends A and B
	nch   int32
	off   []int32 // CSR: successors of x are adj[off[x]:off[x+1]]
	adj   []int32
	// Outgoing channels of device v: out[outOff[v]:outOff[v+1]], ascending.
	outOff []int32
	out    []int32

	// Tarjan and BFS state, sized to the node count, reused across runs.
	mark    []int32 // active-set stamp
	removed []bool  // channels taken out after being reported
	index   []int32 // Tarjan discovery index + 1 (0: unvisited)
	low     []int32
	onStack []bool
	parent  []int32
	seen    []int32 // BFS stamp
	stamp   int32
	bfs     int32
}

func (g *dlGraph) from(c int32) int32 { return g.ends[c>>1][c&1] }
func (g *dlGraph) to(c int32) int32   { return g.ends[c>>1][1-(c&1)] }

func (g *dlGraph) dir(c int32) hopDir {
	tf, tt := g.nodes.tier[g.from(c)], g.nodes.tier[g.to(c)]
	switch {
	case tt > tf:
		return dirUp
	case tt < tf:
		return dirDown
	}
	return dirLateral
}

// allowed is the exact transition rule: may a packet that arrived on
// channel a leave on channel b?
func (g *dlGraph) allowed(a, b int32) bool {
	if g.to(a) != g.from(b) || a>>1 == b>>1 {
		return false
	}
	switch g.nodes.mode[g.to(a)] {
	case fwdNone:
		return false
	case fwdAny:
		return true
	}
	return !(g.dir(a) == dirDown && g.dir(b) == dirUp)
}

func (g *dlGraph) kind(li int32) linkKind {
	n := g.nodes
	a, b := g.ends[li][0], g.ends[li][1]
	switch {
	case n.isHost[a] && n.mode[a] == fwdAny || n.isHost[b] && n.mode[b] == fwdAny:
		return kindHostTransit
	case !n.isHost[a] && !n.isHost[b] && n.mode[a] == fwdUpDown && n.mode[b] == fwdUpDown && n.tier[a] == n.tier[b]:
		return kindLateral
	case !n.isHost[a] && n.mode[a] == fwdAny || !n.isHost[b] && n.mode[b] == fwdAny:
		return kindBridged
	}
	return kindOther
}

// buildDLGraph builds the hub graph over the given lossless links.
//
// Channels into a host that does not forward have no successors and
// channels out of one have no predecessors: neither can be on a cycle, so
// the former join no hub family and the latter get no arrival edges. In a
// GPU fabric that leaves only the switch-to-switch channels in the hub
// part of the graph.
func buildDLGraph(nodes *dlNodes, links []*spec.Link, ends [][2]int32) *dlGraph {
	g := &dlGraph{nodes: nodes, links: links, ends: ends, nch: int32(2 * len(links))}
	nn := int32(len(nodes.names))
	mode := nodes.mode
	sink := func(c int32) bool { return mode[g.to(c)] == fwdNone }

	g.outOff = make([]int32, nn+1)
	for c := int32(0); c < g.nch; c++ {
		g.outOff[g.from(c)+1]++
	}
	for v := int32(0); v < nn; v++ {
		g.outOff[v+1] += g.outOff[v]
	}
	g.out = make([]int32, g.nch)
	next := append([]int32(nil), g.outOff[:nn]...)
	for c := int32(0); c < g.nch; c++ {
		v := g.from(c)
		g.out[next[v]] = c
		next[v]++
	}

	// Hub families per forwarding device, in channel order: "all" holds
	// every outgoing channel that is not a sink, "dl" (routed switches)
	// those that do not go up. famOff[f]..famOff[f+1] are the members of
	// family f; family 2v is device v's "all", 2v+1 its "dl".
	famLen := make([]int32, 2*nn+1)
	for c := int32(0); c < g.nch; c++ {
		v := g.from(c)
		if mode[v] == fwdNone || sink(c) {
			continue
		}
		famLen[2*v+1]++
		if mode[v] == fwdUpDown && g.dir(c) != dirUp {
			famLen[2*v+2]++
		}
	}
	famOff := famLen // prefix sums in place: famOff[f] = start of family f
	for f := int32(1); f <= 2*nn; f++ {
		famOff[f] += famOff[f-1]
	}
	members := make([]int32, famOff[2*nn])
	fill := append([]int32(nil), famOff[:2*nn]...)
	pos := make([]int32, 2*g.nch) // pos[2c]: c's index in its "all" family, pos[2c+1] in "dl"; -1: not a member
	for c := int32(0); c < g.nch; c++ {
		pos[2*c], pos[2*c+1] = -1, -1
		v := g.from(c)
		if mode[v] == fwdNone || sink(c) {
			continue
		}
		f := 2 * v
		pos[2*c] = fill[f] - famOff[f]
		members[fill[f]] = c
		fill[f]++
		if mode[v] == fwdUpDown && g.dir(c) != dirUp {
			f++
			pos[2*c+1] = fill[f] - famOff[f]
			members[fill[f]] = c
			fill[f]++
		}
	}
	// Family f of k members has 2k hubs from base(f) = nch + 2*famOff[f]:
	// prefix hubs P_0..P_{k-1}, then suffix hubs S_0..S_{k-1}.
	total := g.nch + 2*famOff[2*nn]
	base := func(f int32) int32 { return g.nch + 2*famOff[f] }

	// CSR, filled in node order: channels, then the hubs family by family.
	g.off = make([]int32, total+1)
	g.adj = make([]int32, 0, 2*g.nch+4*famOff[2*nn])
	for a := int32(0); a < g.nch; a++ {
		g.off[a] = int32(len(g.adj))
		v := g.to(a)
		if mode[v] == fwdNone || mode[g.from(a)] == fwdNone {
			continue // a sink, or a source nothing arrives on
		}
		f, slot := 2*v, int32(0)
		if mode[v] == fwdUpDown && g.dir(a) == dirDown {
			f, slot = f+1, 1
		}
		k := famOff[f+1] - famOff[f]
		j := pos[2*(a^1)+slot] // the U-turn: a's own link, the other way
		b := base(f)
		switch {
		case k == 0:
		case j < 0:
			g.adj = append(g.adj, b+k-1)
		default:
			if j > 0 {
				g.adj = append(g.adj, b+j-1)
			}
			if j < k-1 {
				g.adj = append(g.adj, b+k+j+1)
			}
		}
	}
	for f := int32(0); f < 2*nn; f++ {
		m := members[famOff[f]:famOff[f+1]]
		k := int32(len(m))
		b := base(f)
		for i := int32(0); i < k; i++ { // P_i -> member i, P_{i-1}
			g.off[b+i] = int32(len(g.adj))
			g.adj = append(g.adj, m[i])
			if i > 0 {
				g.adj = append(g.adj, b+i-1)
			}
		}
		for i := int32(0); i < k; i++ { // S_i -> member i, S_{i+1}
			g.off[b+k+i] = int32(len(g.adj))
			g.adj = append(g.adj, m[i])
			if i < k-1 {
				g.adj = append(g.adj, b+k+i+1)
			}
		}
	}
	g.off[total] = int32(len(g.adj))

	g.mark = make([]int32, total)
	g.removed = make([]bool, total)
	g.index = make([]int32, total)
	g.low = make([]int32, total)
	g.onStack = make([]bool, total)
	g.parent = make([]int32, total)
	g.seen = make([]int32, total)
	return g
}

func (g *dlGraph) active(x int32) bool { return g.mark[x] == g.stamp && !g.removed[x] }

// activate starts a new active set: the given nodes, or every node.
func (g *dlGraph) activate(nodes []int32) {
	g.stamp++
	if nodes == nil {
		for x := range g.mark {
			g.mark[x] = g.stamp
		}
		return
	}
	for _, x := range nodes {
		g.mark[x] = g.stamp
	}
}

// sccs returns the strongly connected components of more than one node
// among the active nodes, found by an iterative Tarjan from roots (or from
// every node when roots is nil).
func (g *dlGraph) sccs(roots []int32) [][]int32 {
	type frame struct{ v, ei int32 }
	var (
		out     [][]int32
		stack   []int32
		call    []frame
		visited []int32
		counter int32
	)
	visit := func(v int32) {
		counter++
		g.index[v], g.low[v] = counter, counter
		g.onStack[v] = true
		stack = append(stack, v)
		visited = append(visited, v)
		call = append(call, frame{v, g.off[v]})
	}
	total := int32(len(g.off) - 1)
	for i := int32(0); ; i++ {
		var r int32
		if roots == nil {
			if i >= total {
				break
			}
			r = i
		} else {
			if int(i) >= len(roots) {
				break
			}
			r = roots[i]
		}
		if g.index[r] != 0 || !g.active(r) {
			continue
		}
		visit(r)
		for len(call) > 0 {
			f := &call[len(call)-1]
			v := f.v
			if f.ei < g.off[v+1] {
				w := g.adj[f.ei]
				f.ei++
				if !g.active(w) {
					continue
				}
				if g.index[w] == 0 {
					visit(w)
				} else if g.onStack[w] && g.index[w] < g.low[v] {
					g.low[v] = g.index[w]
				}
				continue
			}
			call = call[:len(call)-1]
			if len(call) > 0 {
				if p := call[len(call)-1].v; g.low[v] < g.low[p] {
					g.low[p] = g.low[v]
				}
			}
			if g.low[v] != g.index[v] {
				continue
			}
			i := len(stack) - 1
			for stack[i] != v {
				i--
			}
			comp := stack[i:]
			for _, x := range comp {
				g.onStack[x] = false
			}
			if len(comp) > 1 {
				out = append(out, append([]int32(nil), comp...))
			}
			stack = stack[:i]
		}
	}
	for _, x := range visited {
		g.index[x] = 0
	}
	return out
}

// shortestCycle re-checks an SCC with the exact transition rule: a BFS over
// the active channels only (hub nodes play no part), following allowed()
// from start until it returns to start. It returns the channels of a
// cycle with the fewest links through start, start first, preferring
// links in spec order, or nil when start is on no real cycle.
func (g *dlGraph) shortestCycle(start int32) []int32 {
	g.bfs++
	bs := g.bfs
	queue := []int32{start}
	g.seen[start] = bs
	last := int32(-1)
	for qi := 0; qi < len(queue) && last < 0; qi++ {
		c := queue[qi]
		v := g.to(c)
		for _, d := range g.out[g.outOff[v]:g.outOff[v+1]] {
			if !g.active(d) || !g.allowed(c, d) {
				continue
			}
			if d == start {
				last = c
				break
			}
			if g.seen[d] != bs {
				g.seen[d] = bs
				g.parent[d] = c
				queue = append(queue, d)
			}
		}
	}
	if last < 0 {
		return nil
	}
	var rev []int32
	for c := last; c != start; c = g.parent[c] {
		rev = append(rev, c)
	}
	cycle := make([]int32, 0, len(rev)+1)
	cycle = append(cycle, start)
	for i := len(rev) - 1; i >= 0; i-- {
		cycle = append(cycle, rev[i])
	}
	return cycle
}

// dlHop is one link crossing of a dependency cycle.
type dlHop struct {
	Link     *spec.Link
	From, To spec.Endpoint
	Dir      hopDir
}

func (h dlHop) String() string { return h.From.String() + " -> " + h.To.String() }

// deadlockCycle is one cycle of the dependency graph.
type deadlockCycle struct {
	Prios   []int      // lossless priorities whose buffers form it
	Hops    []dlHop    // in order; the first is on the culprit link
	Culprit *spec.Link // the link the finding is pinned to
	Kind    linkKind
}

// deadlockResult is the outcome of the analysis.
type deadlockResult struct {
	Cycles []deadlockCycle
	// Unreported counts, per priority group, the channels still in cycles
	// when the report limit was reached.
	Unreported []deadlockRest
}

type deadlockRest struct {
	Prios    []int
	Channels int
	Next     *spec.Link // a link in one of the remaining cycles
}

// findDeadlocks runs the analysis over every group of lossless priorities
// that share the same set of lossless links, reporting at most maxCycles
// cycles in all.
func findDeadlocks(s *spec.Spec, maxCycles int) deadlockResult {
	var res deadlockResult
	if !s.Fabric.Transport.IsEthernet() {
		// InfiniBand's subnet manager computes deadlock-free routes
		// (ftree/updn orient every link); there is no PFC.
		return res
	}
	nodes := newDLNodes(s)
	masks, ends := linkPFCMasks(s, nodes)
	var union uint8
	var present [256]bool
	for _, m := range masks {
		union |= m
		present[m] = true
	}
	// Priorities lossless on exactly the same links share one analysis.
	var done uint8
	for p := 0; p < 8; p++ {
		bit := uint8(1) << p
		if union&bit == 0 || done&bit != 0 {
			continue
		}
		group := []int{p}
		for q := p + 1; q < 8; q++ {
			qb := uint8(1) << q
			if union&qb == 0 || done&qb != 0 {
				continue
			}
			same := true
			for m := range present {
				if present[m] && (uint8(m)&bit == 0) != (uint8(m)&qb == 0) {
					same = false
					break
				}
			}
			if same {
				group = append(group, q)
				done |= qb
			}
		}
		done |= bit
		var links []*spec.Link
		var lends [][2]int32
		for i, l := range s.Links {
			if masks[i]&bit != 0 {
				links = append(links, l)
				lends = append(lends, ends[i])
			}
		}
		g := buildDLGraph(nodes, links, lends)
		g.analyse(group, maxCycles-len(res.Cycles), &res)
	}
	return res
}

// prioMask is a priority set as a bit mask.
func prioMask(prios []int) uint8 {
	var m uint8
	for _, p := range prios {
		if p >= 0 && p < 8 {
			m |= 1 << p
		}
	}
	return m
}

// linkPFCMasks returns, per link, the priorities lossless at both ends (as
// a bit mask) and the node ids of its ends. A port or NIC is looked up only
// when some port or NIC of its device sets PFC itself; otherwise every end
// of the device has the set a port (NIC) that sets nothing inherits.
func linkPFCMasks(s *spec.Spec, nodes *dlNodes) ([]uint8, [][2]int32) {
	nn := len(nodes.names)
	devMask := make([]uint8, nn)
	perEnd := make([]bool, nn) // some port/NIC of the device sets PFC itself
	for v := 0; v < nn; v++ {
		if sw := nodes.switches[v]; sw != nil {
			devMask[v] = prioMask(s.PortPFC(sw, nil))
			for _, p := range sw.Ports {
				if s.PortPFCOrigin(sw, p).Level == spec.FromObject {
					perEnd[v] = true
					break
				}
			}
		} else {
			devMask[v] = prioMask(s.NICPFC(nil))
			for _, n := range nodes.hosts[v].NICs {
				if s.NICPFCOrigin(n).Level == spec.FromObject {
					perEnd[v] = true
					break
				}
			}
		}
	}
	endMask := func(v int32, port string) uint8 {
		if !perEnd[v] {
			return devMask[v]
		}
		if sw := nodes.switches[v]; sw != nil {
			return prioMask(s.PortPFC(sw, sw.Port(port)))
		}
		return prioMask(s.NICPFC(nodes.hosts[v].NIC(port)))
	}
	masks := make([]uint8, len(s.Links))
	ends := make([][2]int32, len(s.Links))
	for i, l := range s.Links {
		a, b := nodes.id[l.A.Node], nodes.id[l.B.Node]
		ends[i] = [2]int32{a, b}
		masks[i] = endMask(a, l.A.Port) & endMask(b, l.B.Port)
	}
	return masks, ends
}

// analyse finds the cycles of one graph, at most limit of them.
func (g *dlGraph) analyse(prios []int, limit int, res *deadlockResult) {
	if g.nch == 0 {
		return
	}
	g.activate(nil)
	work := g.sccs(nil)
	for len(work) > 0 {
		// Decompose the SCCs a culprit taken out since ran through.
		fresh := make([][]int32, 0, len(work))
		for _, comp := range work {
			if g.hasRemoved(comp) {
				g.activate(comp)
				fresh = append(fresh, g.sccs(comp)...)
			} else {
				fresh = append(fresh, comp)
			}
		}
		work = fresh
		if len(work) == 0 {
			return
		}
		if limit <= 0 {
			rest := deadlockRest{Prios: prios}
			for _, comp := range work {
				for _, x := range comp {
					if x < g.nch {
						if rest.Next == nil {
							rest.Next = g.links[x>>1]
						}
						rest.Channels++
					}
				}
			}
			res.Unreported = append(res.Unreported, rest)
			return
		}
		// Report the SCC whose culprit comes first: likeliest kind, then
		// spec order.
		bi, start, best := -1, int32(-1), kindOther
		for i, comp := range work {
			if c, k := g.culprit(comp); c >= 0 && (bi < 0 || k > best || k == best && c < start) {
				bi, start, best = i, c, k
			}
		}
		if bi < 0 {
			return
		}
		comp := work[bi]
		work = append(work[:bi], work[bi+1:]...)
		g.activate(comp)
		cyc := g.shortestCycle(start)
		if cyc == nil {
			// Every channel of a non-trivial SCC of the (exact) hub graph
			// is on a real cycle, so this does not happen; if it did, the
			// SCC would be a hub artefact and is not reported.
			g.removed[start], g.removed[start^1] = true, true
			work = append(work, g.sccs(comp)...)
			continue
		}
		dc := deadlockCycle{Prios: prios, Culprit: g.links[start>>1], Kind: best}
		for _, c := range cyc {
			dc.Hops = append(dc.Hops, g.hop(c))
		}
		res.Cycles = append(res.Cycles, dc)
		limit--
		// Take the culprit out and look for cycles that do not use it.
		g.removed[start], g.removed[start^1] = true, true
		work = append(work, g.sccs(comp)...)
	}
}

// hasRemoved reports whether a node list holds a channel taken out.
func (g *dlGraph) hasRemoved(nodes []int32) bool {
	for _, x := range nodes {
		if g.removed[x] {
			return true
		}
	}
	return false
}

// culprit picks the channel of an SCC to pin a finding to: the likeliest
// culprit kind of link, then the first in spec order.
func (g *dlGraph) culprit(comp []int32) (int32, linkKind) {
	start, best := int32(-1), kindOther
	for _, x := range comp {
		if x >= g.nch {
			continue
		}
		if k := g.kind(x >> 1); start < 0 || k > best || k == best && x < start {
			start, best = x, k
		}
	}
	return start, best
}

func (g *dlGraph) hop(c int32) dlHop {
	l := g.links[c>>1]
	h := dlHop{Link: l, From: l.A, To: l.B, Dir: g.dir(c)}
	if c&1 == 1 {
		h.From, h.To = l.B, l.A
	}
	return h
}
