package ibsim

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"syscall"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibspec"
	"github.com/fabctl/fabctl/internal/safefile"
	"github.com/fabctl/fabctl/spec"
)

// Faults on a running simulated subnet, for `fabctl testbed fault`: what
// goes wrong on a real fabric, each of which validate (and plan) must
// name by port.

// Recable moves two running cables: the cable at a now ends at bPeer and
// the cable at b at aPeer (a crossed pair, what a technician swapping two
// cables does). It takes both cables down (ibsim console Unlink), links
// the ports crosswise (console Link "a"[p] "b"[q], ibsim/sim_cmd.c
// do_link: both ports must be free) and has opensm sweep the new
// cabling (SIGHUP forces a heavy sweep: opensm/main.c osm_hup_flag), so
// the adapters get routes again.
func (s *Sim) Recable(ctx context.Context, a, aPeer, b, bPeer ibfabric.PortRef) error {
	for _, p := range []ibfabric.PortRef{a, b} {
		if err := s.LinkDown(ctx, p); err != nil {
			return err
		}
	}
	for _, pair := range [][2]ibfabric.PortRef{{a, bPeer}, {b, aPeer}} {
		cmd := fmt.Sprintf("Link %q[%d] %q[%d]", pair[0].Node, pair[0].Port, pair[1].Node, pair[1].Port)
		out, err := s.Console(ctx, cmd)
		if err != nil {
			return err
		}
		if err := consoleErr(cmd, out); err != nil {
			return err
		}
	}
	return s.Resweep(ctx)
}

// Resweep makes opensm run a heavy sweep (SIGHUP) and waits for its
// SUBNET UP.
func (s *Sim) Resweep(ctx context.Context) error {
	n := s.SubnetUps()
	if err := syscall.Kill(s.OpenSMPID, syscall.SIGHUP); err != nil {
		return fmt.Errorf("SIGHUP opensm %d: %w", s.OpenSMPID, err)
	}
	return s.WaitSubnetUp(ctx, n)
}

// PartitionsFile is the partitions.conf the Sim's opensm reads (where
// fabctl's opensm driver writes it too: the Sim's opensm.conf names it).
func (s *Sim) PartitionsFile() string { return s.path(OpenSMDir, "partitions.conf") }

// DropMember removes a port GUID from a partition in opensm's
// partitions.conf and has opensm sweep it in: the subnet manager's files
// drifted from the spec (an old render, a hand edit), and the port loses
// the partition's P_Key.
func (s *Sim) DropMember(ctx context.Context, partition string, portGUID uint64) error {
	b, err := safefile.ReadFile(s.PartitionsFile(), safefile.Testbed)
	if err != nil {
		return fmt.Errorf("the simulated subnet manager has no partitions file (run fabctl apply first): %w", err)
	}
	out, err := dropMember(string(b), partition, portGUID)
	if err != nil {
		return err
	}
	if err := safefile.WriteFile(s.PartitionsFile(), []byte(out), 0o644, safefile.Testbed); err != nil {
		return err
	}
	return s.Resweep(ctx)
}

