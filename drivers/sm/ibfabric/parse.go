package ibfabric

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// The parsers read infiniband-diags' text output (rdma-core 44,
// infiniband-diags/ibnetdiscover.c out_switch/out_ca/out_switch_port/
// out_ca_port for the topology; libibmad's dump functions behind
// smpquery for PortInfo, P_Key, SL2VL and VL arbitration tables). They
// never panic: anything they cannot read is a *ParseError naming the
// command, the node and port it was about and the line.

var (
	// Switch	8 "S-0002c90000002000"		# "sw2" base port 0 lid 3 lmc 0
	// Ca	1 "H-0002c90000040000"		# "cn04 mlx5_0"
	reNodeHeader = regexp.MustCompile(`^(Switch|Ca|Rt)\s+(\d+)\s+"([^"]*)"\s*(?:#\s*"(.*)"(.*))?$`)
	// [1]	"H-0002c90000030000"[1](2c90000030001) 		# "cn03 mlx5_0" lid 5 4xQDR
	reSwitchPort = regexp.MustCompile(`^\[(\d+)\](?:\[ext \d+\])?\s+"([^"]+)"\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s*#\s*"(.*)"\s+lid\s+(\d+)\s+(\d+)x(\w+)\s*$`)
	// [1](2c90000040001) 	"S-0002c90000002000"[2]		# lid 6 lmc 0 "sw2" lid 3 1xQDR
	reCAPort    = regexp.MustCompile(`^\[(\d+)\]\(([0-9a-fA-F]+)\)\s+"([^"]+)"\[(\d+)\](?:\[ext \d+\])?(?:\(([0-9a-fA-F]+)\))?\s*#\s*lid\s+(\d+)\s+lmc\s+\d+\s+"(.*)"\s+lid\s+(\d+)\s+(\d+)x(\w+)\s*$`)
	reLID       = regexp.MustCompile(`\blid\s+(\d+)`)
	reInitiated = regexp.MustCompile(`^#\s*Initiated from node\s+([0-9a-fA-F]+)\s+port\s+([0-9a-fA-F]+)`)
)

// nodeIDGUID reads the GUID out of ibnetdiscover's node id
// ("S-0002c90000002000", "H-...", "R-...").
func nodeIDGUID(id string) (uint64, bool) {
	if len(id) < 3 || id[1] != '-' || !strings.ContainsRune("SHR", rune(id[0])) {
		return 0, false
	}
	g, err := strconv.ParseUint(id[2:], 16, 64)
	return g, err == nil && g != 0
}

func parseHex(s string) (uint64, error) {
	s = strings.TrimPrefix(strings.TrimPrefix(strings.TrimSpace(s), "0x"), "0X")
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = s[:i]
	}
	return strconv.ParseUint(s, 16, 64)
}

