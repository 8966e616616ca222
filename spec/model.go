// Package spec loads a fabric spec written in HCL and turns it into a typed,
// validated model. Every model value keeps the source range it came from
// (Source), so later stages (lint, plan, drivers) can attach diagnostics to
// the attribute that caused them.
package spec

import (
	"encoding/json"
	"fmt"
	"math"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2"
)

// Transport is the RDMA transport a fabric runs.
type Transport string

// Transports fabctl understands.
const (
	RoCEv2     Transport = "rocev2"
	RoCEv1     Transport = "rocev1"
	IWARP      Transport = "iwarp"
	InfiniBand Transport = "infiniband"
)

// IsRoCE reports whether the transport is RoCE (v1 or v2).
func (t Transport) IsRoCE() bool { return t == RoCEv2 || t == RoCEv1 }

// IsEthernet reports whether the transport runs over Ethernet.
func (t Transport) IsEthernet() bool { return t != InfiniBand }

// Trust modes: which header field classifies traffic into priorities.
const (
	TrustDSCP = "dscp"
	TrustPCP  = "pcp"
)

// Receive buffer policies of a host NIC (receive_buffers).
const (
	// BuffersFirmware leaves a NIC's receive buffers to its firmware, as
	// NVIDIA's nic-configuration-operator does (it sets the cable length
	// only): the default.
	BuffersFirmware = "firmware"
	// BuffersManual has fabctl size them (mlx5 manual buffer mode, for
	// good): each lossless priority on a buffer of its own, at least the
	// PFC headroom the driver computes for the link.
	BuffersManual = "manual"
)

// Congestion control schemes.
const (
	CCDCQCN   = "dcqcn"
	CCPFCOnly = "pfc-only"
	CCECNOnly = "ecn-only"
	CCNone    = "none"
)

// Class roles.
const (
	RoleRDMA  = "rdma"  // RDMA data
	RoleCNP   = "cnp"   // congestion notification packets
	RoleOther = "other" // TCP and everything else
)

// Forwarding modes of a switch.
const (
	Routed  = "routed"
	Bridged = "bridged"
)

// Source locates a model value in the spec files.
type Source struct {
	// Block is the range of the block header (type and labels).
	Block hcl.Range
	// Attrs holds the expression range of every attribute that was set,
	// at most one entry per name. Use Has and Attr to read it.
	//
	// A slice, not a map: a generated pod has ~110k model objects with a
	// handful of attributes each, and with a map per object the model of
	// the benchmark pod took 109 MB (73 MB now); a linear scan of a few
	// entries is also faster than hashing.
	Attrs []AttrRange
}

// AttrRange is the expression range of one attribute. It is kept in 48
// bytes instead of hcl.Range's 64 plus the name: the file is the block's
// (Source.Block) and positions fit 32 bits, except for a range from
// another file (an override) or beyond 4 GiB, which is kept whole in ext.
// At 16,384 hosts the model holds about a million of these.
type AttrRange struct {
	Name       string
	start, end pos32
	ext        *hcl.Range
}

type pos32 struct{ line, col, byte uint32 }

func fits32(p hcl.Pos) bool {
	return p.Line >= 0 && p.Column >= 0 && p.Byte >= 0 && p.Line <= math.MaxUint32 && p.Column <= math.MaxUint32 && p.Byte <= math.MaxUint32
}

func newAttrRange(name string, rng, block hcl.Range) AttrRange {
	if rng.Filename != block.Filename || !fits32(rng.Start) || !fits32(rng.End) {
		// A copy: &rng would move the parameter to the heap on every
		// call (86 MB per load at 16,384 hosts), not only on this path.
		ext := new(hcl.Range)
		*ext = rng
		return AttrRange{Name: name, ext: ext}
	}
	return AttrRange{Name: name,
		start: pos32{uint32(rng.Start.Line), uint32(rng.Start.Column), uint32(rng.Start.Byte)},
		end:   pos32{uint32(rng.End.Line), uint32(rng.End.Column), uint32(rng.End.Byte)}}
}

