package openconfig

import (
	"context"
	"fmt"
	"strings"

	"github.com/fabctl/fabctl/drivers"
	gc "github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/internal/linktruth"
)

// Link truth (gnmicore.LinkPlatform), ONE Get (type ALL) of two
// subtrees, /interfaces/interface[name=*] and
// /lldp/interfaces/interface[name=*]: a path with no data makes a target
// answer the whole Get NotFound, and these two exist on every device with
// ports and LLDP (narrower ones, e.g. .../neighbors, are empty where
// nothing is heard). The leaves read:
//
//   - .../interface/state: admin-status, oper-status
//     and counters/{in,out}-{errors,discards} (openconfig-interfaces.yang
//     in ../shared/yang/openconfig);
//   - .../interface/ethernet/state: negotiated-port-speed
//     (openconfig-if-ethernet.yang:739), else port-speed, and fec-mode
//     (ethernet-interface-config :440-462, in the state container
//     :807-815);
//   - /lldp/interfaces/interface/neighbors/neighbor: each neighbour's
//     state/{system-name,chassis-id,port-id,port-id-type,
//     port-description} (openconfig/public release/models/lldp/
//     openconfig-lldp.yang at 94f5896: lldp-neighbor-state :301-389,
//     lldp-system-info-config :173-218, lldp-neighbor-top :583-625,
//     lldp-interface-top :691-730). openconfig-lldp is not in
//     ../shared/yang, so these paths are checked against that file by
//     hand, not loaded.
var (
	linkIfPaths   = []string{"/interfaces/interface[name=*]"}
	linkLLDPPaths = []string{"/lldp/interfaces/interface[name=*]"}
)

var _ drivers.LinkReader = (*Driver)(nil)

// ReadLinks implements drivers.LinkReader: one Get of LinkPaths.
func (d *Driver) ReadLinks(ctx context.Context, t drivers.Target) (*linktruth.DeviceLinks, error) {
	return d.ReadLinkTruth(ctx, t)
}

// LinkPaths implements gnmicore.LinkPlatform.
func (Platform) LinkPaths() (interfaces, lldp []string) { return linkIfPaths, linkLLDPPaths }

// ocOper maps oper-status (openconfig-interfaces.yang: UP, DOWN, TESTING,
// UNKNOWN, DORMANT, NOT_PRESENT, LOWER_LAYER_DOWN) to linktruth's words:
// up, down, "" for UNKNOWN, else the state lower-cased.
func ocOper(s string) string {
	switch s {
	case "UP":
		return linktruth.Up
	case "DOWN":
		return linktruth.Down
	case "UNKNOWN", "":
		return ""
	}
	return strings.ToLower(s)
}

// ocSpeed reads an ETHERNET_SPEED identity (openconfig-if-ethernet.yang
// :262-345, SPEED_10MB ... SPEED_1600GB; SPEED_UNKNOWN is 0).
func ocSpeed(id string) (int64, bool) {
	if id == "" || id == "SPEED_UNKNOWN" {
		return 0, true
	}
	s, ok := strings.CutPrefix(id, "SPEED_")
	if !ok || !strings.HasSuffix(s, "B") {
		return 0, false
	}
	return linktruth.ParseSpeed(strings.TrimSuffix(s, "B"))
}

// DecodeLinks implements gnmicore.LinkPlatform.
func (Platform) DecodeLinks(tree map[string]any, lldp bool) (*linktruth.DeviceLinks, error) {
	dl := &linktruth.DeviceLinks{Ports: map[string]*linktruth.Observation{}, LLDP: lldp}
	for _, e := range gc.N(tree).Get("interfaces").List("interface") {
		name, ok := e.Get("name").String()
		if !ok || name == "" {
			continue
		}
		o := &linktruth.Observation{Port: name}
		st := e.Get("state")
		oper, _ := st.Get("oper-status").Ident()
		o.Oper = ocOper(oper)
		if admin, _ := st.Get("admin-status").Ident(); admin == "DOWN" {
			o.AdminDown = true
		}
		k, err := gc.PortCounters(name, st.Get("counters"), "in-errors", "out-errors", "in-discards", "out-discards")
		if err != nil {
			return nil, err
		}
		o.Counters = k
		eth := e.At("ethernet", "state")
		sp := eth.Get("negotiated-port-speed")
		if !sp.Exists() {
			sp = eth.Get("port-speed")
		}
		id, _ := sp.Ident()
		mbps, ok := ocSpeed(id)
		if !ok {
			return nil, fmt.Errorf("port %s: speed %q is not an ETHERNET_SPEED identity", name, id)
		}
		o.SpeedMbps = mbps
		if fec, ok := eth.Get("fec-mode").Ident(); ok {
			o.FEC = fec
		}
		dl.Ports[name] = o
	}
	if !lldp {
		return dl, nil
	}
	for _, e := range gc.N(tree).At("lldp", "interfaces").List("interface") {
		name, _ := e.Get("name").String()
		o := dl.Ports[name]
		if o == nil {
			continue // LLDP on an interface the device did not report
		}
		for _, n := range e.Get("neighbors").List("neighbor") {
			o.Neighbors = append(o.Neighbors, gc.Neighbor(n.Get("state")))
		}
	}
	return dl, nil
}
