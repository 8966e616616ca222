// Package intent compiles a spec into vendor-neutral desired state, one
// intent per device, and flattens intents into normalised State: the flat
// key/value form that drivers read live devices into and that plans diff.
//
// Renderers (in the drivers) turn an intent, or the changed keys of its
// State, into each platform's native payload.
package intent

import (
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fabctl/fabctl/spec"
)

// Kinds of device.
const (
	KindSwitch = "switch"
	KindHost   = "host"
)

// Device is the part of an intent every device has.
type Device struct {
	Kind        string // switch | host | sm (InfiniBand subnet manager)
	Name        string
	Platform    string // switch platform, or "linux" for hosts
	Driver      string // ssh | gnmi for switches; local | netns | ssh for hosts
	Address     string // management address
	Role        string
	Credentials string // credentials block name ("" = none)
}

// Unmanager is a device intent whose spec block can leave settings
// unmanaged (switch, host, subnet manager): plan leaves those out of the
// desired state and lists them.
type Unmanager interface {
	// HasUnmanaged reports whether the spec leaves any setting of the
	// device unmanaged (false on a nil intent).
	HasUnmanaged() bool
	// Leaves reports whether it leaves this one (a state path), and why.
	Leaves(path string) (string, bool)
}

// HasUnmanaged reports whether the spec leaves settings of the switch
// unmanaged; Leaves whether it leaves this one (a state path), and why.
func (sw *Switch) HasUnmanaged() bool { return sw != nil && len(sw.Unmanaged) > 0 }

// Leaves: see HasUnmanaged.
func (sw *Switch) Leaves(path string) (string, bool) { return sw.Unmanaged.Match(path) }

// HasUnmanaged reports whether the spec leaves settings of the host or
// its NICs unmanaged; Leaves whether it leaves this one (a state path:
// the NIC's keys first, then the host's), and why.
func (h *Host) HasUnmanaged() bool {
	if h == nil {
		return false
	}
	if len(h.Unmanaged) > 0 {
		return true
	}
	for i := range h.NICs {
		if len(h.NICs[i].Unmanaged) > 0 {
			return true
		}
	}
	return false
}

// Leaves: see HasUnmanaged.
func (h *Host) Leaves(path string) (string, bool) {
	return spec.MatchNICFirst(path, h.nicUnmanaged, h.Unmanaged)
}

func (h *Host) nicUnmanaged(name string) spec.Acceptances {
	for i := range h.NICs {
		if h.NICs[i].Name == name {
			return h.NICs[i].Unmanaged
		}
	}
	return nil
}

// Address returns the device's plan address, e.g. "switch.leaf1".
func (d Device) Addr() string { return d.Kind + "." + d.Name }

// TC is one traffic class as a device implements it (TC = priority).
type TC struct {
	TC        int
	Name      string
	Lossless  bool
	Strict    bool
	Bandwidth int // ETS share, percent (0 when strict)
	ECN       *ECN
	MaxRate   spec.BitRate // host NICs' per-TC cap (0: none)
}

// ECN is a mark-only RED profile.
type ECN struct {
	Min         spec.Bytes
	Max         spec.Bytes
	Probability float64 // percent
}

// Watchdog is the PFC watchdog.
type Watchdog struct {
	Enabled bool
	Detect  time.Duration
	Restore time.Duration
	Poll    time.Duration
	Action  string
}

// Switch is a switch's desired state.
type Switch struct {
	Device
	Transport spec.Transport
	Trust     string
	DSCPToTC  [64]int // meaningful when Trust is dscp
	TCs       []TC    // present classes, by TC
	Watchdog  Watchdog
	Ports     []Port // sorted by name
	// Headroom is the configured headroom per lossless PG (0: NOS computes it).
	Headroom spec.Bytes
	// Model is the hardware model the spec names ("" not stated).
	Model string
	// Unmanaged are the settings the spec leaves as the device runs them
	// (spec unmanaged; paths relative to the switch): plan neither
	// renders nor checks them.
	Unmanaged spec.Acceptances
}

// Port is a switch port's desired state.
type Port struct {
	Name  string
	Speed spec.BitRate
	MTU   int // IP MTU; renderers add their L2 overhead
	// MTUFloor: the spec sets no MTU on the port or its switch, so MTU
	// is the least the port must carry (the hosts' MTU): the desired
	// state is AtLeast(MTU), a device with more keeps it, and the planner
	// renders the device's own MTU then (plan: a NOS's jumbo default is
	// not lowered to the hosts' value).
	MTUFloor    bool
	PFC         []int // PFC-enabled priorities
	Trust       string
	Watchdog    bool
	Pause       bool // 802.3x
	CableLength spec.Length
	// VLANTags are the 802.1Q tags the port's link carries: a platform
	// whose port MTU counts the frame (SR Linux, OpenConfig) adds 4 bytes
	// each to the IP MTU.
	VLANTags int
	Peer     string // far end of the link, "host:nic"
}