// sourceJSON is Source's JSON shape: every attribute with its whole range
// (a compiled intent carries Sources, e.g. a NIC's limits, to the agent).
type sourceJSON struct {
	Block hcl.Range
	Attrs []attrJSON
}

type attrJSON struct {
	Name  string
	Range hcl.Range
}

// MarshalJSON writes the Source with whole ranges, as before AttrRange was
// made compact.
func (s Source) MarshalJSON() ([]byte, error) {
	out := sourceJSON{Block: s.Block}
	if s.Attrs != nil {
		out.Attrs = make([]attrJSON, len(s.Attrs))
		for i, a := range s.Attrs {
			out.Attrs[i] = attrJSON{Name: a.Name, Range: a.Range(s.Block)}
		}
	}
	return json.Marshal(out)
}

// UnmarshalJSON reads what MarshalJSON writes.
func (s *Source) UnmarshalJSON(b []byte) error {
	var in sourceJSON
	if err := json.Unmarshal(b, &in); err != nil {
		return err
	}
	*s = Source{Block: in.Block}
	if in.Attrs != nil {
		s.Attrs = make([]AttrRange, len(in.Attrs))
		for i, a := range in.Attrs {
			s.Attrs[i] = newAttrRange(a.Name, a.Range, in.Block)
		}
	}
	return nil
}

// Range is the attribute's expression range; block is the Source's Block.
func (a AttrRange) Range(block hcl.Range) hcl.Range {
	if a.ext != nil {
		return *a.ext
	}
	return hcl.Range{Filename: block.Filename,
		Start: hcl.Pos{Line: int(a.start.line), Column: int(a.start.col), Byte: int(a.start.byte)},
		End:   hcl.Pos{Line: int(a.end.line), Column: int(a.end.col), Byte: int(a.end.byte)}}
}

// Has reports whether the attribute was set in the spec.
func (s Source) Has(name string) bool {
	return s.index(name) >= 0
}

// Attr returns the range of the attribute's expression, or the block header
// when the attribute was not set (the value is a default).
func (s Source) Attr(name string) hcl.Range {
	if i := s.index(name); i >= 0 {
		return s.Attrs[i].Range(s.Block)
	}
	return s.Block
}

func (s *Source) index(name string) int {
	for i := range s.Attrs {
		if s.Attrs[i].Name == name {
			return i
		}
	}
	return -1
}

// set records the range of an attribute, replacing an earlier entry.
func (s *Source) set(name string, rng hcl.Range) {
	if i := s.index(name); i >= 0 {
		s.Attrs[i] = newAttrRange(name, rng, s.Block)
		return
	}
	s.Attrs = append(s.Attrs, newAttrRange(name, rng, s.Block))
}

// unset removes an attribute's entry (a null value means "not set").
func (s *Source) unset(name string) {
	if i := s.index(name); i >= 0 {
		s.Attrs = append(s.Attrs[:i], s.Attrs[i+1:]...)
	}
}

// LintIgnores silences lint rules on one block: rule id -> reason.
type LintIgnores map[string]string

// Spec is a whole fabric: the result of loading and decoding every file.
type Spec struct {
	Fabric      *Fabric
	Classes     []*Class
	Switches    []*Switch
	Hosts       []*Host
	Links       []*Link
	Credentials []*Credentials
	Validations []*Validation
	InfiniBand  *InfiniBandConfig // nil unless declared

	// Files are the parsed files by name, for diagnostic snippets.
	Files map[string]*hcl.File
	// SourceHash is the SHA-256 over every file name and content, in name order.
	SourceHash string

	switches    map[string]*Switch
	hosts       map[string]*Host
	classes     map[string]*Class
	credentials map[string]*Credentials
	lossless    []int // cached LosslessPriorities, set when loading ends
	platforms   []PlatformInfo
}

