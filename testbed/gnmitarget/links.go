package gnmitarget

import (
	"context"
	"fmt"
	gpb "github.com/openconfig/gnmi/proto/gnmi"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/fabctl/fabctl/internal/linktruth"
	"github.com/fabctl/fabctl/yangval"
)

// Link state (Config.Links, a portlink.Source): each configured interface
// reports the cable the Source describes, in the flavor's state paths,
// and the LLDP neighbours heard on it. A port the Source does not list,
// or every port with a nil Source, is down with no neighbour; a port the
// configuration disables is down whatever its cable.
//
// The paths and leaves are the vendors' models:
//
//   - OpenConfig: /interfaces/interface[name]/state/{admin-status,
//     oper-status,counters/{in,out}-{errors,discards}}
//     (openconfig-interfaces.yang, ../shared/yang/openconfig),
//     /interfaces/interface[name]/ethernet/state/{port-speed,
//     negotiated-port-speed,fec-mode} (openconfig-if-ethernet.yang:
//     port-speed and fec-mode in ethernet-interface-config, used by the
//     state container at :807-815; negotiated-port-speed :739), and
//     /lldp/interfaces/interface[name]/neighbors/neighbor[id]/state/
//     {system-name,chassis-id,port-id,port-id-type,port-description}
//     (openconfig/public release/models/lldp/openconfig-lldp.yang at
//     94f5896, the commit ../shared/yang/openconfig was taken from:
//     lldp-neighbor-state :301-389, lldp-system-info-config :173-218,
//     lldp-neighbor-top :583-625, lldp-interface-top :691-730,
//     container lldp :843).
//   - SR Linux: /interface[name]/{admin-state,oper-state,
//     statistics/{in,out}-{error,discarded}-packets,ethernet/port-speed,
//     ethernet/forward-error-correction/operational-host-if-fec}
//     (srl_nokia-interfaces.yang, ../shared/yang/srlinux) and
//     /system/lldp/interface[name]/neighbor[id]/{system-name,chassis-id,
//     port-id,port-id-type,port-description} (nokia/srlinux-yang-models
//     v25.3.1 srl_nokia/models/system/srl_nokia-lldp.yang:
//     lldp-neighbor-state :218-319, list neighbor :463, list interface
//     :563, container lldp :670, augment /system :682).
//
// The interface state is validated against the models when the target has
// them (validateState); the LLDP modules are not part of ../shared/yang
// (openconfig-lldp, and srl_nokia-lldp with its imports), so the LLDP
// subtree is served as the models above draw it and its read paths are
// accepted outside the loaded models (lldpPath).

// linkPortsFor asks the Source for the cabled ports when a read of
// paths sees link state (readsLinks); a read that does not (/qos, the
// configuration) never depends on the cabling, so a Source that cannot
// answer (the testbed without lldpd) fails only the link reads.
func (t *Target) linkPortsFor(ctx context.Context, typ gpb.GetRequest_DataType, paths [][]yangval.PathElem) (map[string]linktruth.Observation, error) {
	if typ == gpb.GetRequest_CONFIG {
		return nil, nil // configuration only: no state
	}
	for _, p := range paths {
		if readsLinks(p) {
			return t.linkPorts(ctx)
		}
	}
	return nil, nil
}

// readsLinks reports whether a read path reaches link state: the root,
// the interfaces (/interface, /interfaces) or LLDP (/lldp, /system,
// /system/lldp).
func readsLinks(p []yangval.PathElem) bool {
	if len(p) == 0 {
		return true
	}
	switch localName(p[0].Name) {
	case "interface", "interfaces":
		// OpenConfig's intended configuration (…/config/…) holds no state.
		for _, e := range p[1:] {
			if localName(e.Name) == "config" {
				return false
			}
		}
		return true
	case "lldp":
		return true
	case "system":
		return len(p) == 1 || localName(p[1].Name) == "lldp"
	}
	return false
}

// linkPorts asks the Source for the cabled ports (nil: no Source).
func (t *Target) linkPorts(ctx context.Context) (map[string]linktruth.Observation, error) {
	if t.cfg.Links == nil {
		return nil, nil
	}
	ports, err := t.cfg.Links.Ports(ctx)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "%s: link state: %v", t.name, err)
	}
	return ports, nil
}