// Host is a host's desired state.
type Host struct {
	Device
	Connect     spec.Connect
	Sudo        bool
	IRQBalance  string
	RDMATos     int
	NCCLEnvFile string
	NCCL        map[string]string
	QP          spec.QPSizing
	NUMANodes   map[int]spec.CPUSet // declared NUMA topology (node -> CPUs), checked against sysfs
	NICs        []NIC               // sorted by name
	// Unmanaged are the settings the spec leaves as the host runs them
	// (spec unmanaged; full paths, "nic/eth1/pfc"); a NIC's own are on
	// the NIC.
	Unmanaged spec.Acceptances
}

// NIC is one RDMA NIC's desired state.
type NIC struct {
	Name      string // netdev
	Device    string // RDMA device
	Model     string
	MTU       int
	RDMAMTU   int
	Addresses []string
	VLAN      int
	VLANName  string // the RDMA interface: 802.1Q netdev on Name when VLAN > 0 (Ethernet), else ""
	Trust     string
	// DSCPToTC is the DCB APP table when Trust is dscp: code point ->
	// priority (0..7, as the loader bounds dscp_map and class priorities).
	// Bytes, not ints: a 4,096-host pod has 32,768 NICs, and as ints the
	// table was over half of each NIC's intent.
	DSCPToTC [64]uint8
	PFC      []int
	TCs      []TC // ETS
	ECN      bool // DCQCN NP/RP on (ECNPrios)
	ECNPrios []int
	Pause    bool // 802.3x global pause (off when PFC is on)
	NUMA     spec.NUMAPolicy
	NUMANode *int              // declared NUMA node, checked against sysfs
	Limits   spec.DeviceLimits // model table / limits block, checked against the device
	RoCEMode string            // v1 | v2 | "" (iWARP, IB)
	// RDMAPriority is the first RDMA class's priority (-1: none) and
	// RDMASkbPriority the skb priority rdma_cm gives its connections for
	// the host's ToS (RTTos2Priority): the VLAN egress map sends one to
	// the other.
	RDMAPriority    int
	RDMASkbPriority int
	// FirmwareLLDP: the NIC firmware's LLDP agent on/off (nil: leave it;
	// spec firmware_lldp).
	FirmwareLLDP *bool
	// CNPDSCP and CNPPriority mark the CNPs this NIC sends as DCQCN
	// notification point: the spec's CNP class (its first DSCP and its
	// priority); -1 when DCQCN is off or there is no CNP class.
	CNPDSCP     int
	CNPPriority int
	// CableLength is the NIC's link's cable_length (0: not declared): the
	// PFC headroom the NIC computes in manual buffer mode (mlx5 cable_len,
	// mlnx_qos --cable_len).
	CableLength spec.Length
	Speed       spec.BitRate
	// ManualBuffers: fabctl sizes the NIC's receive buffers
	// (receive_buffers = "manual"); otherwise the firmware does, and
	// fabctl sets the cable length only.
	ManualBuffers bool
	IB            *IBPort // InfiniBand: what the port must show (read-only checks); nil on Ethernet
	// Unmanaged are the NIC's settings the spec leaves as the host runs
	// them (spec unmanaged on the nic block; paths relative to the NIC).
	Unmanaged spec.Acceptances
}

// Fabric is the whole compiled fabric: every device's intent.
type Fabric struct {
	Name     string
	Switches []*Switch
	Hosts    []*Host
	// SubnetManagers holds the InfiniBand subnet manager the infiniband
	// block names (at most one; none on Ethernet fabrics).
	SubnetManagers []*SubnetManager
}