// Switch returns the switch with that name, or nil.
func (s *Spec) Switch(name string) *Switch { return s.switches[name] }

// Host returns the host with that name, or nil.
func (s *Spec) Host(name string) *Host { return s.hosts[name] }

// Class returns the traffic class with that name, or nil.
func (s *Spec) Class(name string) *Class { return s.classes[name] }

// CredentialsByName returns the credentials block with that name, or nil.
func (s *Spec) CredentialsByName(name string) *Credentials { return s.credentials[name] }

// Lossless returns the lossless (PFC) classes.
func (s *Spec) Lossless() []*Class {
	var out []*Class
	for _, c := range s.Classes {
		if c.Lossless {
			out = append(out, c)
		}
	}
	return out
}

// LosslessPriorities returns the sorted, de-duplicated priorities of the
// lossless classes: the fabric's PFC enable set. Callers must not modify it.
func (s *Spec) LosslessPriorities() []int {
	if s.lossless != nil {
		return s.lossless
	}
	return s.losslessPriorities()
}

// losslessPriorities computes LosslessPriorities (kept apart so the cached
// path inlines into the effective-value accessors).
func (s *Spec) losslessPriorities() []int {
	p := []int{}
	for _, c := range s.Lossless() {
		p = append(p, c.Priority)
	}
	return uniqueSorted(p)
}

// ClassesByRole returns the classes with the given role.
func (s *Spec) ClassesByRole(role string) []*Class {
	var out []*Class
	for _, c := range s.Classes {
		if c.Role == role {
			out = append(out, c)
		}
	}
	return out
}

// DSCPMap returns the fabric's DSCP -> priority map over all 64 code points.
// Code points claimed by no class go to the default class, or priority 0.
func (s *Spec) DSCPMap() [64]int {
	var m [64]int
	def := 0
	for _, c := range s.Classes {
		if c.Default {
			def = c.Priority
		}
	}
	for i := range m {
		m[i] = def
	}
	for _, c := range s.Classes {
		for _, d := range c.DSCP {
			m[d] = c.Priority
		}
	}
	return m
}

// Fabric holds fabric-wide settings.
type Fabric struct {
	Name              string
	Transport         Transport
	MTU               int // IP MTU on hosts and routed switch ports
	RDMAMTU           int // RDMA path MTU (256..4096)
	Trust             string
	CongestionControl string
	PFCWatchdog       Watchdog
	// MaxLosslessPriorities per port before QOS-5 warns.
	MaxLosslessPriorities int
	// RDMATos is the IP ToS byte rdma_cm and NCCL use by default (nil: derived
	// from the RDMA class as DSCP<<2 | ECT(0)).
	RDMATos *int
	// LinkErrorsMax is the most input plus output errors a link end may
	// have counted before validate and plan name it (link_errors_max,
	// default 0, ANTA VerifyInterfaceErrors' rule).
	LinkErrorsMax int64
	Ignore        LintIgnores
	Src           Source
}

// Watchdog is the PFC watchdog (storm / deadlock guard).
type Watchdog struct {
	Enabled bool
	Detect  time.Duration
	Restore time.Duration
	Poll    time.Duration
	Action  string // drop | forward | alert
	Src     Source
}

// Class is a traffic class: a priority, the DSCP code points mapped to it,
// and how the fabric treats it.
type Class struct {
	Name     string
	Role     string // rdma | cnp | other
	Priority int    // 0..7 (IEEE 802.1p / switch priority / TC)
	DSCP     []int  // sorted, unique
	// Default marks the class that receives every DSCP no other class claims.
	Default   bool
	Lossless  bool // PFC no-drop
	Strict    bool // strict priority scheduling
	Bandwidth int  // ETS guaranteed share in percent (0 when strict)
	// MaxRate caps the class's priority on the host NICs (max_rate, per-TC
	// shaper, dcbnl ieee_maxrate); 0 = no cap.
	MaxRate BitRate
	ECN     *ECNProfile
	SL      *int // InfiniBand service level
	Ignore  LintIgnores
	Src     Source
}

