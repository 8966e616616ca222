package ibsim

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/fabctl/fabctl/drivers/sm/ibfabric"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibmad"
	"github.com/fabctl/fabctl/drivers/sm/ibfabric/ibspec"
	"github.com/fabctl/fabctl/spec"
)

// Port-table faults: what an SMP Set behind the subnet manager's back
// does (another management tool, a firmware reset of one table, a hand
// with a MAD tool). opensm does not see it: it programs a port only when
// the table it keeps for the port differs from what it computes (see
// drivers/sm/opensm/fabric.go). They go through fabctl's own MAD client
// (`fabctl ibmad smp`: LID-routed Get and Set of P_KeyTable,
// SLtoVLMappingTable, VLArbitrationTable, the attribute modifiers of
// IBTA 14.2.5.7-9 as opensm uses them: osm_pkey_mgr.c, osm_qos.c).

// SMP runs LID-routed SMPs through `fabctl ibmad smp`.
func (s *Sim) SMP(ctx context.Context, items []ibmad.SMPItem) ([]ibmad.SMPResult, error) {
	in, err := json.Marshal(items)
	if err != nil {
		return nil, err
	}
	out, err := s.RunInput(ctx, in, MADProgram, "ibmad", "smp")
	if err != nil {
		return nil, err
	}
	var res []ibmad.SMPResult
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(items) {
		return nil, fmt.Errorf("fabctl ibmad smp: %d answers to %d requests (%v)", len(res), len(items), err)
	}
	for i, r := range res {
		if r.Error != "" {
			return nil, fmt.Errorf("SMP to LID %d attribute 0x%04x modifier 0x%x: %s", items[i].LID, items[i].Attr, items[i].Mod, r.Error)
		}
	}
	return res, nil
}

// portOf reads the fabric and returns the node and port of p, with the
// LID SMPs address it by (a switch's, or the adapter port's).
func (s *Sim) portOf(ctx context.Context, fab *ibspec.Fabric, p ibfabric.PortRef) (*ibfabric.Node, *ibfabric.Port, int, error) {
	cur, err := ibfabric.Discover(ctx, s.Runner(), ibfabric.All)
	if err != nil {
		return nil, nil, 0, err
	}
	g, ok := fab.Topology.NodeGUID(p.Node)
	if !ok {
		return nil, nil, 0, fmt.Errorf("%s is not in the topology", p.Node)
	}
	n := cur.Nodes[g]
	if n == nil || n.Ports[p.Port] == nil || n.Ports[p.Port].Peer == nil {
		return nil, nil, 0, fmt.Errorf("%s is not linked in the fabric now", fab.Name(p.Node, p.Port))
	}
	port := n.Ports[p.Port]
	lid := port.LID
	if n.Type == ibfabric.Switch {
		lid = n.LID
	}
	if lid == 0 {
		return nil, nil, 0, fmt.Errorf("%s has no LID: is opensm running?", fab.Name(p.Node, p.Port))
	}
	return n, port, lid, nil
}

func (s *Sim) pkeyFault(ctx context.Context, fab *ibspec.Fabric, p ibfabric.PortRef, kind string, part *spec.Partition) (string, error) {
	n, _, lid, err := s.portOf(ctx, fab, p)
	if err != nil {
		return "", err
	}
	cap, shift := n.PKeyCap, uint32(0)
	if n.Type == ibfabric.Switch {
		cap, shift = n.EnforceCap, uint32(p.Port)<<16
	}
	var gets []ibmad.SMPItem
	for b := 0; b < (cap+31)/32; b++ {
		gets = append(gets, ibmad.SMPItem{LID: lid, Attr: ibmad.AttrPKeyTable, Mod: shift | uint32(b)})
	}
	if len(gets) == 0 {
		return "", fmt.Errorf("%s has no P_Key table", fab.Name(p.Node, p.Port))
	}
	res, err := s.SMP(ctx, gets)
	if err != nil {
		return "", err
	}
	base := uint16(part.PKey & 0x7fff)
	var sets []ibmad.SMPItem
	done := false
	for i, r := range res {
		b, err := hex.DecodeString(r.Data)
		if err != nil {
			return "", err
		}
		keys, err := ibmad.DecodePKeyBlock(b)
		if err != nil {
			return "", err
		}
		changed := false
		for j, k := range keys {
			switch {
			case kind == "pkey-add" && !done && k&0x7fff == 0:
				keys[j], changed, done = base|0x8000, true, true
			case kind == "pkey-add" && k&0x7fff == base:
				return "", fmt.Errorf("%s already holds P_Key 0x%04x", fab.Name(p.Node, p.Port), base)
			case kind == "pkey-remove" && k&0x7fff == base:
				keys[j], changed, done = 0, true, true
			case kind == "pkey-limited" && k&0x7fff == base && k&0x8000 != 0:
				keys[j], changed, done = base, true, true
			}
		}
		if changed {
			sets = append(sets, ibmad.SMPItem{LID: lid, Attr: ibmad.AttrPKeyTable, Mod: gets[i].Mod, Data: hex.EncodeToString(ibmad.EncodePKeyBlock(keys))})
		}
	}
	where := fab.Name(p.Node, p.Port)
	if !done {
		switch kind {
		case "pkey-add":
			return "", fmt.Errorf("%s has no free P_Key entry", where)
		case "pkey-limited":
			return "", fmt.Errorf("%s holds no full-member P_Key 0x%04x", where, base)
		}
		return "", fmt.Errorf("%s holds no P_Key 0x%04x", where, base)
	}
	if _, err := s.SMP(ctx, sets); err != nil {
		return "", err
	}
	switch kind {
	case "pkey-add":
		return fmt.Sprintf("%s now holds P_Key 0x%04x of partition %s (full), behind opensm's back", where, base, part.Name), nil
	case "pkey-limited":
		return fmt.Sprintf("%s is now a limited member of partition %s (P_Key 0x%04x), behind opensm's back", where, part.Name, base), nil
	}
	return fmt.Sprintf("P_Key 0x%04x of partition %s cleared from %s's P_Key table, behind opensm's back", base, part.Name, where), nil
}