// Compile turns a loaded, lint-clean spec into per-device intent.
func Compile(s *spec.Spec) *Fabric {
	f := &Fabric{Name: s.Fabric.Name}
	dscp := s.DSCPMap()
	var nicDSCP [64]uint8
	for d, tc := range dscp {
		nicDSCP[d] = uint8(tc)
	}
	tcs := compileTCs(s)
	wd := s.Fabric.PFCWatchdog
	// The link on each switch port, by the loader's resolved ends (no
	// "node:port" string per endpoint); links built without the loader
	// are looked up by name.
	byPort := make(map[*spec.Port]*spec.Link, len(s.Links))
	byNIC := make(map[*spec.NIC]*spec.Link, len(s.Links))
	var byName map[string]*spec.Link
	for _, l := range s.Links {
		_, pa, _, na := l.EndA()
		_, pb, _, nb := l.EndB()
		if (pa == nil && na == nil) || (pb == nil && nb == nil) {
			if byName == nil {
				byName = map[string]*spec.Link{}
			}
			byName[l.A.String()], byName[l.B.String()] = l, l
			continue
		}
		if pa != nil {
			byPort[pa] = l
		}
		if pb != nil {
			byPort[pb] = l
		}
		if na != nil {
			byNIC[na] = l
		}
		if nb != nil {
			byNIC[nb] = l
		}
	}
	// nicCable is the cable_length of the link on a host NIC (0: none).
	nicCable := func(h *spec.Host, n *spec.NIC) spec.Length {
		l := byNIC[n]
		if l == nil && byName != nil {
			l = byName[h.Name+":"+n.Name]
		}
		if l == nil {
			return 0
		}
		return l.CableLength
	}
	portLink := func(sw *spec.Switch, p *spec.Port) (peer string, cable spec.Length, tags int) {
		l := byPort[p]
		if l == nil && byName != nil {
			l = byName[sw.Name+":"+p.Name]
		}
		if l == nil {
			return "", 0, 0
		}
		other := l.B
		if l.B.Node == sw.Name && l.B.Port == p.Name {
			other = l.A
		}
		return other.String(), l.CableLength, l.VLANTags
	}
	for _, sw := range s.Switches {
		if sw.InfiniBand {
			// The subnet manager programs InfiniBand switches; fabctl reads
			// them back through it (validate's InfiniBand stage).
			continue
		}
		out := &Switch{
			Device: Device{Kind: KindSwitch, Name: sw.Name, Platform: sw.Platform, Driver: sw.Driver,
				Address: sw.Address, Role: sw.Role, Credentials: sw.Credentials},
			Transport: s.Fabric.Transport,
			Model:     sw.Model,
			Unmanaged: sw.Unmanaged,
			Trust:     s.PortTrust(sw, nil),
			TCs:       tcs,
			Watchdog: Watchdog{Enabled: wd.Enabled, Detect: wd.Detect, Restore: wd.Restore,
				Poll: wd.Poll, Action: wd.Action},
		}
		out.DSCPToTC = dscp
		for k, v := range sw.DSCPMap {
			out.DSCPToTC[k] = v
		}
		if sw.Buffer != nil {
			out.Headroom = sw.Buffer.Headroom
		}
		out.Ports = make([]Port, 0, len(sw.Ports))
		for _, p := range sw.Ports {
			peer, cable, tags := portLink(sw, p)
			out.Ports = append(out.Ports, Port{
				Name:        p.Name,
				Speed:       p.Speed,
				MTU:         s.PortMTU(sw, p),
				MTUFloor:    s.PortMTUFloor(sw, p),
				PFC:         s.PortPFC(sw, p),
				Trust:       s.PortTrust(sw, p),
				Watchdog:    s.PortWatchdog(p) && len(s.PortPFC(sw, p)) > 0,
				Pause:       p.Pause,
				CableLength: cable,
				VLANTags:    tags,
				Peer:        peer,
			})
		}
		sort.Slice(out.Ports, func(i, j int) bool { return portLess(out.Ports[i].Name, out.Ports[j].Name) })
		f.Switches = append(f.Switches, out)
	}
	sm := compileSM(s)
	if sm != nil {
		f.SubnetManagers = append(f.SubnetManagers, sm)
	}
	// Every host's NICs in one array, each host's a full slice of it (an
	// append reallocates): one allocation instead of one per host, and no
	// size-class rounding on each (a 4,096-host pod's NICs are 17 MB).
	nNICs := 0
	for _, h := range s.Hosts {
		if h.Connect.Kind != spec.ConnectNone {
			nNICs += len(h.NICs)
		}
	}
	nics := make([]NIC, 0, nNICs)
	// The DCQCN priority lists, shared between NICs that have the same.
	var ecnPrios [][]int
	for _, h := range s.Hosts {
		if h.Connect.Kind == spec.ConnectNone {
			continue // fabctl never logs in: cabling, GUIDs and partitions only
		}
		tos, _ := s.HostTos(h)
		out := &Host{
			Device: Device{Kind: KindHost, Name: h.Name, Platform: "linux", Driver: h.Connect.Kind,
				Address: h.Address, Role: h.Role, Credentials: h.Credentials},
			Connect:     h.Connect,
			Sudo:        h.Sudo,
			IRQBalance:  h.IRQBalance,
			RDMATos:     tos,
			NCCLEnvFile: h.NCCLEnvFile,
			QP:          h.QP,
			NUMANodes:   h.NUMANodes,
			Unmanaged:   h.Unmanaged,
		}
		first := len(nics)
		for _, n := range h.NICs {
			nic := NIC{
				Name: n.Name, Device: n.Device, Model: n.Model,
				MTU: s.NICMTU(n), RDMAMTU: s.Fabric.RDMAMTU, VLAN: n.VLAN,
				Trust: s.NICTrust(n), DSCPToTC: nicDSCP, PFC: s.NICPFC(n), TCs: tcs,
				ECN: s.NICECN(n) && s.Fabric.Transport == spec.RoCEv2, Pause: n.Pause && len(s.NICPFC(n)) == 0,
				NUMA: n.NUMA, NUMANode: n.NUMANode, Limits: n.Limits, Speed: n.Speed,
				Unmanaged: n.Unmanaged,
			}
			for k, v := range n.DSCPMap {
				nic.DSCPToTC[k] = uint8(v)
			}
			if len(n.Addresses) > 0 {
				nic.Addresses = make([]string, 0, len(n.Addresses))
			}
			for _, a := range n.Addresses {
				nic.Addresses = append(nic.Addresses, a.String())
			}
			if nic.ECN {
				nic.ECNPrios = s.NICDCQCNPriorities(n)
				known := false
				for _, p := range ecnPrios {
					if slices.Equal(p, nic.ECNPrios) {
						nic.ECNPrios, known = p, true
						break
					}
				}
				if !known && len(ecnPrios) < 16 {
					ecnPrios = append(ecnPrios, nic.ECNPrios)
				}
			}
			nic.RDMAPriority = -1
			if rc := s.ClassesByRole(spec.RoleRDMA); len(rc) > 0 {
				nic.RDMAPriority = rc[0].Priority
			}
			nic.RDMASkbPriority = RTTos2Priority(tos)
			nic.FirmwareLLDP = n.FirmwareLLDP
			nic.ManualBuffers = n.ReceiveBuffers == spec.BuffersManual
			nic.CableLength = nicCable(h, n)
			nic.CNPDSCP, nic.CNPPriority = -1, -1
			if cc := s.ClassesByRole(spec.RoleCNP); nic.ECN && len(cc) > 0 {
				nic.CNPPriority = cc[0].Priority
				if len(cc[0].DSCP) > 0 {
					nic.CNPDSCP = cc[0].DSCP[0]
				}
			}
			switch s.Fabric.Transport {
			case spec.RoCEv2:
				nic.RoCEMode = "v2"
			case spec.RoCEv1:
				nic.RoCEMode = "v1"
			}
			if s.Fabric.Transport != spec.InfiniBand {
				nic.VLANName = n.VLANInterface // addresses, MTU and the PCP map go there (drivers/host vlan.go)
			}
			nic.IB = compileIBPort(s, sm, h, n)
			nics = append(nics, nic)
		}
		out.NICs = nics[first:len(nics):len(nics)]
		// By name (netdev names are unique on a host, so no ties); not
		// sort.Slice, whose reflective swap copies a 528-byte NIC.
		slices.SortFunc(out.NICs, func(a, b NIC) int { return strings.Compare(a.Name, b.Name) })
		out.NCCL = ncclEnv(s, h, out)
		f.Hosts = append(f.Hosts, out)
	}
	return f
}