// ECNProfile is a RED-style ECN marking profile (mark-only, no drop).
type ECNProfile struct {
	Min         Bytes
	Max         Bytes
	Probability float64 // percent, 0 < p <= 100
	Src         Source
}

// Switch is a switch the fabric configures.
type Switch struct {
	Name     string
	Platform string // one of LoadOptions.Platforms
	// Model is the switch's hardware model as its show version names it
	// ("" not stated): where a platform renders by chip family (EOS's
	// transmit-queue keyword), an offline render and the PR gate use it;
	// plan checks it against the model the switch reports.
	Model       string
	Address     string // management address, host or host:port
	Driver      string // the transport of the platform's driver (PlatformInfo.Transport): ssh | gnmi
	Credentials string // name of a credentials block
	// LLDPName is the system name the switch advertises over LLDP when
	// it is not the spec's name (lldp_name; "": the spec's name).
	LLDPName   string
	Role       string // leaf | spine | superspine | border | ...
	Tier       int    // 1 leaf, 2 spine, 3 superspine (Clos level)
	Forwarding string // routed | bridged
	// UnknownUnicast is what a bridged switch does with unknown unicast:
	// "drop", "flood" or "" (not stated: the hardware default, flood).
	UnknownUnicast string
	MTU            int         // IP MTU override for every port (0: fabric MTU)
	Trust          string      // override ("" = fabric trust)
	PFC            []int       // override of the PFC enable set for every port (nil = derived)
	DSCPMap        map[int]int // brownfield DSCP -> priority entries that differ from the classes
	RemarkDSCP     map[int]int // DSCP rewrites the switch performs (from -> to)
	Buffer         *Buffer
	Ports          []*Port
	ACLs           []*ACL
	Ignore         LintIgnores
	Accept         Acceptances
	// Unmanaged are the settings fabctl leaves as the device runs them
	// (unmanaged = { "<setting>" = "<reason>" }; docs/spec.md#unmanaged).
	Unmanaged Acceptances
	Src       Source

	// InfiniBand switches (platform "infiniband"): the subnet manager
	// programs them, fabctl does not log in. PortCount is the port
	// count (ports 1..PortCount), VLs the data VLs its ports run.
	InfiniBand bool
	PortCount  int
	VLs        int

	ports         map[string]*Port
	declaredPorts int // ports declared in the spec come first in Ports
}

// Port returns the declared port with that name, or nil.
func (s *Switch) Port(name string) *Port { return s.ports[name] }

// Buffer holds the ASIC buffer facts used by the headroom checks.
type Buffer struct {
	Total      Bytes // total packet buffer
	Reserved   Bytes // shared-pool floor that headroom may not take
	Headroom   Bytes // configured headroom per lossless PG per port (0: computed by the NOS)
	XOff       Bytes // PG occupancy at which PAUSE is sent (0: unknown)
	QueueLimit Bytes // per-queue limit (0: unknown)
	CellSize   Bytes // buffer cell size (0: unknown)
	Src        Source
}

// Port is a switch port.
type Port struct {
	Name        string
	Speed       BitRate
	MTU         int   // IP MTU override (0: switch/fabric MTU)
	PFC         []int // override (nil = derived from classes; empty = PFC off)
	Pause       bool  // IEEE 802.3x global pause
	PFCWatchdog *bool // override (nil = fabric watchdog)
	Trust       string
	Description string
	Ignore      LintIgnores
	Src         Source

	link *Link // the link on the port (see Link)
}

// Link is the link on the port, set by the loader; nil when none is, or
// the spec did not load without errors (a link dropped for an error is
// not returned).
func (p *Port) Link() *Link { return p.link.ifResolved() }

