package intent

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fabctl/fabctl/spec"
)

// KindSM is an InfiniBand subnet manager: the opensm running on the host
// the spec's infiniband block names. It is its own device next to that
// host (sm.sm01 and host.sm01): its configuration is opensm's files, not
// the host's NICs.
const KindSM = "sm"

// PlatformOpenSM is the subnet manager platform (and driver name).
const PlatformOpenSM = "opensm"

// DefaultPKey is the default partition's P_Key, which opensm always creates.
const DefaultPKey = 0x7fff

// SubnetManager is the desired configuration of an InfiniBand subnet
// manager: partitions, the QoS policy and the SL2VL / VL arbitration
// tables opensm programs into every port.
type SubnetManager struct {
	Device
	Fabric string // fabric name, for the files' headers
	Sudo   bool   // run the file and signal commands with sudo -n
	// ConfFile and PIDFile are opensm.conf's and the pid file's places
	// on the SM host ("": the driver's defaults).
	ConfFile, PIDFile string
	// DiagsDir is the directory of infiniband-diags on the SM host (""
	// its PATH): the driver reads the fabric back with them.
	DiagsDir string
	// Source is the spec the intent was compiled from: the opensm driver
	// maps its InfiniBand switches and cabling (drivers/sm/ibfabric/ibspec)
	// to read the fabric back in plan and apply. Not serialised.
	Source *spec.Spec `json:"-"`
	// Partitions, by P_Key. The default partition (0x7fff) is always
	// there: the spec's, or every port a full member with an IPoIB group
	// at the fabric's RDMA MTU (see Compile).
	Partitions []Partition
	// QoS turns opensm's QoS manager on: needed for SL2VL, VL arbitration,
	// the QoS policy and any SL other than 0 (opensm forces partition SLs
	// to 0 while QoS is off).
	QoS bool
	// DefaultSL is the SL of the QoS policy's DEFAULT level: the default
	// class's sl.
	DefaultSL int
	// SL2VL is the VL of each SL (16 entries); nil: not managed.
	SL2VL []int
	// VLArbHigh and VLArbLow are the VL arbitration tables; nil: not managed.
	VLArbHigh []spec.VLWeight
	VLArbLow  []spec.VLWeight
	// MaxVLs (qos_max_vls) and HighLimit (qos_high_limit); 0 / nil: not
	// managed.
	MaxVLs    int
	HighLimit *int
	// Ports are the cabled InfiniBand ports whose tables opensm
	// programs from these files, when the spec cables InfiniBand
	// switches: their P_Keys, SL-to-VL and VL arbitration tables are
	// desired state too (PathFabric), read back from the fabric by the
	// opensm driver.
	Ports []FabricPort
	// Unmanaged are the settings the spec leaves as opensm runs them
	// (spec unmanaged on the infiniband block; state paths as Flatten
	// prints them): plan neither renders nor checks them.
	Unmanaged spec.Acceptances
}

// HasUnmanaged reports whether the spec leaves settings of the subnet
// manager unmanaged; Leaves whether it leaves this one (a state path),
// and why.
func (sm *SubnetManager) HasUnmanaged() bool { return sm != nil && len(sm.Unmanaged) > 0 }

// Leaves: see HasUnmanaged.
func (sm *SubnetManager) Leaves(path string) (string, bool) { return sm.Unmanaged.Match(path) }

// FabricPort is a cabled InfiniBand port: a host NIC or a switch port at
// one end of a link with an InfiniBand switch.
type FabricPort struct {
	Node   string // the switch or host
	Port   string // the switch port's number, or the NIC's name
	Switch bool
	// PKeys maps each base P_Key the port must hold to "full" or
	// "limited", from the partitions (compileIBPort): an adapter port's
	// own, and on the switch port facing it the same, which opensm copies
	// there while partition enforcement is on (its default, part_enforce
	// both: opensm/osm_subnet.c; osm_pkey_mgr.c pkey_mgr_update_peer_port
	// copies the adapter's P_Key entries to the peer switch port). nil:
	// not checked (an inter-switch port, where opensm turns enforcement
	// off and programs no P_Keys).
	PKeys map[int]string
}

// Name is how messages name the port: "cn02:ib0", "leaf1 port 2".
func (p FabricPort) Name() string {
	if p.Switch {
		return p.Node + " port " + p.Port
	}
	return p.Node + ":" + p.Port
}

// Path is the prefix of the port's settings: "ib/cn02/ib0/", "ib/leaf1/2/".
func (p FabricPort) Path() string { return PathFabric + p.Node + "/" + p.Port + "/" }

