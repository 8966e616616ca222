package srlinux

import (
	"context"
	"fmt"

	"github.com/fabctl/fabctl/drivers"
	gc "github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/internal/linktruth"
)

// Link truth (gnmicore.LinkPlatform), ONE Get (type ALL: admin-state is
// configuration) of two subtrees, /interface[name=*] and
// /system/lldp/interface[name=*] (a path with no data makes a target
// answer the whole Get NotFound; these two exist on every device with
// ports and LLDP, where .../neighbor is empty when nothing is heard).
// The leaves read:
//
//   - /interface: admin-state (srl_nokia-interfaces.yang:393),
//     oper-state (:1163-1170), statistics/{in,out}-error-packets and
//     {in,out}-discarded-packets (:1234-1320), ethernet/port-speed
//     (:2039-2071; SR Linux has no separate negotiated speed) and
//     ethernet/forward-error-correction/operational-host-if-fec
//     (:2285, oper-fec-type :237), all in ../shared/yang/srlinux;
//   - /system/lldp/interface/neighbor: system-name, chassis-id, port-id,
//     port-id-type, port-description (nokia/srlinux-yang-models v25.3.1
//     srl_nokia/models/system/srl_nokia-lldp.yang: lldp-neighbor-state
//     :218-319, list neighbor :463, list interface :563, container lldp
//     :670, augment /system :682). srl_nokia-lldp (and the modules it
//     imports) is not in ../shared/yang, so these paths are checked
//     against that file by hand, not loaded.
var (
	linkIfPaths   = []string{"/interface[name=*]"}
	linkLLDPPaths = []string{"/system/lldp/interface[name=*]"}
)

var _ drivers.LinkReader = (*Driver)(nil)

// ReadLinks implements drivers.LinkReader: one Get of LinkPaths.
func (d *Driver) ReadLinks(ctx context.Context, t drivers.Target) (*linktruth.DeviceLinks, error) {
	return d.ReadLinkTruth(ctx, t)
}

// LinkPaths implements gnmicore.LinkPlatform.
func (Platform) LinkPaths() (interfaces, lldp []string) { return linkIfPaths, linkLLDPPaths }

// srlSpeed reads a port-speed enum (10M ... 800G, 1T).
func srlSpeed(s string) (int64, bool) {
	switch s {
	case "":
		return 0, true
	case "1T":
		return 1_000_000, true
	}
	return linktruth.ParseSpeed(s)
}

// DecodeLinks implements gnmicore.LinkPlatform.
func (Platform) DecodeLinks(tree map[string]any, lldp bool) (*linktruth.DeviceLinks, error) {
	dl := &linktruth.DeviceLinks{Ports: map[string]*linktruth.Observation{}, LLDP: lldp}
	for _, e := range gc.N(tree).List("interface") {
		name, ok := e.Get("name").String()
		if !ok || name == "" {
			continue
		}
		o := &linktruth.Observation{Port: name}
		oper, _ := e.Get("oper-state").Ident()
		o.Oper = oper // up, down, testing (srl_nokia-interfaces.yang:1163-1170): linktruth's words
		if admin, _ := e.Get("admin-state").Ident(); admin == "disable" {
			o.AdminDown = true
		}
		k, err := gc.PortCounters(name, e.Get("statistics"), "in-error-packets", "out-error-packets", "in-discarded-packets", "out-discarded-packets")
		if err != nil {
			return nil, err
		}
		o.Counters = k
		sp, _ := e.At("ethernet", "port-speed").Ident()
		mbps, ok := srlSpeed(sp)
		if !ok {
			return nil, fmt.Errorf("port %s: port-speed %q is not a speed", name, sp)
		}
		o.SpeedMbps = mbps
		if fec, ok := e.At("ethernet", "forward-error-correction", "operational-host-if-fec").Ident(); ok {
			o.FEC = fec
		}
		dl.Ports[name] = o
	}
	if !lldp {
		return dl, nil
	}
	for _, e := range gc.N(tree).At("system", "lldp").List("interface") {
		name, _ := e.Get("name").String()
		o := dl.Ports[name]
		if o == nil {
			continue
		}
		for _, n := range e.List("neighbor") {
			o.Neighbors = append(o.Neighbors, gc.Neighbor(n))
		}
	}
	return dl, nil
}