// peerNIC is the host NIC at the other end of the link on port p (nil:
// no resolved link, or a switch there).
func (l *Link) peerNIC(p *Port) *NIC {
	if l = l.ifResolved(); l == nil {
		return nil
	}
	switch p {
	case l.ends[0].port:
		return l.ends[1].nic
	case l.ends[1].port:
		return l.ends[0].nic
	}
	return nil
}

// ifResolved is l when the loader kept it (its ends are resolved), else nil.
func (l *Link) ifResolved() *Link {
	if l == nil || l.ends[0].sw == nil && l.ends[0].host == nil {
		return nil
	}
	return l
}

// ACL is a switch access list entry that matters to RDMA traffic.
type ACL struct {
	Name     string
	Action   string // permit | deny
	Protocol string // udp | tcp | any
	DstPorts []PortRange
	Src      Source
}

// PortRange is an inclusive L4 port range.
type PortRange struct{ From, To int }

// Contains reports whether p is in the range.
func (r PortRange) Contains(p int) bool { return p >= r.From && p <= r.To }

// Host is a server with RDMA NICs.
type Host struct {
	Name        string
	Address     string
	Connect     Connect
	Credentials string
	LLDPName    string // LLDP system name when not the spec's name (lldp_name)
	Role        string
	Forwarding  bool // the host forwards traffic between its NICs (transit)
	Sudo        bool
	NUMANodes   map[int]CPUSet // declared NUMA topology (node -> CPUs)
	IRQBalance  string         // stop | keep
	RDMATos     *int           // override of the fabric's rdma_cm/NCCL ToS
	NCCLEnvFile string
	QP          QPSizing
	NICs        []*NIC
	Ignore      LintIgnores
	Accept      Acceptances
	// Unmanaged are the settings fabctl leaves as the device runs them
	// (unmanaged = { "<setting>" = "<reason>" }; docs/spec.md#unmanaged).
	Unmanaged Acceptances
	Src       Source

	nics map[string]*NIC
}

// NIC returns the NIC with that netdev name, or nil.
func (h *Host) NIC(name string) *NIC { return h.nics[name] }

// Connect says how fabctl reaches a host.
type Connect struct {
	Kind  string // ssh | local | netns
	Netns string // namespace name for netns; for ssh, a namespace on the remote host ("ssh+netns:NAME")
}

func (c Connect) String() string {
	if c.Netns != "" {
		if c.Kind == "ssh" {
			return "ssh+netns:" + c.Netns
		}
		return "netns:" + c.Netns
	}
	return c.Kind
}

// QPSizing is the queue pair sizing applications and the traffic test use.
type QPSizing struct {
	MaxSendWR  int
	MaxRecvWR  int
	MaxSGE     int
	MaxInline  int
	CQDepth    int
	QPsPerConn int
	Src        Source
}

// NIC is an RDMA NIC port on a host, named by its netdev.
type NIC struct {
	Name      string // netdev (ens1f0, ib0)
	Device    string // RDMA device (mlx5_0, rxe0)
	Model     string // connectx-7, e810, rxe, siw, ... ("" unknown)
	Addresses []netip.Prefix
	Speed     BitRate
	MTU       int // IP MTU override (0: fabric MTU)
	NUMA      NUMAPolicy
	NUMANode  *int // declared NUMA node of the NIC
	Trust     string
	PFC       []int // override (nil = derived from classes)
	ECN       *bool // DCQCN NP/RP enabled (nil = per congestion control)
	// DCQCNPrios are the priorities DCQCN (NP/RP) is enabled on when ECN
	// is on (dcqcn_priorities); nil = the NIC vendor's default, every
	// priority (mlx5 ROCE_CC_PRIO_MASK = 0xff). The RDMA classes'
	// priorities are always added (intent).
	DCQCNPrios []int
	// FirmwareLLDP is the NIC firmware's LLDP/DCBX agent (firmware_lldp):
	// false hands DCB to the host (Intel E810: the fw-lldp-agent private
	// flag off; ice refuses every DCB write while the agent runs); nil
	// leaves it alone.
	FirmwareLLDP *bool
	// ReceiveBuffers is who sizes the NIC's receive buffers
	// (receive_buffers): BuffersFirmware (default) or BuffersManual.
	ReceiveBuffers string
	Pause          bool // IEEE 802.3x global pause
	DSCPMap        map[int]int
	VLAN           int    // VLAN id of the RDMA interface (0 = untagged)
	GUID           string // InfiniBand port GUID, canonical "0x" + 16 hex digits ("" = not declared)
	Limits         DeviceLimits
	Ignore         LintIgnores
	Accept         Acceptances
	// Unmanaged are the settings fabctl leaves as the device runs them
	// (unmanaged = { "<setting>" = "<reason>" }; docs/spec.md#unmanaged).
	Unmanaged Acceptances
	Src       Source

	// VLANInterface is the RDMA interface's 802.1Q netdev on this NIC when
	// VLAN is set (vlan_interface, default "<name>.<vlan>"); "" untagged.
	VLANInterface string

	link *Link // the link on the NIC (see Link)
}