func compileTCs(s *spec.Spec) []TC {
	byTC := map[int]*TC{}
	for _, c := range s.Classes {
		tc := byTC[c.Priority]
		if tc == nil {
			tc = &TC{TC: c.Priority, Name: c.Name}
			byTC[c.Priority] = tc
		}
		tc.Lossless = tc.Lossless || c.Lossless
		tc.Strict = tc.Strict || c.Strict
		if !c.Strict {
			tc.Bandwidth += c.Bandwidth
		}
		if c.MaxRate > 0 && (tc.MaxRate == 0 || c.MaxRate < tc.MaxRate) {
			tc.MaxRate = c.MaxRate
		}
		if c.ECN != nil && tc.ECN == nil {
			tc.ECN = &ECN{Min: c.ECN.Min, Max: c.ECN.Max, Probability: c.ECN.Probability}
		}
	}
	out := make([]TC, 0, len(byTC))
	for _, tc := range byTC {
		if tc.Strict {
			tc.Bandwidth = 0
		}
		out = append(out, *tc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].TC < out[j].TC })
	return out
}

// ncclEnv is what NCCL needs to use the fabric the way the spec says.
func ncclEnv(s *spec.Spec, h *spec.Host, out *Host) map[string]string {
	if !s.Fabric.Transport.IsRoCE() && s.Fabric.Transport != spec.InfiniBand {
		return nil
	}
	var hcas []string
	for _, n := range out.NICs {
		if n.Device != "" {
			hcas = append(hcas, n.Device)
		}
	}
	env := map[string]string{
		"NCCL_IB_QPS_PER_CONNECTION": strconv.Itoa(h.QP.QPsPerConn),
	}
	if len(hcas) > 0 {
		env["NCCL_IB_HCA"] = strings.Join(hcas, ",")
	}
	switch s.Fabric.Transport {
	case spec.RoCEv2, spec.RoCEv1:
		env["NCCL_IB_TC"] = strconv.Itoa(out.RDMATos)
		// The GID index depends on the host's GID table (VLANs, IPv6,
		// address order): the host driver resolves "auto" to the index of
		// the RDMA interface's GID of this RoCE version for its IPv4
		// address, else its global IPv6 one, and leaves the variable out
		// where it cannot. NCCL 2.21 and later then choose a GID by
		// NCCL_IB_ADDR_FAMILY (default AF_INET) and NCCL_IB_ROCE_VERSION_NUM
		// (default 2) (NVIDIA/nccl src/transport/net_ib/connect.cc
		// ncclIbGetGidIndex), so both are set where the defaults would pick
		// the wrong GID: IPv6-only hosts, RoCEv1.
		env["NCCL_IB_GID_INDEX"] = "auto"
		if ipv6Only(out.NICs) {
			env["NCCL_IB_ADDR_FAMILY"] = "AF_INET6"
		}
		if s.Fabric.Transport == spec.RoCEv1 {
			env["NCCL_IB_ROCE_VERSION_NUM"] = "1"
		}
	case spec.InfiniBand:
		for _, c := range s.ClassesByRole(spec.RoleRDMA) {
			if c.SL != nil {
				env["NCCL_IB_SL"] = strconv.Itoa(*c.SL)
				break
			}
		}
	}
	return env
}

