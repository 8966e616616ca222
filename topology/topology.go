// Package topology turns the spec's cabling into what job schedulers
// place jobs by: a Slurm topology.conf for the tree plugin or for the
// block plugin, and Kubernetes node labels (topology.fabctl.io/leaf,
// /spine-group, /rail). docs/telemetry.md describes them.
//
// A rail-optimised pod (NVIDIA DGX SuperPOD reference architecture,
// "Network Fabrics: Compute Fabric": each node's NIC n goes to the
// scalable unit's rail-n leaf, so traffic on a rail is one switch away
// from every other node of the unit, and traffic between units or rails
// crosses the spine) is grouped by rail group: the hosts whose NICs reach
// the same set of leaf switches. A rail group is one Slurm leaf switch in
// the tree (Slurm warns "Multiple leaf switches contain nodes" when a
// node is listed under several) and one block for topology/block.
package topology

import (
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/fabctl/fabctl/spec"
)

// Host is one host's place in the fabric.
type Host struct {
	Name string `json:"name"`
	// Leaf is the leaf the host's first cabled NIC (rail 0) reaches.
	Leaf string `json:"leaf"`
	// RailGroup names the host's rail group, the Slurm leaf switch and
	// block the host sits in: Leaf when every cabled NIC reaches Leaf,
	// else the group's leaves joined by "+" (RailGroupName).
	RailGroup string `json:"rail_group,omitempty"`
	// SpineGroup names the switches above Leaf (sorted, joined by "."):
	// hosts with the same group are one hop apart above their leaves.
	SpineGroup string `json:"spine_group"`
	// Rails maps rail (NIC position on the host) to its leaf.
	Rails map[int]string `json:"rails"`
}

// Switch is one switch of Slurm's tree and what hangs below it. A rail
// group is one Switch standing for the leaves in Rails.
type Switch struct {
	Name     string   `json:"name"`
	Tier     int      `json:"tier"`
	Rails    []string `json:"rails,omitempty"`
	Nodes    []string `json:"nodes,omitempty"`
	Switches []string `json:"switches,omitempty"`
}

// Block is one block of Slurm's topology/block plugin: the hosts of one
// rail group (or of one leaf), one switch apart on every rail.
type Block struct {
	Name   string   `json:"name"`
	Leaves []string `json:"leaves"`
	Nodes  []string `json:"nodes"`
}

// Topology is the fabric as a scheduler sees it.
type Topology struct {
	Fabric   string   `json:"fabric"`
	Hosts    []Host   `json:"hosts"`
	Switches []Switch `json:"switches"`
	Blocks   []Block  `json:"blocks"`
}

// MaxSlurmName is the longest rail group name: Slurm limits SwitchName
// to HOST_NAME_MAX (64) characters since 24.11 (SchedMD commit
// f4d7cad0ac, topology.conf(5) "cannot be longer than 64 characters"),
// and the name is also the value of the rail-group node label, which
// Kubernetes limits to 63 (validation.IsValidLabelValue).
const MaxSlurmName = 63

// RailGroupName names a rail group by its leaves (in rail order, each
// once): the leaves joined by "+" ("leaf1+leaf2"; spec names never hold
// a '+', so the name is no spec switch's). Past MaxSlurmName characters
// it is the first leaf, "+" and a hash of the group's cabling (rails and
// leaves): FromSpec uses that form too when two groups of other cabling
// would share a name.
func RailGroupName(leaves []string) string {
	if len(leaves) == 1 {
		return leaves[0]
	}
	if n := strings.Join(leaves, "+"); len(n) <= MaxSlurmName {
		return n
	}
	return hashedName(leaves[0], strings.Join(leaves, "+"))
}

func hashedName(first, key string) string {
	h := fnv.New32a()
	h.Write([]byte(key))
	return fmt.Sprintf("%s+%08x", first, h.Sum32())
}