// dropMember edits partitions.conf text (opensm(8) PARTITION
// CONFIGURATION, doc/partition-config.txt: "name[=pkey][,flags] :
// member[=full|limited|both], member ... ;", "#" to the end of a line a
// comment) to remove one member line of a partition. When the removed
// member ended the list (it held the ";"), the member before it gets the
// ";".
func dropMember(text, partition string, guid uint64) (string, error) {
	lines := strings.SplitAfter(text, "\n")
	code := func(l string) string {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			return l[:i]
		}
		return l
	}
	want := ibfabric.GUID(guid)
	in, found := false, false
	prev := -1 // the previous member line of the partition
	for i, l := range lines {
		c := strings.TrimSpace(code(l))
		if !in {
			name, _, ok := strings.Cut(c, "=")
			if !ok {
				name, _, ok = strings.Cut(c, ":")
			}
			if ok && strings.TrimSpace(name) == partition && strings.Contains(c, ":") {
				in = true
			}
			continue
		}
		if c == "" {
			continue
		}
		id := strings.FieldsFunc(c, func(r rune) bool { return r == '=' || r == ',' || r == ';' || r == ' ' || r == '\t' })
		if len(id) > 0 && strings.EqualFold(id[0], want) {
			ends := strings.Contains(c, ";")
			lines[i] = ""
			found = true
			if ends {
				if prev < 0 {
					return "", fmt.Errorf("partition %q: %s is its only member; drop another or remove the partition", partition, want)
				}
				pc := code(lines[prev])
				j := strings.LastIndexByte(pc, ',')
				if j < 0 {
					return "", fmt.Errorf("partition %q: cannot end the member list before %s", partition, want)
				}
				lines[prev] = pc[:j] + " ;" + lines[prev][j+1:]
			}
			break
		}
		if strings.Contains(c, ";") {
			break
		}
		prev = i
	}
	if !in {
		return "", fmt.Errorf("no partition %q in the subnet manager's partitions.conf", partition)
	}
	if !found {
		return "", fmt.Errorf("partition %q has no member %s in the subnet manager's partitions.conf", partition, want)
	}
	return strings.Join(lines, ""), nil
}

// FaultKind is a fault `fabctl testbed fault` can make.
type FaultKind struct {
	Name  string
	Args  []string // the arguments' names, for usage lines
	Usage string
}

// Faults are the kinds Inject makes, in the order the help lists them.
// Ports are the spec's: SWITCH:PORT (leaf1:2) or HOST:NIC (cn01:ib0).
var Faults = []FaultKind{
	{"link-down", []string{"PORT"}, "take the cable at PORT down (ibsim Unlink)"},
	{"link-up", []string{"PORT"}, "bring it back (ibsim ReLink)"},
	{"width", []string{"PORT", "1x|2x|4x|8x|12x"}, "make the link at PORT train at that width (ibportstate: LinkWidthEnabled)"},
	{"miswire", []string{"PORT", "PORT"}, "swap the far ends of the two ports' cables (again to swap them back); opensm re-sweeps"},
	{"partition-drop", []string{"PARTITION", "HOST:NIC"}, "remove the port from the partition in opensm's partitions.conf and have opensm sweep it in (fabctl apply restores it)"},
	{"pkey-remove", []string{"PORT", "PARTITION"}, "clear the partition's P_Key from the port's P_Key table behind opensm's back (an SMP Set; a switch port too: fabctl apply restores it)"},
	{"pkey-add", []string{"PORT", "PARTITION"}, "put the partition's P_Key (full member) into a free entry of the port's P_Key table (SMP Set)"},
	{"pkey-limited", []string{"PORT", "PARTITION"}, "turn the port's full membership of the partition into a limited one (SMP Set)"},
	{"sl2vl-zero", []string{"PORT"}, "map every SL to VL 0 in the port's SL-to-VL tables (SMP Set; on a switch port, from every cabled input port)"},
	{"vlarb-weight", []string{"PORT", "high|low", "VL", "WEIGHT"}, "set the weight of VL in the port's high- or low-priority VL arbitration table (SMP Set)"},
	{"unreadable", []string{"PORT"}, "the port's node answers no SL-to-VL table query (ibsim Error, 100%: the rest of the fabric still reads)"},
	{"readable", []string{"PORT"}, "undo unreadable"},
}

// FaultArity is how many arguments a fault takes (false: no such fault).
func FaultArity(kind string) (int, bool) {
	for _, f := range Faults {
		if f.Name == kind {
			return len(f.Args), true
		}
	}
	return 0, false
}

