package ibsim

import (
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
)

// The net file is ibsim's topology description. Its format is ibsim's
// parser's, ibsim/sim_net.c in linux-rdma/ibsim (tag ibsim-0.10, the
// Debian bookworm package ibsim-utils 0.10-2), documented by the comments
// of /usr/share/doc/ibsim-utils/net-examples/net and examples.README:
//
//   - a node record is a header line, `Switch <ports> "<id>" # "<desc>"`
//     or `Hca <ports> "<id>" # "<desc>"`, then one line per cabled port,
//     `[<port>] "<remote id>"[<remote port>] <options>`, and a blank line;
//   - both ends of a cable must be listed, each pointing at the other
//     (connect_ports refuses one-sided cables);
//   - `switchguid=<hex>` / `caguid=<hex>` before a header set that node's
//     GUID (parse_guidbase); an adapter's port n gets GUID+n (init_ports),
//     a switch's ports all share its GUID;
//   - port options (parse_port_opt): w=<LinkWidthEnabled bitmask: 1 1x,
//     2 4x, 4 8x, 8 12x, 16 2x>, s=<LinkSpeedEnabled bitmask: 1 SDR, 2 DDR,
//     4 QDR>, e=<LinkSpeedExtEnabled bitmask: 1 FDR, 2 EDR, 4 HDR>. The
//     link trains at the highest width and speed both ends enable
//     (link_ports / get_active_link*); ends with no common width make
//     ibsim abort, so fabctl always enables 1x next to the intended width.
//   - ids may not contain '#' or '@' (build_nodeid), '"' ends them.
//
// What the format cannot express: NDR (ibsim 0.10 accepts extended speeds
// 0..7, NDR is bit 8 and arrived in ibsim 0.11), FDR10 as a distinct
// speed (a Mellanox extension ibsim only negotiates from ibnetdiscover
// comment text), MTUs (every port is fixed at MtuCap 2048 in ibsim's
// PortInfo templates), VL capability (fixed at VL0-7), P_Key table sizes,
// arbitrary port GUIDs (only a node base GUID; ports are base+n), port
// LIDs before an SM runs, and cable lengths or errors other than ibsim's
// random drop rate (the Error console command).

// widthMask is ibsim's LinkWidthEnabled bit of a width.
func widthMask(w ibfabric.Width) (int, error) {
	switch w {
	case 1:
		return 1, nil
	case 2:
		return 16, nil
	case 4:
		return 2, nil
	case 8:
		return 4, nil
	case 12:
		return 8, nil
	}
	return 0, fmt.Errorf("width %s is not one ibsim simulates (1x, 2x, 4x, 8x, 12x)", w)
}

// speedMasks returns ibsim's s= and e= masks enabling every speed up to
// and including sp, so the link trains at sp when both ends agree.
func speedMasks(sp ibfabric.Speed) (s, e int, err error) {
	switch sp {
	case ibfabric.SDR:
		return 1, 0, nil
	case ibfabric.DDR:
		return 3, 0, nil
	case ibfabric.QDR:
		return 7, 0, nil
	case ibfabric.FDR:
		return 7, 1, nil
	case ibfabric.EDR:
		return 7, 3, nil
	case ibfabric.HDR:
		return 7, 7, nil
	}
	return 0, 0, fmt.Errorf("speed %s is not one ibsim 0.10 simulates (SDR, DDR, QDR, FDR, EDR, HDR)", sp)
}

// Default link parameters when a LinkSpec leaves them zero.
const (
	DefaultWidth = ibfabric.Width(4)
	DefaultSpeed = ibfabric.QDR
)