// Link is the link on the NIC, set by the loader: see Port.Link.
func (n *NIC) Link() *Link { return n.link.ifResolved() }

// RDMANetdev is the netdev RDMA traffic uses: the VLAN interface when the
// NIC has a VLAN, else the NIC itself.
func (n *NIC) RDMANetdev() string {
	if n.VLANInterface != "" {
		return n.VLANInterface
	}
	return n.Name
}

// NUMAPolicy says where IRQs and test threads of a NIC run.
type NUMAPolicy struct {
	Auto bool   // pin to the NIC's local node
	CPUs CPUSet // explicit CPU list when not auto
}

// DeviceLimits are RDMA device capabilities (ibv_query_device). A zero
// field is unknown (a partial limits block states only some).
type DeviceLimits struct {
	MaxQPWR   int
	MaxSGE    int
	MaxCQE    int
	MaxInline int
	Known     bool // limits come from a model table or an explicit limits block
	Src       Source
}

// Link is a cable between two endpoints.
type Link struct {
	A, B        Endpoint
	Speed       BitRate
	CableLength Length
	VLANTags    int // 802.1Q tags carried on the link (MTU-1 adds 4 bytes each)
	// InfiniBand: Width is the lane count (1, 2, 4, 8, 12; 0 not set)
	// and IBSpeed the per-lane generation ("SDR".."NDR", "" not set);
	// Speed is then Width (default 4) times the lane rate.
	Width   int
	IBSpeed string
	Ignore  LintIgnores
	Src     Source

	// ends are A and B resolved by the loader, so that lint, intent and
	// the planner do not look every endpoint up again by name (two map
	// lookups per end, hundreds of thousands at 16,384 hosts).
	ends [2]end
}

// EndA and EndB are the link's ends resolved to the model: the switch and
// its port, or the host and its NIC (the other pair nil). Both pairs are
// nil for a link the loader did not resolve (one built by hand).
func (l *Link) EndA() (*Switch, *Port, *Host, *NIC) {
	return l.ends[0].sw, l.ends[0].port, l.ends[0].host, l.ends[0].nic
}

// EndB: see EndA.
func (l *Link) EndB() (*Switch, *Port, *Host, *NIC) {
	return l.ends[1].sw, l.ends[1].port, l.ends[1].host, l.ends[1].nic
}

// Address is the link's stable name, e.g. link.leaf1:Ethernet0--gpu01:ens1f0.
func (l *Link) Address() string { return "link." + l.A.String() + "--" + l.B.String() }

// Other returns the far end of the link seen from node.
func (l *Link) Other(node string) Endpoint {
	if l.A.Node == node {
		return l.B
	}
	return l.A
}

// Node kinds an endpoint can name.
const (
	KindSwitch = "switch"
	KindHost   = "host"
)