// ParseTopology parses ibnetdiscover's default (topology file) output.
func ParseTopology(out string) (*Fabric, error) {
	f := &Fabric{Nodes: map[uint64]*Node{}}
	var cur *Node
	var pendingGUID uint64 // from switchguid= / caguid= / rtguid=
	seen := map[[2]uint64]bool{}
	fail := func(n int, line, msg string) error {
		pe := &ParseError{Cmd: "ibnetdiscover", Line: n, Text: line, Msg: msg}
		if cur != nil {
			pe.Node = cur.Name()
		}
		return pe
	}
	for i, raw := range strings.Split(out, "\n") {
		n := i + 1
		line := strings.TrimRight(raw, " \t\r")
		trim := strings.TrimSpace(line)
		switch {
		case trim == "":
			cur = nil
			continue
		case strings.HasPrefix(trim, "#"):
			if m := reInitiated.FindStringSubmatch(trim); m != nil {
				g, err := strconv.ParseUint(m[2], 16, 64)
				if err != nil {
					return nil, fail(n, line, "the port GUID is not hex")
				}
				f.From = g
			}
			continue
		case strings.HasPrefix(trim, "switchguid=") || strings.HasPrefix(trim, "caguid=") || strings.HasPrefix(trim, "rtguid="):
			_, v, _ := strings.Cut(trim, "=")
			g, err := parseHex(v)
			if err != nil || g == 0 {
				return nil, fail(n, line, "the node GUID is not a non-zero hex number")
			}
			pendingGUID = g
			continue
		case strings.HasPrefix(trim, "vendid=") || strings.HasPrefix(trim, "devid=") || strings.HasPrefix(trim, "sysimgguid="):
			continue
		case strings.HasPrefix(trim, "Switch") || strings.HasPrefix(trim, "Ca") || strings.HasPrefix(trim, "Rt"):
			m := reNodeHeader.FindStringSubmatch(trim)
			if m == nil {
				return nil, fail(n, line, "not a node header (want: Switch|Ca|Rt <ports> \"<id>\" # \"<description>\" ...)")
			}
			ports, err := strconv.Atoi(m[2])
			if err != nil || ports < 1 || ports > 255 {
				return nil, fail(n, line, "the port count is not 1..255")
			}
			g, ok := nodeIDGUID(m[3])
			if pendingGUID != 0 {
				g, ok = pendingGUID, true
			}
			pendingGUID = 0
			if !ok {
				return nil, fail(n, line, "no node GUID: neither a switchguid=/caguid= line before the header nor an S-/H-/R-<guid> id")
			}
			if _, dup := f.Nodes[g]; dup {
				return nil, fail(n, line, "node GUID "+GUID(g)+" is listed twice")
			}
			cur = &Node{GUID: g, NumPorts: ports, Desc: m[4], Ports: map[int]*Port{}}
			switch m[1] {
			case "Switch":
				cur.Type = Switch
				if lm := reLID.FindStringSubmatch(m[5]); lm != nil {
					cur.LID, _ = strconv.Atoi(lm[1])
				}
				cur.Ports[0] = &Port{Num: 0, GUID: g, LID: cur.LID}
			case "Ca":
				cur.Type = CA
			default:
				cur.Type = Router
			}
			f.Nodes[g] = cur
			continue
		case strings.HasPrefix(trim, "["):
			if cur == nil {
				return nil, fail(n, line, "a port line outside a node record")
			}
			p, peer, err := parsePortLine(cur, trim)
			if err != nil {
				return nil, fail(n, line, err.Error())
			}
			if _, dup := cur.Ports[p.Num]; dup && p.Num != 0 {
				return nil, fail(n, line, "port "+strconv.Itoa(p.Num)+" is listed twice")
			}
			cur.Ports[p.Num] = p
			a, b := [2]uint64{cur.GUID, uint64(p.Num)}, [2]uint64{peer.Node, uint64(peer.Port)}
			if !seen[a] && !seen[b] {
				f.Links = append(f.Links, Link{A: PeerRef{cur.GUID, p.Num}, B: *peer, Width: p.Width, Speed: p.Speed})
			}
			seen[a], seen[b] = true, true
			continue
		default:
			// Lines of later formats fabctl does not need.
			continue
		}
	}
	if len(f.Nodes) == 0 {
		return nil, &ParseError{Cmd: "ibnetdiscover", Msg: "no nodes in the output (is this ibnetdiscover's topology output?)"}
	}
	// Every link's far end must be a listed node (ibnetdiscover lists
	// every node it reached).
	for _, l := range f.Links {
		if f.Nodes[l.B.Node] == nil {
			return nil, &ParseError{Cmd: "ibnetdiscover", Node: f.Nodes[l.A.Node].Name(), Port: l.A.Port,
				Msg: "cabled to " + GUID(l.B.Node) + ", which the output does not list"}
		}
	}
	return f, nil
}