// Inject makes a fault on the simulated subnet of spec s (fab is its
// topology) and says what it did, in the spec's names.
func (s *Sim) Inject(ctx context.Context, sp *spec.Spec, fab *ibspec.Fabric, kind string, args []string) (string, error) {
	n, ok := FaultArity(kind)
	if !ok {
		return "", fmt.Errorf("unknown fault %q", kind)
	}
	if len(args) != n {
		return "", fmt.Errorf("fault %s takes %d argument(s), got %d", kind, n, len(args))
	}
	port := func(i int) (ibfabric.PortRef, error) { return FaultPort(fab, args[i]) }
	switch kind {
	case "link-down", "link-up":
		p, err := port(0)
		if err != nil {
			return "", err
		}
		if kind == "link-down" {
			return fmt.Sprintf("the cable at %s is down", fab.Name(p.Node, p.Port)), s.LinkDown(ctx, p)
		}
		return fmt.Sprintf("the cable at %s is up again", fab.Name(p.Node, p.Port)), s.LinkUp(ctx, p)
	case "width":
		p, err := port(0)
		if err != nil {
			return "", err
		}
		w, err := ibfabric.ParseWidth(args[1])
		if err != nil {
			return "", err
		}
		guid, _ := portGUID(fab, p)
		return fmt.Sprintf("the link at %s trains at %s", fab.Name(p.Node, p.Port), w), s.SetWidth(ctx, p, guid, w)
	case "miswire":
		return s.miswire(ctx, fab, args)
	case "partition-drop":
		p, err := port(1)
		if err != nil {
			return "", err
		}
		if partitionNamed(sp, args[0]) == nil {
			return "", fmt.Errorf("the spec has no partition %q", args[0])
		}
		guid, _ := portGUID(fab, p)
		if err := s.DropMember(ctx, args[0], guid); err != nil {
			return "", err
		}
		return fmt.Sprintf("%s dropped from partition %s in opensm's partitions.conf; opensm swept it in", fab.Name(p.Node, p.Port), args[0]), nil
	case "pkey-remove", "pkey-add", "pkey-limited":
		p, err := port(0)
		if err != nil {
			return "", err
		}
		part := partitionNamed(sp, args[1])
		if part == nil {
			return "", fmt.Errorf("the spec has no partition %q", args[1])
		}
		return s.pkeyFault(ctx, fab, p, kind, part)
	case "sl2vl-zero":
		p, err := port(0)
		if err != nil {
			return "", err
		}
		return s.sl2vlZero(ctx, fab, p)
	case "vlarb-weight":
		p, err := port(0)
		if err != nil {
			return "", err
		}
		return s.vlarbWeight(ctx, fab, p, args[1:])
	case "unreadable", "readable":
		p, err := port(0)
		if err != nil {
			return "", err
		}
		rate := 100
		if kind == "readable" {
			rate = 0
		}
		// ibsim console Error "nodeid"[port] rate attr (ibsim-0.10
		// ibsim/sim_cmd.c do_seterror): the port (a switch's: port 0,
		// its management port) drops MADs of that attribute
		// (sim_mad.c process_packet). The attribute is SLtoVLMapping
		// Table, which opensm sets only when its copy differs: the
		// subnet stays up.
		node, pn := p.Node, p.Port
		if isSwitch(fab, node) {
			pn = 0
		}
		cmd := fmt.Sprintf("Error %q[%d] %d 0x%x", node, pn, rate, 0x17)
		out, err := s.Console(ctx, cmd)
		if err != nil {
			return "", err
		}
		if err := consoleErr(cmd, out); err != nil {
			return "", err
		}
		if rate == 0 {
			return fmt.Sprintf("%s answers SL-to-VL table queries again", fab.Name(p.Node, 0)), nil
		}
		return fmt.Sprintf("%s answers no SL-to-VL table query", fab.Name(p.Node, 0)), nil
	}
	return "", fmt.Errorf("unknown fault %q", kind)
}

// FaultPort resolves a spec port (SWITCH:PORT or HOST:NIC) to the
// topology's port.
func FaultPort(fab *ibspec.Fabric, ep string) (ibfabric.PortRef, error) {
	if r, ok := fab.Ports[ep]; ok {
		return r, nil
	}
	node, ps, _ := strings.Cut(ep, ":")
	if port, err := strconv.Atoi(ps); err == nil {
		for _, sw := range fab.Topology.Switches {
			if sw.Name == node {
				if port < 1 || port > sw.Ports {
					return ibfabric.PortRef{}, fmt.Errorf("%s: switch %s has ports 1..%d", ep, node, sw.Ports)
				}
				return ibfabric.PortRef{Node: node, Port: port}, nil
			}
		}
	}
	return ibfabric.PortRef{}, fmt.Errorf("%s is not a port of the InfiniBand fabric: use SWITCH:PORT (leaf1:2) or HOST:NIC of a cabled NIC (cn01:ib0)", ep)
}