// tier is a switch's Clos level: the spec's tier, else 1 for a switch
// with hosts and one more than the switches it connects below.
func tiers(s *spec.Spec) map[string]int {
	t := map[string]int{}
	for _, sw := range s.Switches {
		if sw.Tier > 0 {
			t[sw.Name] = sw.Tier
			continue
		}
		switch sw.Role {
		case "leaf", "border":
			t[sw.Name] = 1
		case "spine":
			t[sw.Name] = 2
		case "superspine":
			t[sw.Name] = 3
		}
	}
	for _, l := range s.Links {
		for _, e := range []spec.Endpoint{l.A, l.B} {
			if e.Kind == spec.KindHost || s.Host(e.Node) != nil {
				if o := l.Other(e.Node); s.Switch(o.Node) != nil && t[o.Node] == 0 {
					t[o.Node] = 1
				}
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, l := range s.Links {
			a, b := l.A.Node, l.B.Node
			if s.Switch(a) == nil || s.Switch(b) == nil {
				continue
			}
			for _, p := range [][2]string{{a, b}, {b, a}} {
				if t[p[0]] > 0 && t[p[1]] == 0 {
					t[p[1]] = t[p[0]] + 1
					changed = true
				}
			}
		}
	}
	return t
}

// FromSpec builds the topology of s.
func FromSpec(s *spec.Spec) *Topology {
	t := tiers(s)
	tp := &Topology{Fabric: s.Fabric.Name}
	sws := map[string]*Switch{}
	for _, sw := range s.Switches {
		sws[sw.Name] = &Switch{Name: sw.Name, Tier: t[sw.Name]}
	}
	above := map[string]map[string]bool{}
	groups := &railGroups{byKey: map[string]*Switch{}, byName: map[string]string{}}
	for _, l := range s.Links {
		a, b := sws[l.A.Node], sws[l.B.Node]
		if a == nil || b == nil || a.Tier == b.Tier {
			continue
		}
		if a.Tier > b.Tier {
			a, b = b, a
		}
		b.Switches = appendOnce(b.Switches, a.Name)
		if above[a.Name] == nil {
			above[a.Name] = map[string]bool{}
		}
		above[a.Name][b.Name] = true
	}
	for _, h := range s.Hosts {
		ht := Host{Name: h.Name, Rails: map[int]string{}}
		for i, n := range h.NICs {
			for _, l := range s.Links {
				var far spec.Endpoint
				switch {
				case l.A.Node == h.Name && l.A.Port == n.Name:
					far = l.B
				case l.B.Node == h.Name && l.B.Port == n.Name:
					far = l.A
				default:
					continue
				}
				if sws[far.Node] == nil {
					continue
				}
				ht.Rails[i] = far.Node
				if ht.Leaf == "" {
					ht.Leaf = far.Node
				}
			}
		}
		if ht.Leaf != "" {
			var sp []string
			for n := range above[ht.Leaf] {
				sp = append(sp, n)
			}
			sort.Strings(sp)
			ht.SpineGroup = strings.Join(sp, ".")
			ht.RailGroup = groups.place(ht, sws, above)
		}
		tp.Hosts = append(tp.Hosts, ht)
	}
	// A switch with nothing below it is not in the tree, and neither is
	// it a child (Slurm rejects a child it has no line for): prune to a
	// fixed point, leaves up.
	for changed := true; changed; {
		changed = false
		for _, x := range sws {
			kept := x.Switches[:0]
			for _, c := range x.Switches {
				if y := sws[c]; len(y.Nodes) > 0 || len(y.Switches) > 0 {
					kept = append(kept, c)
				} else {
					changed = true
				}
			}
			x.Switches = kept
		}
	}
	// The tree in spec order, each rail group after the first of its
	// leaves; the blocks are its switches with hosts.
	for _, sw := range s.Switches {
		for _, x := range append([]*Switch{sws[sw.Name]}, groups.after[sw.Name]...) {
			if len(x.Nodes) == 0 && len(x.Switches) == 0 {
				continue // nothing below it: not part of the tree
			}
			sort.Strings(x.Switches)
			tp.Switches = append(tp.Switches, *x)
			if len(x.Nodes) > 0 {
				leaves := x.Rails
				if leaves == nil {
					leaves = []string{x.Name}
				}
				tp.Blocks = append(tp.Blocks, Block{Name: x.Name, Leaves: leaves, Nodes: x.Nodes})
			}
		}
	}
	// Slurm's block plugin joins neighbouring blocks into the next level
	// (topology.conf(5) "topology/block": "Defined blocks of nodes are
	// paired with other contiguous blocks"): blocks below the same
	// spines go next to each other.
	spinesOf := func(b Block) string {
		var sp []string
		for _, l := range b.Leaves {
			for n := range above[l] {
				sp = append(sp, n)
			}
		}
		sort.Strings(sp)
		return strings.Join(slices.Compact(sp), ",")
	}
	sort.SliceStable(tp.Blocks, func(i, j int) bool { return spinesOf(tp.Blocks[i]) < spinesOf(tp.Blocks[j]) })
	return tp
}

// railGroups collects the hosts' rail groups: hosts whose NICs reach the
// same leaf on every rail share one.
type railGroups struct {
	byKey  map[string]*Switch // cabling (rail=leaf ...) -> group
	byName map[string]string  // group name -> cabling
	after  map[string][]*Switch
}

// place puts h in its rail group, the group below every switch above one
// of its leaves, and returns the group's name. A host whose NICs all
// reach one leaf sits under that leaf itself.
func (g *railGroups) place(h Host, sws map[string]*Switch, above map[string]map[string]bool) string {
	rails := make([]int, 0, len(h.Rails))
	for r := range h.Rails {
		rails = append(rails, r)
	}
	sort.Ints(rails)
	var leaves, key []string
	for _, r := range rails {
		key = append(key, strconv.Itoa(r)+"="+h.Rails[r])
		if !slices.Contains(leaves, h.Rails[r]) {
			leaves = append(leaves, h.Rails[r])
		}
	}
	if len(leaves) == 1 {
		sw := sws[leaves[0]]
		sw.Nodes = appendOnce(sw.Nodes, h.Name)
		return sw.Name
	}
	k := strings.Join(key, " ")
	x := g.byKey[k]
	if x == nil {
		name := RailGroupName(leaves)
		if other, taken := g.byName[name]; taken && other != k {
			name = hashedName(leaves[0], k)
		}
		x = &Switch{Name: name, Tier: 1, Rails: leaves}
		g.byKey[k], g.byName[name] = x, k
		if g.after == nil {
			g.after = map[string][]*Switch{}
		}
		g.after[leaves[0]] = append(g.after[leaves[0]], x)
		sws[name] = x
		for _, l := range leaves {
			for sp := range above[l] {
				sws[sp].Switches = appendOnce(sws[sp].Switches, x.Name)
			}
		}
	}
	x.Nodes = appendOnce(x.Nodes, h.Name)
	return x.Name
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// Slurm is the topology.conf of the tree plugin (TopologyPlugin=
// topology/tree): one SwitchName line per switch with the hosts
// (Nodes=) or switches (Switches=) below it. A host sits under its rail
// group: Slurm's tree has one leaf per node, and the hosts of a rail
// group are one switch apart on every rail, as hosts under one leaf are.
func (t *Topology) Slurm() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# topology.conf for fabric %q, generated by fabctl topology --format slurm from the spec's cabling.\n", t.Fabric)
	b.WriteString("# TopologyPlugin=topology/tree. A host sits under the leaf its NICs reach.\n")
	t.railComments(&b, "switch")
	for _, sw := range t.Switches {
		fmt.Fprintf(&b, "SwitchName=%s", sw.Name)
		if len(sw.Nodes) > 0 {
			fmt.Fprintf(&b, " Nodes=%s", strings.Join(sw.Nodes, ","))
		}
		if len(sw.Switches) > 0 {
			fmt.Fprintf(&b, " Switches=%s", strings.Join(sw.Switches, ","))
		}
		b.WriteString("\n")
	}
	return b.String()
}

// railComments says which leaves each rail group stands for.
func (t *Topology) railComments(b *strings.Builder, what string) {
	first := true
	for _, sw := range t.Switches {
		if len(sw.Rails) == 0 {
			continue
		}
		if first {
			fmt.Fprintf(b, "# A rail group (hosts whose NICs reach the same leaf on every rail) is one %s:\n", what)
			first = false
		}
		fmt.Fprintf(b, "#   %s: leaves %s\n", sw.Name, strings.Join(sw.Rails, ", "))
	}
}

// SlurmBlock is the topology.conf of the block plugin (TopologyPlugin=
// topology/block, Slurm 23.11 or later; topology.conf(5) "topology/block"):
// one BlockName line per rail group (or leaf) with its hosts. Slurm 23.11
// takes only blocks of one size (topology_block.c: "children count no
// equal bblock_node_cnt"); 24.05 and later take blocks of at least the
// base size, the first block's size unless BlockSizes says (block_record.c
// _read_topo_file). Blocks of unequal size therefore get BlockSizes: the
// smallest block's size as the base and the levels Slurm uses without it
// (1, 2, 4, 8 and 16 blocks), each "a power of two larger than the prior".
func (t *Topology) SlurmBlock() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# topology.conf for fabric %q, generated by fabctl topology --format slurm-block from the spec's cabling.\n", t.Fabric)
	b.WriteString("# TopologyPlugin=topology/block (Slurm 23.11 or later). A block is the hosts one switch apart on every rail.\n")
	t.railComments(&b, "block")
	if len(t.Blocks) == 0 {
		b.WriteString("# No host is cabled to a switch: there is no block.\n")
		return b.String()
	}
	least, most := len(t.Blocks[0].Nodes), 0
	for _, bl := range t.Blocks {
		least, most = min(least, len(bl.Nodes)), max(most, len(bl.Nodes))
		fmt.Fprintf(&b, "BlockName=%s Nodes=%s\n", bl.Name, strings.Join(bl.Nodes, ","))
	}
	if least != most {
		fmt.Fprintf(&b, "# Blocks of %d to %d hosts: BlockSizes needs Slurm 24.05 or later (23.11 takes blocks of one size only).\n", least, most)
		fmt.Fprintf(&b, "BlockSizes=%d,%d,%d,%d,%d\n", least, 2*least, 4*least, 8*least, 16*least)
	}
	return b.String()
}

// LabelPrefix is the prefix of fabctl's Kubernetes node labels.
const LabelPrefix = "topology.fabctl.io/"

// FabricLabel marks a node as a host of the fabric, its value the
// fabric's name: every host of the spec carries it, cabled or not. The
// Kubernetes engine's agent DaemonSet runs on the nodes that carry it
// (kube.FabricLabel, docs/kubernetes.md).
const FabricLabel = "fabctl.io/fabric"

// Labels are each host's Kubernetes node labels: FabricLabel on every
// host; for a cabled host leaf, spine-group, rail (the rail of the NIC
// the leaf label names: 0) and rail-group (its rail group, "." for "+"),
// and per rail rail<N>-leaf when the host has more than one.
func (t *Topology) Labels() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, h := range t.Hosts {
		l := map[string]string{FabricLabel: t.Fabric}
		out[h.Name] = l
		if h.Leaf == "" {
			continue
		}
		l[LabelPrefix+"leaf"], l[LabelPrefix+"rail"] = h.Leaf, "0"
		// The rail group ("+" is no label character: "."), the same on
		// every host one switch apart on every rail: a topologyKey for
		// pod affinity in a rail-optimised pod.
		l[LabelPrefix+"rail-group"] = strings.ReplaceAll(h.RailGroup, "+", ".")
		if h.SpineGroup != "" {
			l[LabelPrefix+"spine-group"] = h.SpineGroup
		}
		for r := range h.Rails {
			if r == 0 {
				continue
			}
			l[LabelPrefix+"rail"+strconv.Itoa(r)+"-leaf"] = h.Rails[r]
		}
		if len(h.Rails) > 1 {
			l[LabelPrefix+"rail0-leaf"] = h.Rails[0]
		}
	}
	return out
}