func parsePortLine(cur *Node, line string) (*Port, *PeerRef, error) {
	atoi := func(s string) int { v, _ := strconv.Atoi(s); return v }
	var p Port
	var peerID, peerPortS, widthS, speedS string
	if cur.Type == Switch {
		m := reSwitchPort.FindStringSubmatch(line)
		if m == nil {
			return nil, nil, fmt.Errorf("not a switch port line (want: [port] \"<peer id>\"[peer port](peer guid) # \"<peer description>\" lid N <width>x<speed>)")
		}
		p.Num, peerID, peerPortS = atoi(m[1]), m[2], m[3]
		p.GUID, p.LID = cur.GUID, cur.LID
		widthS, speedS = m[7], m[8]
	} else {
		m := reCAPort.FindStringSubmatch(line)
		if m == nil {
			return nil, nil, fmt.Errorf("not an adapter port line (want: [port](port guid) \"<peer id>\"[peer port] # lid N lmc N \"<peer description>\" lid N <width>x<speed>)")
		}
		p.Num = atoi(m[1])
		g, err := strconv.ParseUint(m[2], 16, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("the port GUID %q is not hex", m[2])
		}
		p.GUID = g
		p.LID = atoi(m[6])
		peerID, peerPortS = m[3], m[4]
		widthS, speedS = m[9], m[10]
	}
	if p.Num < 1 || p.Num > cur.NumPorts {
		return nil, nil, fmt.Errorf("port %d is outside the node's 1..%d", p.Num, cur.NumPorts)
	}
	pg, ok := nodeIDGUID(peerID)
	if !ok {
		return nil, nil, fmt.Errorf("the peer id %q is not S-/H-/R-<guid>", peerID)
	}
	pp := atoi(peerPortS)
	if pp < 1 || pp > 255 {
		return nil, nil, fmt.Errorf("peer port %q is not 1..255", peerPortS)
	}
	w, err := ParseWidth(widthS)
	if err != nil {
		return nil, nil, err
	}
	s, err := ParseSpeed(speedS)
	if err != nil {
		return nil, nil, err
	}
	p.Width, p.Speed = w, s
	peer := &PeerRef{Node: pg, Port: pp}
	p.Peer = peer
	return &p, peer, nil
}

// ParsePortInfo parses `smpquery portinfo` output.
func ParsePortInfo(out string) (*PortInfo, error) {
	pi := &PortInfo{}
	fields := map[string]string{}
	lines := map[string]int{}
	for i, raw := range strings.Split(out, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue // capability names under CapMask
		}
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(strings.TrimLeft(v, "."))
		if _, dup := fields[k]; !dup {
			fields[k] = v
			lines[k] = i + 1
		}
	}
	fail := func(k, msg string) error {
		return &ParseError{Cmd: "smpquery portinfo", Line: lines[k], Text: k + ": " + fields[k], Msg: msg}
	}
	need := func(k string) (string, error) {
		v, ok := fields[k]
		if !ok {
			return "", &ParseError{Cmd: "smpquery portinfo", Msg: "no " + k + " field (is this smpquery portinfo output?)"}
		}
		return v, nil
	}
	var err error
	if pi.State, err = need("LinkState"); err != nil {
		return nil, err
	}
	if pi.PhysState, err = need("PhysLinkState"); err != nil {
		return nil, err
	}
	if v, ok := fields["Lid"]; ok {
		if pi.LID, err = strconv.Atoi(v); err != nil {
			return nil, fail("Lid", "not a number")
		}
	}
	if v, ok := fields["LinkWidthActive"]; ok && v != "" && pi.State != "Down" {
		if pi.Width, err = ParseWidth(v); err != nil {
			return nil, fail("LinkWidthActive", err.Error())
		}
	}
	if v, ok := fields["LinkSpeedActive"]; ok && pi.State != "Down" {
		switch v {
		case "2.5 Gbps":
			pi.Speed = SDR
		case "5.0 Gbps":
			pi.Speed = DDR
		case "10.0 Gbps":
			pi.Speed = QDR
		default:
			return nil, fail("LinkSpeedActive", "not 2.5, 5.0 or 10.0 Gbps")
		}
		switch fields["LinkSpeedExtActive"] {
		case "14.0625 Gbps":
			pi.Speed = FDR
		case "25.78125 Gbps":
			pi.Speed = EDR
		case "53.125 Gbps":
			pi.Speed = HDR
		case "106.25 Gbps":
			pi.Speed = NDR
		}
	}
	for _, k := range []string{"NeighborMTU", "MtuCap"} {
		v, ok := fields[k]
		if !ok {
			continue
		}
		m, err := strconv.Atoi(v)
		if err != nil {
			return nil, fail(k, "not a number of bytes")
		}
		if k == "NeighborMTU" {
			pi.NeighborMTU = m
		} else {
			pi.MTUCap = m
		}
	}
	for _, k := range []string{"OperVLs", "VLCap"} {
		v, ok := fields[k]
		if !ok {
			continue
		}
		n, err := vlCount(v)
		if err != nil {
			return nil, fail(k, err.Error())
		}
		if k == "OperVLs" {
			pi.OperVLs = n
		} else {
			pi.VLCap = n
		}
	}
	pi.PartEnfInb = fields["PartEnforceInb"] == "1"
	pi.PartEnfOutb = fields["PartEnforceOutb"] == "1"
	if v, ok := fields["PkeyViolations"]; ok {
		pi.PKeyViolates, _ = strconv.Atoi(v)
	}
	return pi, nil
}