func isSwitch(fab *ibspec.Fabric, node string) bool {
	for _, sw := range fab.Topology.Switches {
		if sw.Name == node {
			return true
		}
	}
	return false
}

// peerOf is the far end of the spec's cable at p.
func peerOf(fab *ibspec.Fabric, p ibfabric.PortRef) (ibfabric.PortRef, bool) {
	for _, l := range fab.Topology.Links {
		if l.A == p {
			return l.B, true
		}
		if l.B == p {
			return l.A, true
		}
	}
	return ibfabric.PortRef{}, false
}

// portGUID is what ibportstate -G addresses a port by: a switch's node
// GUID, an adapter port's port GUID.
func portGUID(fab *ibspec.Fabric, p ibfabric.PortRef) (uint64, bool) {
	for _, sw := range fab.Topology.Switches {
		if sw.Name == p.Node {
			return sw.SwitchGUID(), true
		}
	}
	for _, h := range fab.Topology.HCAs {
		if h.Name == p.Node {
			return h.PortGUID(p.Port), true
		}
	}
	return 0, false
}

func partitionNamed(s *spec.Spec, name string) *spec.Partition {
	if s == nil || s.InfiniBand == nil {
		return nil
	}
	for _, p := range s.InfiniBand.Partitions {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func (s *Sim) miswire(ctx context.Context, fab *ibspec.Fabric, args []string) (string, error) {
	a, err := FaultPort(fab, args[0])
	if err != nil {
		return "", err
	}
	b, err := FaultPort(fab, args[1])
	if err != nil {
		return "", err
	}
	pa, okA := peerOf(fab, a)
	pb, okB := peerOf(fab, b)
	if !okA || !okB || a == b || pa == b {
		return "", fmt.Errorf("miswire %s %s: two ports on two different cables of the spec", args[0], args[1])
	}
	// The simulated cabling may already be crossed (a second miswire
	// swaps back): ask the fabric where the cables end now.
	cur, err := ibfabric.Discover(ctx, s.Runner(), ibfabric.Options{})
	if err != nil {
		return "", err
	}
	if now, ok := currentPeer(cur, fab, a); ok {
		pa = now
	}
	if now, ok := currentPeer(cur, fab, b); ok {
		pb = now
	}
	if err := s.Recable(ctx, a, pa, b, pb); err != nil {
		return "", err
	}
	return fmt.Sprintf("%s now cabled to %s, %s to %s", fab.Name(a.Node, a.Port), fab.Name(pb.Node, pb.Port), fab.Name(b.Node, b.Port), fab.Name(pa.Node, pa.Port)), nil
}

// currentPeer is the topology port the discovered fabric cables p to.
func currentPeer(cur *ibfabric.Fabric, fab *ibspec.Fabric, p ibfabric.PortRef) (ibfabric.PortRef, bool) {
	guidToName := map[uint64]string{}
	for _, sw := range fab.Topology.Switches {
		guidToName[sw.SwitchGUID()] = sw.Name
	}
	for _, h := range fab.Topology.HCAs {
		guidToName[h.NodeGUID()] = h.Name
	}
	g, ok := fab.Topology.NodeGUID(p.Node)
	if !ok {
		return ibfabric.PortRef{}, false
	}
	n := cur.Node(g)
	if n == nil || n.Ports[p.Port] == nil || n.Ports[p.Port].Peer == nil {
		return ibfabric.PortRef{}, false
	}
	peer := n.Ports[p.Port].Peer
	name, ok := guidToName[peer.Node]
	return ibfabric.PortRef{Node: name, Port: peer.Port}, ok
}