// Partition is one opensm partition.
type Partition struct {
	Name  string
	PKey  int // 15-bit base P_Key (opensm uses the low 15 bits)
	IPoIB bool
	MTU   int          // IPoIB group MTU in bytes (0: opensm's default, spec.OpenSMDefaultGroupMTU)
	Rate  spec.BitRate // IPoIB group rate (0: opensm's default)
	SL    int
	// Members by port GUID, then keywords (ALL, SELF, ...).
	Members []PartitionMember
	// Implicit marks the default partition fabctl adds when the spec
	// declares none.
	Implicit bool
}

// PartitionMember is a port of a partition: a port GUID or an opensm
// keyword (ALL, ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF).
type PartitionMember struct {
	ID       string // "0x0c42a10300000b01" or a keyword
	Endpoint string // "cn01:ib0" for GUIDs, "" for keywords
	Full     bool
}

// Membership is the member's opensm membership word.
func (m PartitionMember) Membership() string {
	if m.Full {
		return "full"
	}
	return "limited"
}

// PKeyString formats a base P_Key the way opensm files and fabctl state
// carry it: "0x0001".
func PKeyString(pkey int) string { return fmt.Sprintf("0x%04x", pkey&0x7fff) }

// partitionKeywords are the member names opensm resolves itself.
var partitionKeywords = map[string]bool{"ALL": true, "ALL_CAS": true, "ALL_SWITCHES": true, "ALL_ROUTERS": true, "SELF": true}

// ibMTUCodes and ibRateCodes are the IBTA encodings opensm's files use
// (mtu=5 for 4096, rate=21 for 400 Gb/s): linux-rdma/opensm
// include/iba/ib_types.h IB_MTU_LEN_* and IB_PATH_RECORD_RATE_*.
var ibMTUCodes = map[int]int{256: 1, 512: 2, 1024: 3, 2048: 4, 4096: 5}

var ibRateCodes = map[spec.BitRate]int{
	2.5e9: 2, 10e9: 3, 30e9: 4, 5e9: 5, 20e9: 6, 40e9: 7, 60e9: 8, 80e9: 9, 120e9: 10,
	14e9: 11, 56e9: 12, 112e9: 13, 168e9: 14, 25e9: 15, 100e9: 16, 200e9: 17, 300e9: 18,
	28e9: 19, 50e9: 20, 400e9: 21, 600e9: 22,
}

// IBMTUCode returns opensm's code for an IB MTU in bytes (4096 -> 5).
func IBMTUCode(mtu int) (int, bool) { c, ok := ibMTUCodes[mtu]; return c, ok }

// IBMTUBytes is IBMTUCode's inverse (5 -> 4096).
func IBMTUBytes(code int) (int, bool) {
	for b, c := range ibMTUCodes {
		if c == code {
			return b, true
		}
	}
	return 0, false
}

// IBRateCode returns opensm's code for a rate (400G -> 21). opensm 3.3
// knows rates up to 600 Gb/s.
func IBRateCode(r spec.BitRate) (int, bool) { c, ok := ibRateCodes[r]; return c, ok }

// IBRate is IBRateCode's inverse (21 -> 400G).
func IBRate(code int) (spec.BitRate, bool) {
	for r, c := range ibRateCodes {
		if c == code {
			return r, true
		}
	}
	return 0, false
}