// Endpoint is one end of a link: node and port (switch port or host NIC).
type Endpoint struct {
	Node string
	Port string
	Kind string // switch | host
	Src  hcl.Range
}

func (e Endpoint) String() string { return e.Node + ":" + e.Port }

// Credentials are how fabctl logs into devices. Secrets are references only.
type Credentials struct {
	Name       string
	Username   string
	Password   *SecretRef
	PrivateKey *SecretRef
	Passphrase *SecretRef
	// SSHAgent asks for the keys of the running ssh-agent (SSH_AUTH_SOCK)
	// besides, or instead of, password and private_key.
	SSHAgent bool
	// EnablePassword answers a switch's `enable` password prompt (EOS,
	// NX-OS privileged exec).
	EnablePassword *SecretRef
	Token          *SecretRef
	KnownHosts     string // known_hosts file for SSH host-key verification
	CAFile         string // CA bundle for gNMI TLS verification
	CertFile       string // client certificate (mTLS)
	KeyFile        string // client key path (mTLS); a path, not a secret value
	// ConnectTimeout bounds one connection attempt to a device that uses
	// these credentials (gNMI: TCP, TLS and the first Capabilities; SSH:
	// TCP and the handshake); 0: the transport's default (10s).
	ConnectTimeout time.Duration
	Src            Source
}

// SecretRef points at a secret without holding it.
type SecretRef struct {
	Kind string // env | file
	Name string // variable name or file path
	Src  hcl.Range
}

// String renders the reference, never the secret.
func (s SecretRef) String() string { return fmt.Sprintf("%s(%q)", s.Kind, s.Name) }

// Validation is a traffic test declared in a validate block.
type Validation struct {
	Name         string
	Pattern      string // ring | pairs | all-pairs
	Op           string // write | send | read
	MessageSize  Bytes
	Duration     time.Duration
	Iterations   int
	QPs          int
	Class        string
	Hosts        []string // host name globs ("" = all hosts)
	MinBandwidth Threshold
	MaxP99       time.Duration
	// Marking: MarkHost (default) connects through rdma_cm without
	// setting a ToS, SL or PCP, so the host's defaults mark the traffic
	// as an application's would; MarkSelf marks it with the class itself
	// (isolates a switch problem from a host one).
	Marking string
	// Criteria: CriteriaSpec (the block's own thresholds) or CriteriaNGC
	// (NVIDIA's cluster acceptance figures, on top of them).
	Criteria string
	// Bidirectional runs bandwidth tests both ways at once (perftest -b).
	Bidirectional bool
	Src           Source
}

// Validation markings and criteria presets.
const (
	MarkHost     = "host"
	MarkSelf     = "self"
	CriteriaSpec = "spec"
	CriteriaNGC  = "ngc"
)

// Threshold is a bandwidth bound, either a share of line rate or absolute.
type Threshold struct {
	Percent float64 // > 0: share of line rate
	Rate    BitRate // > 0: absolute
}

// InfiniBandConfig holds subnet-manager facts for InfiniBand fabrics.
type InfiniBandConfig struct {
	SubnetManager string // host name running opensm
	// SMConnect is how fabctl reaches the subnet manager ("ssh",
	// "local"; "" the SM host's connect).
	SMConnect string
	// OpenSMConf and OpenSMPIDFile are where opensm keeps its
	// configuration and pid file on the SM host ("": the defaults);
	// relative paths are resolved against the spec file's directory.
	OpenSMConf    string
	OpenSMPIDFile string
	// DiagsDir is the directory of the infiniband-diags programs
	// (ibnetdiscover, smpquery) on the SM host ("": its PATH); the
	// testbed points it at wrappers that run them on the simulated
	// subnet. Relative paths are resolved like OpenSMConf.
	DiagsDir   string
	Partitions []*Partition
	SL2VL      []int // 16 entries: VL of each SL
	VLArbHigh  []VLWeight
	VLArbLow   []VLWeight
	// MaxVLs is opensm's qos_max_vls, the data VLs the ports run (1, 2,
	// 4, 8 or 15); 0: not managed.
	MaxVLs int
	// VLHighLimit is opensm's qos_high_limit: how many 4 KB units the
	// high-priority table may send before a low-priority packet gets a
	// turn (0..255, 255 = unlimited); nil: not managed.
	VLHighLimit *int
	// Unmanaged are the subnet manager's settings fabctl leaves as
	// opensm runs them, by the state paths plan prints ("partitions/
	// <name>", "qos-policy/section/port-groups", "opensm/qos_ca_sl2vl";
	// docs/spec.md#unmanaged).
	Unmanaged Acceptances
	Src       Source
}