// ipv6Only says whether a host's RDMA NICs have addresses and all of them
// are IPv6.
func ipv6Only(nics []NIC) bool {
	seen := false
	for _, n := range nics {
		if n.Device == "" {
			continue
		}
		for _, a := range n.Addresses {
			p, err := netip.ParsePrefix(a)
			if err != nil {
				continue
			}
			if p.Addr().Unmap().Is4() {
				return false
			}
			seen = true
		}
	}
	return seen
}

// portLess orders port names naturally: Ethernet2 before Ethernet10.
func portLess(a, b string) bool {
	for a != "" && b != "" {
		da, db := digitsPrefix(a), digitsPrefix(b)
		if da > 0 && db > 0 {
			na, _ := strconv.Atoi(a[:da])
			nb, _ := strconv.Atoi(b[:db])
			if na != nb {
				return na < nb
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return a[0] < b[0]
		}
		a, b = a[1:], b[1:]
	}
	return len(a) < len(b)
}

func digitsPrefix(s string) int {
	i := 0
	for i < len(s) && i < 9 && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

// intsString renders a priority set as "3,4" ("" when empty). Lists of
// up to eight priorities 0..7 (PFC, DCQCN) are kept once rendered: a pod
// flattens tens of thousands of the same few.
func intsString(v []int) string {
	if len(v) == 0 {
		return ""
	}
	key, small := uint32(0), len(v) <= 8
	for _, x := range v {
		if x < 0 || x > 7 {
			small = false
			break
		}
		key = key<<4 | uint32(x+1) // 1..8 per element: the length is in the key
	}
	if !small {
		return joinInts(v)
	}
	if s, ok := prioLists.Load(key); ok {
		return s.(string)
	}
	s := joinInts(v)
	if prioListCount.Add(1) <= maxPrioLists {
		prioLists.Store(key, s)
	}
	return s
}

// prioLists are the rendered lists of up to eight priorities 0..7, by
// their elements packed in 4 bits each: in practice a handful, at most
// maxPrioLists kept.
var (
	prioLists     sync.Map // uint32 -> string
	prioListCount atomic.Int64
)

const maxPrioLists = 1024

func joinInts(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

func durString(d time.Duration) string { return fmt.Sprintf("%dms", d.Milliseconds()) }