// CheckLabels reports the first host name that is no valid node name, or
// label value Kubernetes would refuse (at most 63 characters of A-Z, a-z,
// 0-9, '-', '_' and '.', starting and ending with a letter or digit),
// naming the host and the label; nil when kubectl label takes them all
// (and Kubectl's lines then hold no character a shell would interpret).
func (t *Topology) CheckLabels() error {
	ls := t.Labels()
	hosts := make([]string, 0, len(ls))
	for h := range ls {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		if errs := validation.IsDNS1123Subdomain(h); len(errs) > 0 {
			return fmt.Errorf("host %q is not a valid Kubernetes node name (%s): the host's name in the spec is its node's name", h, strings.Join(errs, "; "))
		}
		keys := make([]string, 0, len(ls[h]))
		for k := range ls[h] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if errs := validation.IsValidLabelValue(ls[h][k]); len(errs) > 0 {
				return fmt.Errorf("host %q: label %s=%q is not a valid Kubernetes label value (%s): rename the fabric or switch it comes from", h, k, ls[h][k], strings.Join(errs, "; "))
			}
		}
	}
	return nil
}

// Kubectl is the kubectl commands that set the labels.
func (t *Topology) Kubectl() string {
	ls := t.Labels()
	var hosts []string
	for h := range ls {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	var b strings.Builder
	for _, h := range hosts {
		var kv []string
		for k, v := range ls[h] {
			kv = append(kv, k+"="+v)
		}
		sort.Strings(kv)
		fmt.Fprintf(&b, "kubectl label node %s --overwrite %s\n", h, strings.Join(kv, " "))
	}
	return b.String()
}