// Partition is an InfiniBand partition (P_Key).
type Partition struct {
	Name    string
	PKey    int
	Members []PartitionMember
	// MTU is the IPoIB group MTU in bytes; 0: opensm's default group
	// MTU (no mtu= in partitions.conf: GroupMTU).
	MTU   int
	Rate  BitRate
	SL    int
	IPoIB bool
	Src   Source
}

// OpenSMDefaultGroupMTU is the MTU opensm gives a partition's multicast
// groups when partitions.conf sets none: "mtu=<val> ... (default is 4
// (2048))", linux-rdma/opensm doc/partition-config.txt.
const OpenSMDefaultGroupMTU = 2048

// GroupMTU is the partition's IPoIB group MTU as opensm sets it: MTU, or
// opensm's default when the spec says mtu = 0.
func (p *Partition) GroupMTU() int {
	if p.MTU == 0 {
		return OpenSMDefaultGroupMTU
	}
	return p.MTU
}

// PartitionMember is an endpoint (host:nic, or ALL) with its membership.
type PartitionMember struct {
	Endpoint string
	Full     bool
}

// VLWeight is one VL arbitration entry.
type VLWeight struct{ VL, Weight int }

// CPUSet is a sorted set of CPU ids.
type CPUSet []int

func (c CPUSet) String() string {
	if len(c) == 0 {
		return ""
	}
	var b strings.Builder
	start, prev := c[0], c[0]
	flush := func() {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		if start == prev {
			fmt.Fprintf(&b, "%d", start)
		} else {
			fmt.Fprintf(&b, "%d-%d", start, prev)
		}
	}
	for _, v := range c[1:] {
		if v == prev+1 {
			prev = v
			continue
		}
		flush()
		start, prev = v, v
	}
	flush()
	return b.String()
}

// SubsetOf reports whether every CPU in c is in o.
func (c CPUSet) SubsetOf(o CPUSet) bool {
	set := make(map[int]bool, len(o))
	for _, v := range o {
		set[v] = true
	}
	for _, v := range c {
		if !set[v] {
			return false
		}
	}
	return true
}

func uniqueSorted(v []int) []int {
	if len(v) == 0 {
		return v
	}
	s := append([]int(nil), v...)
	sort.Ints(s)
	out := s[:1]
	for _, x := range s[1:] {
		if x != out[len(out)-1] {
			out = append(out, x)
		}
	}
	return out
}

// Path is the file a file("...") reference reads (ResolvePath against the
// spec file that declares it); for env("...") it is the variable's name.
func (s SecretRef) Path() string {
	if s.Kind != "file" {
		return s.Name
	}
	return ResolvePath(s.Name, s.Src.Filename)
}

// ResolvePath is the one rule for every file a spec names (secrets given
// as file("..."), known_hosts, ca_file, cert_file, key_file): an absolute
// path as is, "~/" under the home directory, and a relative path against
// the directory of the spec file declaredIn, so the spec means the same
// files wherever fabctl runs.
func ResolvePath(p, declaredIn string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	if strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[2:])
		}
		return p
	}
	if declaredIn != "" {
		return filepath.Join(filepath.Dir(declaredIn), p)
	}
	return p
}