func (s *Sim) sl2vlZero(ctx context.Context, fab *ibspec.Fabric, p ibfabric.PortRef) (string, error) {
	n, port, lid, err := s.portOf(ctx, fab, p)
	if err != nil {
		return "", err
	}
	zero := hex.EncodeToString(ibmad.EncodeSL2VL([16]int{}))
	var sets []ibmad.SMPItem
	if n.Type != ibfabric.Switch {
		sets = append(sets, ibmad.SMPItem{LID: lid, Attr: ibmad.AttrSL2VL, Data: zero})
	} else {
		for in := range port.SL2VL {
			sets = append(sets, ibmad.SMPItem{LID: lid, Attr: ibmad.AttrSL2VL, Mod: uint32(in)<<8 | uint32(p.Port), Data: zero})
		}
	}
	if len(sets) == 0 {
		return "", fmt.Errorf("%s has no SL-to-VL table", fab.Name(p.Node, p.Port))
	}
	if _, err := s.SMP(ctx, sets); err != nil {
		return "", err
	}
	return fmt.Sprintf("every SL of %s maps to VL 0 (%d table(s) zeroed behind opensm's back)", fab.Name(p.Node, p.Port), len(sets)), nil
}

func (s *Sim) vlarbWeight(ctx context.Context, fab *ibspec.Fabric, p ibfabric.PortRef, args []string) (string, error) {
	prio := args[0]
	if prio != "high" && prio != "low" {
		return "", fmt.Errorf("vlarb-weight: %q is not high or low", prio)
	}
	vl, err := strconv.Atoi(args[1])
	if err != nil || vl < 0 || vl > 14 {
		return "", fmt.Errorf("vlarb-weight: VL %q is not 0..14", args[1])
	}
	weight, err := strconv.Atoi(args[2])
	if err != nil || weight < 0 || weight > 255 {
		return "", fmt.Errorf("vlarb-weight: weight %q is not 0..255", args[2])
	}
	n, port, lid, err := s.portOf(ctx, fab, p)
	if err != nil {
		return "", err
	}
	if port.VLArb == nil {
		return "", fmt.Errorf("%s has no VL arbitration table", fab.Name(p.Node, p.Port))
	}
	block, size := 1, port.VLArb.LowCap
	if prio == "high" {
		block, size = 3, port.VLArb.HighCap
	}
	mod := uint32(block) << 16
	if n.Type == ibfabric.Switch {
		mod |= uint32(p.Port)
	}
	res, err := s.SMP(ctx, []ibmad.SMPItem{{LID: lid, Attr: ibmad.AttrVLArb, Mod: mod}})
	if err != nil {
		return "", err
	}
	b, err := hex.DecodeString(res[0].Data)
	if err != nil {
		return "", err
	}
	ws, err := ibmad.DecodeVLArbBlock(b)
	if err != nil {
		return "", err
	}
	found := false
	for i := 0; i < min(size, 32); i++ {
		if ws[i].VL == vl && ws[i].Weight != 0 {
			ws[i].Weight, found = weight, true
			break
		}
	}
	if !found {
		return "", fmt.Errorf("%s's %s-priority VL arbitration has no entry for VL %d", fab.Name(p.Node, p.Port), prio, vl)
	}
	if _, err := s.SMP(ctx, []ibmad.SMPItem{{LID: lid, Attr: ibmad.AttrVLArb, Mod: mod, Data: hex.EncodeToString(ibmad.EncodeVLArbBlock(ws))}}); err != nil {
		return "", err
	}
	return fmt.Sprintf("VL %d weighs %d in %s's %s-priority VL arbitration, behind opensm's back", vl, weight, fab.Name(p.Node, p.Port), prio), nil
}