// IBRates lists the rates opensm can express, ascending, for messages.
func IBRates() []spec.BitRate {
	out := make([]spec.BitRate, 0, len(ibRateCodes))
	for r := range ibRateCodes {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// compileSM builds the subnet manager's intent, or nil when the fabric is
// not InfiniBand or names no subnet manager.
func compileSM(s *spec.Spec) *SubnetManager {
	ib := s.InfiniBand
	if s.Fabric.Transport != spec.InfiniBand || ib == nil || ib.SubnetManager == "" {
		return nil
	}
	h := s.Host(ib.SubnetManager)
	if h == nil {
		return nil
	}
	driver := h.Connect.Kind
	if ib.SMConnect != "" {
		driver = ib.SMConnect
	}
	sm := &SubnetManager{
		Device: Device{Kind: KindSM, Name: h.Name, Platform: PlatformOpenSM, Driver: driver,
			Address: h.Address, Role: "subnet-manager", Credentials: h.Credentials},
		Fabric:    s.Fabric.Name,
		ConfFile:  ib.OpenSMConf,
		PIDFile:   ib.OpenSMPIDFile,
		DiagsDir:  ib.DiagsDir,
		Source:    s,
		Sudo:      h.Sudo,
		SL2VL:     ib.SL2VL,
		VLArbHigh: ib.VLArbHigh,
		VLArbLow:  ib.VLArbLow,
		MaxVLs:    ib.MaxVLs,
		HighLimit: ib.VLHighLimit,
		Unmanaged: ib.Unmanaged,
	}
	for _, c := range s.Classes {
		if c.Default && c.SL != nil {
			sm.DefaultSL = *c.SL
		}
		if c.SL != nil && *c.SL != 0 {
			sm.QoS = true
		}
	}
	hasDefault := false
	for _, p := range ib.Partitions {
		out := Partition{Name: p.Name, PKey: p.PKey & 0x7fff, IPoIB: p.IPoIB, MTU: p.MTU, Rate: p.Rate, SL: p.SL,
			Members: partitionMembers(s, p)}
		hasDefault = hasDefault || out.PKey == DefaultPKey
		sm.QoS = sm.QoS || p.SL != 0
		sm.Partitions = append(sm.Partitions, out)
	}
	if !hasDefault {
		// What opensm does without a partitions file, written out: with a
		// file but no Default rule opensm makes every port but its own a
		// limited member, and IPoIB on ib0 (the default P_Key) stops
		// working between hosts. The group MTU is the fabric's RDMA MTU so
		// an IPoIB MTU above 2044 (opensm's default group is 2048) works.
		sm.Partitions = append(sm.Partitions, Partition{Name: "Default", PKey: DefaultPKey, IPoIB: true,
			MTU: s.Fabric.RDMAMTU, Members: []PartitionMember{{ID: "ALL", Full: true}}, Implicit: true})
	}
	sort.SliceStable(sm.Partitions, func(i, j int) bool { return sm.Partitions[i].PKey < sm.Partitions[j].PKey })
	sm.QoS = sm.QoS || len(ib.SL2VL) > 0 || len(ib.VLArbHigh) > 0 || len(ib.VLArbLow) > 0 || ib.MaxVLs > 0 || ib.VLHighLimit != nil
	sm.Ports = fabricPorts(s, sm)
	return sm
}

// fabricPorts lists both ends of every link with an InfiniBand switch at
// one end, in link order.
func fabricPorts(s *spec.Spec, sm *SubnetManager) []FabricPort {
	ibSwitch := func(e spec.Endpoint) bool {
		sw := s.Switch(e.Node)
		return e.Kind != spec.KindHost && sw != nil && sw.InfiniBand
	}
	nicPKeys := func(e spec.Endpoint) map[int]string {
		h := s.Host(e.Node)
		if h == nil {
			return nil
		}
		for _, n := range h.NICs {
			if n.Name == e.Port {
				if p := compileIBPort(s, sm, h, n); p != nil {
					return p.PKeys
				}
			}
		}
		return nil
	}
	var out []FabricPort
	seen := map[string]bool{}
	for _, l := range s.Links {
		if !ibSwitch(l.A) && !ibSwitch(l.B) {
			continue
		}
		for _, e := range [][2]spec.Endpoint{{l.A, l.B}, {l.B, l.A}} {
			me, other := e[0], e[1]
			fp := FabricPort{Node: me.Node, Port: me.Port, Switch: ibSwitch(me)}
			switch {
			case !fp.Switch:
				fp.PKeys = nicPKeys(me)
			case other.Kind == spec.KindHost:
				fp.PKeys = nicPKeys(other)
			}
			if seen[fp.Path()] {
				continue // a port cabled twice: lint IB-5 refuses it
			}
			seen[fp.Path()] = true
			out = append(out, fp)
		}
	}
	return out
}

// partitionMembers resolves a partition's members to port GUIDs: a
// "host:nic" member is that NIC's guid, a bare "host" every NIC of the
// host, keywords stay. A member without a GUID keeps ID "" (lint IB-1
// reports it; the opensm driver refuses to render it). Full membership
// wins when a port is listed twice.
func partitionMembers(s *spec.Spec, p *spec.Partition) []PartitionMember {
	byID := map[string]*PartitionMember{}
	var order []string
	add := func(m PartitionMember) {
		key := m.ID
		if key == "" {
			key = "?" + m.Endpoint
		}
		if have := byID[key]; have != nil {
			have.Full = have.Full || m.Full
			return
		}
		byID[key] = &m
		order = append(order, key)
	}
	for _, m := range p.Members {
		if partitionKeywords[m.Endpoint] {
			add(PartitionMember{ID: m.Endpoint, Full: m.Full})
			continue
		}
		node, nic, hasNIC := strings.Cut(m.Endpoint, ":")
		h := s.Host(node)
		if h == nil {
			continue
		}
		for _, n := range h.NICs {
			if hasNIC && n.Name != nic {
				continue
			}
			add(PartitionMember{ID: n.GUID, Endpoint: h.Name + ":" + n.Name, Full: m.Full})
		}
	}
	out := make([]PartitionMember, 0, len(order))
	for _, k := range order {
		out = append(out, *byID[k])
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		ka, kb := partitionKeywords[a.ID], partitionKeywords[b.ID]
		if ka != kb {
			return !ka
		}
		if a.ID != b.ID {
			return a.ID < b.ID
		}
		return a.Endpoint < b.Endpoint
	})
	return out
}

// Desired state paths of a subnet manager. The first segment is the file
// that holds the setting, so a live setting the spec does not have is
// removed from a file fabctl owns (partitions.conf and qos-policy.conf
// are written whole; opensm.conf only has fabctl's QoS lines changed):
//
//	partitions/<name>/pkey|ipoib|mtu|rate|sl      the partition's header
//	partitions/<name>/member/<guid|keyword>       full | limited | both
//	qos-policy/level/<name>/sl|mtu-limit|rate-limit|pkey
//	qos-policy/match/<n>                          "pkey=0x0001 qos-level-name=..."
//	opensm/<option>                               opensm.conf options
const (
	PathPartitions = "partitions/"
	PathQoSPolicy  = "qos-policy/"
	PathOpenSM     = "opensm/"
	// PathFabric holds what opensm programs into each cabled port
	// (SubnetManager.Ports), read back from the fabric, not from a file:
	//
	//	ib/<node>/<port>/pkey/<partition>   full | limited
	//	ib/<node>/<port>/sl2vl              the VL of SL 0..15: "0,1,2,3,..."
	//	ib/<node>/<port>/vlarb_high|low     "0:64,1:64" (non-zero entries)
	PathFabric = "ib/"
)

// QoSLevelName is the qos-policy.conf level a partition's match rule uses.
func QoSLevelName(p Partition) string { return "partition-" + p.Name }

// Flatten returns the subnet manager's desired State.
func (sm *SubnetManager) Flatten() State {
	st := State{}
	for _, p := range sm.Partitions {
		pre := PathPartitions + p.Name + "/"
		st[pre+"pkey"] = PKeyString(p.PKey)
		st[pre+"ipoib"] = boolString(p.IPoIB)
		if p.MTU > 0 {
			st[pre+"mtu"] = strconv.Itoa(p.MTU)
		}
		if p.Rate > 0 {
			st[pre+"rate"] = p.Rate.String()
		}
		if p.SL != 0 {
			st[pre+"sl"] = strconv.Itoa(p.SL)
		}
		for _, m := range p.Members {
			id := m.ID
			if id == "" {
				id = "?" + m.Endpoint // no GUID: never equal to a live member
			}
			st[pre+"member/"+id] = m.Membership()
		}
	}
	sm.flattenPorts(st)
	if !sm.QoS {
		return st
	}
	st[PathOpenSM+"qos"] = "TRUE"
	if sm.MaxVLs > 0 {
		st[PathOpenSM+"qos_max_vls"] = strconv.Itoa(sm.MaxVLs)
	}
	if sm.HighLimit != nil {
		st[PathOpenSM+"qos_high_limit"] = strconv.Itoa(*sm.HighLimit)
	}
	if len(sm.SL2VL) > 0 {
		st[PathOpenSM+"qos_sl2vl"] = intsString(sm.SL2VL)
	}
	if len(sm.VLArbHigh) > 0 {
		st[PathOpenSM+"qos_vlarb_high"] = VLArbString(sm.VLArbHigh)
	}
	if len(sm.VLArbLow) > 0 {
		st[PathOpenSM+"qos_vlarb_low"] = VLArbString(sm.VLArbLow)
	}
	lv := PathQoSPolicy + "level/"
	st[lv+"DEFAULT/sl"] = strconv.Itoa(sm.DefaultSL)
	for _, p := range sm.Partitions {
		if p.Implicit {
			continue
		}
		name := QoSLevelName(p)
		st[lv+name+"/sl"] = strconv.Itoa(p.SL)
		st[lv+name+"/pkey"] = PKeyString(p.PKey)
		if p.MTU > 0 {
			st[lv+name+"/mtu-limit"] = strconv.Itoa(p.MTU)
		}
		if p.Rate > 0 {
			st[lv+name+"/rate-limit"] = p.Rate.String()
		}
	}
	n := 0
	for _, p := range sm.Partitions {
		if p.Implicit {
			continue
		}
		n++
		st[PathQoSPolicy+"match/"+strconv.Itoa(n)] = MatchRuleString(PKeyString(p.PKey), QoSLevelName(p))
	}
	return st
}

// flattenPorts adds the fabric ports' tables: their P_Keys by partition
// name, and with QoS managed the SL2VL and VL arbitration tables
// (without zero-weight entries, the way the ports are read back).
func (sm *SubnetManager) flattenPorts(st State) {
	names := map[int]string{}
	for _, p := range sm.Partitions {
		names[p.PKey&0x7fff] = p.Name
	}
	for _, fp := range sm.Ports {
		pre := fp.Path()
		for pkey, m := range fp.PKeys {
			name := names[pkey]
			if name == "" {
				name = PKeyString(pkey)
			}
			st[pre+"pkey/"+name] = m
		}
		if !sm.QoS {
			continue
		}
		if len(sm.SL2VL) == 16 {
			st[pre+"sl2vl"] = intsString(sm.SL2VL)
		}
		if sm.VLArbHigh != nil {
			st[pre+"vlarb_high"] = VLArbString(nonZeroWeights(sm.VLArbHigh))
		}
		if sm.VLArbLow != nil {
			st[pre+"vlarb_low"] = VLArbString(nonZeroWeights(sm.VLArbLow))
		}
	}
}

func nonZeroWeights(t []spec.VLWeight) []spec.VLWeight {
	var out []spec.VLWeight
	for _, w := range t {
		if w.Weight != 0 {
			out = append(out, w)
		}
	}
	return out
}

// VLArbString formats a VL arbitration table as opensm.conf takes it:
// "0:64,1:192".
func VLArbString(t []spec.VLWeight) string {
	parts := make([]string, len(t))
	for i, w := range t {
		parts[i] = strconv.Itoa(w.VL) + ":" + strconv.Itoa(w.Weight)
	}
	return strings.Join(parts, ",")
}

// MatchRuleString is the normal form of a qos-policy.conf match rule that
// matches a P_Key: its criteria as key=value in key order, which is also
// how the opensm driver reads any rule back.
func MatchRuleString(pkey, level string) string {
	return "pkey=" + pkey + " qos-level-name=" + level
}

// IBPort is what an InfiniBand NIC's port is expected to show. The link
// and the subnet manager set all of it, not fabctl: the host driver reads
// sysfs and reports differences as findings.
type IBPort struct {
	GUID string // declared port GUID ("" not declared)
	// PKeys maps each base P_Key the port must hold to "full" or
	// "limited", from the subnet manager's partitions (nil: no subnet
	// manager in the spec, P_Keys not checked).
	PKeys map[int]string
	// MTU is the largest IPoIB group MTU among its partitions: a port
	// whose active MTU is smaller cannot join that group.
	MTU int
}

// compileIBPort derives a NIC's expected InfiniBand port facts.
func compileIBPort(s *spec.Spec, sm *SubnetManager, h *spec.Host, n *spec.NIC) *IBPort {
	if s.Fabric.Transport != spec.InfiniBand {
		return nil
	}
	p := &IBPort{GUID: n.GUID}
	if sm == nil {
		return p
	}
	p.PKeys = map[int]string{}
	ep := h.Name + ":" + n.Name
	self := h.Name == sm.Name && len(h.NICs) == 1 // SELF is the SM's port: known only when its host has one
	for _, part := range sm.Partitions {
		for _, m := range part.Members {
			match := false
			switch m.ID {
			case "ALL", "ALL_CAS":
				match = true
			case "SELF":
				match = self
			case "ALL_SWITCHES", "ALL_ROUTERS":
			default:
				match = m.Endpoint == ep || (n.GUID != "" && m.ID == n.GUID)
			}
			if !match {
				continue
			}
			if m.Full {
				p.PKeys[part.PKey] = "full"
			} else if p.PKeys[part.PKey] == "" {
				p.PKeys[part.PKey] = "limited"
			}
			if gm := part.MTU; part.IPoIB {
				if gm == 0 {
					gm = spec.OpenSMDefaultGroupMTU
				}
				p.MTU = max(p.MTU, gm)
			}
		}
	}
	return p
}