// vlCount reads "VL0-7" (8 VLs), "VL0" (1) or "VL0-14" (15).
func vlCount(v string) (int, error) {
	if v == "VL0" {
		return 1, nil
	}
	hi, ok := strings.CutPrefix(v, "VL0-")
	if !ok {
		return 0, fmt.Errorf("%q is not VL0 or VL0-<n>", v)
	}
	n, err := strconv.Atoi(hi)
	if err != nil || n < 1 || n > 14 {
		return 0, fmt.Errorf("%q is not VL0 or VL0-<n>", v)
	}
	return n + 1, nil
}

// ParsePKeys parses `smpquery pkeys` output: the non-zero entries in
// table order.
func ParsePKeys(out string) ([]uint16, error) {
	var keys []uint16
	rows := 0
	for i, raw := range strings.Split(out, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") || strings.HasSuffix(line, "capacity for this port") {
			continue
		}
		idx, rest, ok := strings.Cut(line, ":")
		if !ok {
			return nil, &ParseError{Cmd: "smpquery pkeys", Line: i + 1, Text: raw, Msg: "not a table row (want: <index>: 0x<pkey> ...)"}
		}
		if _, err := strconv.Atoi(strings.TrimSpace(idx)); err != nil {
			return nil, &ParseError{Cmd: "smpquery pkeys", Line: i + 1, Text: raw, Msg: "the row index is not a number"}
		}
		for _, tok := range strings.Fields(rest) {
			v, err := strconv.ParseUint(strings.TrimPrefix(tok, "0x"), 16, 16)
			if err != nil || !strings.HasPrefix(tok, "0x") {
				return nil, &ParseError{Cmd: "smpquery pkeys", Line: i + 1, Text: raw, Msg: fmt.Sprintf("%q is not a 16-bit 0x P_Key", tok)}
			}
			if v&0x7fff != 0 {
				keys = append(keys, uint16(v))
			}
		}
		rows++
	}
	if rows == 0 {
		return nil, &ParseError{Cmd: "smpquery pkeys", Msg: "no P_Key table rows in the output"}
	}
	return keys, nil
}

var reSL2VLRow = regexp.MustCompile(`^ports:\s*in\s+(\d+),\s*out\s+(\d+):\s*\|(.*)$`)

// SL2VLRow is one row of `smpquery sl2vl`: the VL of each SL for traffic
// entering at In and leaving at Out (0/0 on an adapter).
type SL2VLRow struct {
	In, Out int
	VL      [16]int
}