// portState is what a configured interface reports: its Observation when
// the Source cables it and the port is enabled, else down.
func portState(links map[string]linktruth.Observation, name any, enabled bool) linktruth.Observation {
	n, _ := name.(string)
	o, ok := links[n]
	if !ok || !enabled {
		return linktruth.Observation{Port: n, Oper: linktruth.Down, SpeedMbps: o.SpeedMbps}
	}
	if o.Oper != linktruth.Up {
		o.Oper = linktruth.Down
		o.Neighbors = nil
	}
	return o
}

// errorCounters overwrites the flavor's error and discard counters with
// the port's.
func errorCounters(flavor string, c map[string]any, o linktruth.Observation) {
	k := linktruth.Counters{}
	if o.Counters != nil {
		k = *o.Counters
	}
	names := [4]string{"in-errors", "out-errors", "in-discards", "out-discards"}
	if flavor == FlavorSRLinux {
		names = [4]string{"in-error-packets", "out-error-packets", "in-discarded-packets", "out-discarded-packets"}
	}
	for i, v := range [4]uint64{k.InErrors, k.OutErrors, k.InDiscards, k.OutDiscards} {
		c[names[i]] = strconv.FormatUint(v, 10) // counter64: a string in RFC 7951
	}
}

// ocSpeed is the ETHERNET_SPEED identity of a speed (openconfig-if-
// ethernet.yang:262-345), "" for a speed the model has no identity for
// (the device could not say it).
func ocSpeed(mbps int64) string {
	var s string
	switch {
	case mbps <= 0:
		return ""
	case mbps%1000 == 0:
		s = fmt.Sprintf("SPEED_%dGB", mbps/1000)
	default:
		s = fmt.Sprintf("SPEED_%dMB", mbps)
	}
	if !ocSpeeds[s] {
		return ""
	}
	return "openconfig-if-ethernet:" + s
}

var ocSpeeds = map[string]bool{"SPEED_10MB": true, "SPEED_100MB": true, "SPEED_1GB": true, "SPEED_2500MB": true,
	"SPEED_5GB": true, "SPEED_10GB": true, "SPEED_25GB": true, "SPEED_40GB": true, "SPEED_50GB": true, "SPEED_100GB": true,
	"SPEED_200GB": true, "SPEED_400GB": true, "SPEED_600GB": true, "SPEED_800GB": true, "SPEED_1600GB": true}

// srlSpeed is the SR Linux port-speed enum of a speed (srl_nokia-
// interfaces.yang:2039-2071: 10M, 100M, 1G, 10G, 25G, 40G, 50G, 100G,
// 200G, 400G, 800G, 1T), "" for any other.
func srlSpeed(mbps int64) string {
	var s string
	switch {
	case mbps <= 0:
		return ""
	case mbps == 1_000_000:
		s = "1T"
	case mbps%1000 == 0:
		s = strconv.FormatInt(mbps/1000, 10) + "G"
	default:
		s = strconv.FormatInt(mbps, 10) + "M"
	}
	if !srlSpeeds[s] {
		return ""
	}
	return s
}

var srlSpeeds = map[string]bool{"10M": true, "100M": true, "1G": true, "10G": true, "25G": true, "40G": true,
	"50G": true, "100G": true, "200G": true, "400G": true, "800G": true, "1T": true}

// fecModes are the FEC values each flavor's model has: OpenConfig's
// INTERFACE_FEC identities (openconfig-if-ethernet.yang:205-260) and SR
// Linux's oper-fec-type (srl_nokia-interfaces.yang:237-280). A Source's
// FEC in other words is not served (the device would not say it).
var fecModes = map[string]map[string]bool{
	FlavorOpenConfig: {"FEC_FC": true, "FEC_RS528": true, "FEC_RS544": true, "FEC_RS544_LOW_LATENCY": true,
		"FEC_RS544_2X_INTERLEAVE": true, "FEC_RS544_2X_INTERLEAVE_CL172": true, "FEC_RS544_2X_INTERLEAVE_ETC": true, "FEC_DISABLED": true},
	FlavorSRLinux: {"disabled": true, "cl74-baser": true, "cl108-rs528": true, "cl91-rs528": true,
		"cl91-rs544": true, "cl119-rs544": true, "cl134-rs544": true},
}