// NetFile renders a topology as an ibsim net file. Node ids are the
// topology's names.
func NetFile(t *ibfabric.Topology) ([]byte, error) {
	if err := t.Validate(); err != nil {
		return nil, err
	}
	type end struct {
		peer ibfabric.PortRef
		opts string
	}
	ports := map[string]map[int]end{}
	for _, l := range t.Links {
		w, sp := l.Width, l.Speed
		if w == 0 {
			w = DefaultWidth
		}
		if sp == 0 {
			sp = DefaultSpeed
		}
		wm, err := widthMask(w)
		if err != nil {
			return nil, fmt.Errorf("link %s - %s: %w", l.A, l.B, err)
		}
		if w != 1 {
			wm |= 1 // keep 1x enabled: ibsim aborts on ends with no common width
		}
		s, e, err := speedMasks(sp)
		if err != nil {
			return nil, fmt.Errorf("link %s - %s: %w", l.A, l.B, err)
		}
		opts := fmt.Sprintf("w=%d s=%d e=%d", wm, s, e)
		for _, x := range [][2]ibfabric.PortRef{{l.A, l.B}, {l.B, l.A}} {
			if ports[x[0].Node] == nil {
				ports[x[0].Node] = map[int]end{}
			}
			ports[x[0].Node][x[0].Port] = end{peer: x[1], opts: opts}
		}
	}
	var b strings.Builder
	b.WriteString("# ibsim net file written by fabctl (testbed/ibsim) from the intended topology.\n")
	b.WriteString("# Format: ibsim 0.10 sim_net.c; see /usr/share/doc/ibsim-utils/net-examples/net.\n\n")
	record := func(kind string, name string, nports int, guid uint64, desc string) {
		fmt.Fprintf(&b, "%s=0x%016x\n", map[string]string{"Switch": "switchguid", "Hca": "caguid"}[kind], guid)
		fmt.Fprintf(&b, "%s %d \"%s\" # \"%s\"\n", kind, nports, name, strings.ReplaceAll(desc, "\"", "'"))
		for p := 1; p <= nports; p++ {
			e, ok := ports[name][p]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "[%d] \"%s\"[%d] %s\n", p, e.peer.Node, e.peer.Port, e.opts)
		}
		b.WriteString("\n")
	}
	// The SM attaches to the node SIM_HOST names; ibsim's default is the
	// first record, so switches go first only for readability.
	for _, s := range t.Switches {
		record("Switch", s.Name, s.Ports, s.SwitchGUID(), s.Description())
	}
	for _, h := range t.HCAs {
		record("Hca", h.Name, h.NumPorts(), h.NodeGUID(), h.Description())
	}
	return []byte(b.String()), nil
}

// Miswire returns a copy of t with the far ends of the cables at ports a
// and b swapped: a is cabled to where b was and the reverse, the classic
// crossed pair of cables.
func Miswire(t *ibfabric.Topology, a, b ibfabric.PortRef) (*ibfabric.Topology, error) {
	c := t.Clone()
	ia, ea := findEnd(c, a)
	ib, eb := findEnd(c, b)
	if ia < 0 || ib < 0 {
		return nil, fmt.Errorf("miswire %s and %s: both must be cabled", a, b)
	}
	if ia == ib {
		return nil, fmt.Errorf("miswire %s and %s: they are the same cable", a, b)
	}
	pa, pb := farEnd(c.Links[ia], ea), farEnd(c.Links[ib], eb)
	setFar(&c.Links[ia], ea, pb)
	setFar(&c.Links[ib], eb, pa)
	return c, c.Validate()
}

// Degrade returns a copy of t where the cable at port p trains at width w
// (a cable with broken lanes, or a port that cannot do more).
func Degrade(t *ibfabric.Topology, p ibfabric.PortRef, w ibfabric.Width) (*ibfabric.Topology, error) {
	c := t.Clone()
	i, _ := findEnd(c, p)
	if i < 0 {
		return nil, fmt.Errorf("degrade %s: not cabled", p)
	}
	c.Links[i].Width = w
	return c, nil
}

// Uncable returns a copy of t without the cable at port p.
func Uncable(t *ibfabric.Topology, p ibfabric.PortRef) (*ibfabric.Topology, error) {
	c := t.Clone()
	i, _ := findEnd(c, p)
	if i < 0 {
		return nil, fmt.Errorf("uncable %s: not cabled", p)
	}
	c.Links = append(c.Links[:i], c.Links[i+1:]...)
	return c, nil
}

func findEnd(t *ibfabric.Topology, p ibfabric.PortRef) (int, int) {
	for i, l := range t.Links {
		if l.A == p {
			return i, 0
		}
		if l.B == p {
			return i, 1
		}
	}
	return -1, 0
}

func farEnd(l ibfabric.LinkSpec, end int) ibfabric.PortRef {
	if end == 0 {
		return l.B
	}
	return l.A
}

func setFar(l *ibfabric.LinkSpec, end int, p ibfabric.PortRef) {
	if end == 0 {
		l.B = p
	} else {
		l.A = p
	}
}