// ParseSL2VL parses `smpquery sl2vl` output.
func ParseSL2VL(out string) ([]SL2VLRow, error) {
	var rows []SL2VLRow
	for i, raw := range strings.Split(out, "\n") {
		line := strings.TrimSpace(raw)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		m := reSL2VLRow.FindStringSubmatch(line)
		if m == nil {
			return nil, &ParseError{Cmd: "smpquery sl2vl", Line: i + 1, Text: raw, Msg: "not a table row (want: ports: in N, out N: | vl| ... |)"}
		}
		var r SL2VLRow
		r.In, _ = strconv.Atoi(m[1])
		r.Out, _ = strconv.Atoi(m[2])
		cells := strings.Split(strings.TrimSuffix(strings.TrimSpace(m[3]), "|"), "|")
		if len(cells) != 16 {
			return nil, &ParseError{Cmd: "smpquery sl2vl", Port: r.Out, Line: i + 1, Text: raw, Msg: fmt.Sprintf("%d VL entries, want 16", len(cells))}
		}
		for sl, c := range cells {
			v, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil || v < 0 || v > 15 {
				return nil, &ParseError{Cmd: "smpquery sl2vl", Port: r.Out, Line: i + 1, Text: raw, Msg: fmt.Sprintf("SL %d: %q is not a VL 0..15", sl, c)}
			}
			r.VL[sl] = v
		}
		rows = append(rows, r)
	}
	if len(rows) == 0 {
		return nil, &ParseError{Cmd: "smpquery sl2vl", Msg: "no SL2VL rows in the output"}
	}
	return rows, nil
}

var reVLArbHeader = regexp.MustCompile(`LowCap\s+(\d+)\s+HighCap\s+(\d+)`)

// ParseVLArb parses `smpquery vlarb` output.
func ParseVLArb(out string) (*VLArb, error) {
	va := &VLArb{}
	var section *[]VLWeight
	var vls []int
	sections := 0
	for i, raw := range strings.Split(out, "\n") {
		line := strings.TrimSpace(raw)
		fail := func(msg string) error {
			return &ParseError{Cmd: "smpquery vlarb", Line: i + 1, Text: raw, Msg: msg}
		}
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "# VLArbitration tables"):
			if m := reVLArbHeader.FindStringSubmatch(line); m != nil {
				va.LowCap, _ = strconv.Atoi(m[1])
				va.HighCap, _ = strconv.Atoi(m[2])
			}
		case strings.HasPrefix(line, "# Low priority"):
			section, vls = &va.Low, nil
			sections++
		case strings.HasPrefix(line, "# High priority"):
			section, vls = &va.High, nil
			sections++
		case strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "VL"):
			if section == nil {
				return nil, fail("a VL row before a Low/High priority table header")
			}
			_, rest, _ := strings.Cut(line, ":")
			vals, err := hexCells(rest)
			if err != nil {
				return nil, fail(err.Error())
			}
			vls = vals
		case strings.HasPrefix(line, "WEIGHT"):
			if section == nil || vls == nil {
				return nil, fail("a WEIGHT row without the VL row before it")
			}
			_, rest, _ := strings.Cut(line, ":")
			ws, err := hexCells(rest)
			if err != nil {
				return nil, fail(err.Error())
			}
			if len(ws) != len(vls) {
				return nil, fail(fmt.Sprintf("%d weights for %d VLs", len(ws), len(vls)))
			}
			for j := range ws {
				if ws[j] != 0 {
					*section = append(*section, VLWeight{VL: vls[j], Weight: ws[j]})
				}
			}
			vls = nil
		default:
			return nil, fail("not a VL arbitration line")
		}
	}
	if sections == 0 {
		return nil, &ParseError{Cmd: "smpquery vlarb", Msg: "no Low/High priority tables in the output"}
	}
	return va, nil
}

// hexCells reads "|0x0 |0x1 |" into numbers.
func hexCells(s string) ([]int, error) {
	var out []int
	for _, c := range strings.Split(s, "|") {
		c = strings.TrimSpace(c)
		if c == "" {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimPrefix(c, "0x"), 16, 8)
		if err != nil {
			return nil, fmt.Errorf("%q is not a 0x byte", c)
		}
		out = append(out, int(v))
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no cells")
	}
	return out, nil
}