// portIDTypes maps lldpd's port id subtype words (portlink's, as
// lldpcli -f json writes them) to the models' port-id-type enum
// (openconfig-lldp-types.yang:264-302; srl_nokia-lldp-types.yang
// :237-281, the same names).
var portIDTypes = map[string]string{
	"ifname": "INTERFACE_NAME", "mac": "MAC_ADDRESS", "local": "LOCAL",
	"ifalias": "INTERFACE_ALIAS", "ip": "NETWORK_ADDRESS",
}

// neighborLeaves are one neighbour's state leaves (both flavors use the
// same names).
func neighborLeaves(i int, n linktruth.Neighbor) map[string]any {
	m := map[string]any{"id": strconv.Itoa(i + 1)}
	for k, v := range map[string]string{"system-name": n.SystemName, "chassis-id": n.ChassisID,
		"port-id": n.PortID, "port-description": n.PortDesc, "port-id-type": portIDTypes[n.PortIDSubtype]} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

// lldpOpenConfig is /lldp's state for the configured ports.
func lldpOpenConfig(ports []linktruth.Observation) map[string]any {
	ifs := make([]any, 0, len(ports))
	for _, o := range ports {
		e := map[string]any{"name": o.Port, "state": map[string]any{"name": o.Port, "enabled": true}}
		if len(o.Neighbors) > 0 {
			ns := make([]any, len(o.Neighbors))
			for i, n := range o.Neighbors {
				st := neighborLeaves(i, n)
				ns[i] = map[string]any{"id": st["id"], "state": st}
			}
			e["neighbors"] = map[string]any{"neighbor": ns}
		}
		ifs = append(ifs, e)
	}
	return map[string]any{"state": map[string]any{"enabled": true}, "interfaces": map[string]any{"interface": ifs}}
}

// lldpSRLinux is /system/lldp's state for the configured ports.
func lldpSRLinux(ports []linktruth.Observation) map[string]any {
	ifs := make([]any, 0, len(ports))
	for _, o := range ports {
		e := map[string]any{"name": o.Port, "admin-state": "enable", "oper-state": o.Oper}
		if len(o.Neighbors) > 0 {
			ns := make([]any, len(o.Neighbors))
			for i, n := range o.Neighbors {
				ns[i] = neighborLeaves(i, n)
			}
			e["neighbor"] = ns
		}
		ifs = append(ifs, e)
	}
	return map[string]any{"admin-state": "enable", "interface": ifs}
}

// lldpPath reports whether a read path is in the LLDP subtree the target
// serves outside its models (/lldp, /system/lldp).
func (t *Target) lldpPath(elems []yangval.PathElem) bool {
	if t.cfg.Flavor == FlavorSRLinux {
		return len(elems) >= 2 && localName(elems[0].Name) == "system" && localName(elems[1].Name) == "lldp"
	}
	return len(elems) >= 1 && localName(elems[0].Name) == "lldp"
}

func localName(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ':' {
			return s[i+1:]
		}
	}
	return s
}

// validateState checks the interface state the target serves against the
// models (types, enums, identities, state nodes allowed); the LLDP
// subtree is left out (not in the loaded models). A violation is the
// target's own fault: codes.Internal naming the leaf.
func (t *Target) validateState(st map[string]any) error {
	if t.schema == nil {
		return nil
	}
	top := "openconfig-interfaces:interfaces"
	if t.cfg.Flavor == FlavorSRLinux {
		top = "srl_nokia-interfaces:interface"
	}
	v, ok := st[top]
	if !ok {
		return nil
	}
	if errs := t.schema.Validate("/", map[string]any{top: v}, yangval.Options{State: true, NoRefExistence: true}); len(errs) > 0 {
		return status.Errorf(codes.Internal, "%s: the interface state served is not valid against the models: %s", t.name, joinErrors(errs))
	}
	return nil
}
