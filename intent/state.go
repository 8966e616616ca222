package intent

import (
	"crypto/sha256"
	"encoding/hex"
	"hash/maphash"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fabctl/fabctl/spec"
)

// State is a device's normalised state: setting path -> canonical value.
// Paths are vendor-neutral ("port/Ethernet0/pfc", "tc/3/ecn/min"); values
// are canonical strings (bytes as integers, durations in ms, priority sets
// as "3,4"). Compile+Flatten give the desired State; a driver's Read gives
// the live State in the same terms.
type State map[string]string

// Keys returns the paths in order.
func (s State) Keys() []string {
	return append([]string(nil), s.sortedKeys()...)
}

// sortedKeys returns the paths in order, in a slice shared with other
// States of the same key set: the caller must not modify it.
//
// The devices of a fabric have few distinct key sets (the hosts of a pod
// have the same NICs), and sorting a host's ~200 paths, which share long
// prefixes ("nic/ens1f0np0/tc/3/..."), was a third of planning a 4,096-host
// pod. So each key set's order is kept, found by a signature over the set
// that does not depend on map order (the count and the sum of the keys'
// hashes), and checked before use: an order of the same length whose every
// path is in s is exactly s's paths (map keys are distinct), so a
// signature collision costs a sort, never a wrong order.
func (s State) sortedKeys() []string {
	sig := s.keySig()
	if v, ok := orders.Load(sig); ok {
		order := v.([]string)
		if coversAll(s, order) {
			return order
		}
	}
	return s.sortKeys(sig)
}

// sortKeys sorts s's paths and keeps the order for the key set of
// signature sig.
func (s State) sortKeys(sig keySig) []string {
	out := make([]string, 0, len(s))
	for k := range s {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) >= minCachedOrder && orderCount.Load() < maxCachedOrders {
		if _, loaded := orders.Swap(sig, out); !loaded {
			orderCount.Add(1)
		}
	}
	return out
}

// coversAll reports whether order, a list of distinct paths, is exactly
// the paths of s.
func coversAll(s State, order []string) bool {
	if len(order) != len(s) {
		return false
	}
	for _, k := range order {
		if _, ok := s[k]; !ok {
			return false
		}
	}
	return true
}

type keySig struct {
	n   int
	sum uint64
}

func (s State) keySig() keySig {
	sig := keySig{n: len(s)}
	for k := range s {
		sig.sum += maphash.String(orderSeed, k)
	}
	return sig
}

// The cached key orders: one per distinct key set (device shape, live or
// desired), bounded so a long-running process that sees arbitrary states
// (the agent, the kube controller) keeps at most maxCachedOrders of them
// (a few MB: a switch's order is ~1,000 paths); key sets beyond that sort
// each time, as all did before. Small states sort cheaply and are not
// cached.
const (
	minCachedOrder  = 16
	maxCachedOrders = 1024
)

var (
	orderSeed  = maphash.MakeSeed()
	orders     sync.Map // keySig -> []string
	orderCount atomic.Int64
)

// Fingerprint is a SHA-256 over the sorted state: plans record the
// fingerprint of what they observed, apply refuses when it moved.
func (s State) Fingerprint() string {
	// The cached order of s's key set (sortedKeys) is checked while
	// hashing: an order of s's length whose every path is in s is s's.
	sig := s.keySig()
	if v, ok := orders.Load(sig); ok {
		if fp, ok := s.fingerprint(v.([]string)); ok {
			return fp
		}
	}
	fp, _ := s.fingerprint(s.sortKeys(sig))
	return fp
}

// fingerprint hashes s in the given order of its paths; false when the
// order is not s's paths.
func (s State) fingerprint(order []string) (string, bool) {
	if len(order) != len(s) {
		return "", false
	}
	h := sha256.New()
	// The bytes hashed are "%d:%s=%d:%s\n" (key length, key, value length,
	// value) per setting in key order, built without fmt: plans fingerprint
	// millions of settings.
	bp := fingerprintBufs.Get().(*[]byte)
	defer fingerprintBufs.Put(bp)
	buf := (*bp)[:0]
	for _, k := range order {
		v, ok := s[k]
		if !ok {
			return "", false
		}
		buf = strconv.AppendInt(buf, int64(len(k)), 10)
		buf = append(buf, ':')
		buf = append(buf, k...)
		buf = append(buf, '=')
		buf = strconv.AppendInt(buf, int64(len(v)), 10)
		buf = append(buf, ':')
		buf = append(buf, v...)
		buf = append(buf, '\n')
		if len(buf) >= 4096-64 {
			h.Write(buf)
			buf = buf[:0]
		}
	}
	h.Write(buf)
	return hex.EncodeToString(h.Sum(nil)), true
}

// fingerprintBufs are Fingerprint's write buffers (4 KB each): a plan
// fingerprints every device's state.
var fingerprintBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

// Flatten returns a switch's desired State.
func (sw *Switch) Flatten() State {
	st := make(State, 16+8+6*len(sw.TCs)+6*len(sw.Ports))
	st["trust"] = sw.Trust
	root := keysFor(&rootKeys, "", "")
	if sw.Trust == spec.TrustDSCP && sw.Transport != spec.InfiniBand {
		putDSCP(st, root, &sw.DSCPToTC)
	}
	flattenTCs(st, root, sw.TCs, true)
	if sw.Watchdog.Enabled {
		st["pfcwd/detect"] = durString(sw.Watchdog.Detect)
		st["pfcwd/restore"] = durString(sw.Watchdog.Restore)
		st["pfcwd/poll"] = durString(sw.Watchdog.Poll)
		st["pfcwd/action"] = sw.Watchdog.Action
	}
	if sw.Headroom > 0 {
		st["buffer/headroom"] = strconv.FormatInt(int64(sw.Headroom), 10)
	}
	for _, p := range sw.Ports {
		k := keysFor(&portKeys, "port/", p.Name)
		if p.MTUFloor {
			st[k.mtu] = AtLeast(p.MTU)
		} else {
			st[k.mtu] = strconv.Itoa(p.MTU)
		}
		st[k.pfc] = intsString(p.PFC)
		st[k.pfcwd] = boolString(p.Watchdog)
		st[k.pause] = boolString(p.Pause)
		if p.Trust != sw.Trust {
			st[k.trust] = p.Trust
		}
		if p.CableLength > 0 {
			st[k.cable] = strconv.FormatFloat(float64(p.CableLength), 'f', -1, 64) + "m"
		}
	}
	return st
}

// keySet holds the state paths of one scope (the device root, a port, a
// NIC), built once per scope name and shared by every device: a fabric's
// hosts have the same NIC names, so their desired States share key
// strings instead of each allocating its own (a 4,096-host pod has three
// million settings).
type keySet struct {
	dscp                                                                         [64]string
	dscpDefault                                                                  string
	tc                                                                           [8]tcKeys
	mtu, addresses, trust, pfc, pfcwd, pause, ecn, roceMode, tos, irqCPUs, cable string
	firmwareLLDP, cableLen, cnpDSCP, cnpPrio                                     string
}

type tcKeys struct{ lossless, sched, bandwidth, ecnMin, ecnMax, ecnProb string }

func newTCKeys(p string) tcKeys {
	return tcKeys{lossless: p + "lossless", sched: p + "sched", bandwidth: p + "bandwidth",
		ecnMin: p + "ecn/min", ecnMax: p + "ecn/max", ecnProb: p + "ecn/probability"}
}

// The key sets by scope name. They grow with the distinct port and NIC
// names fabctl has flattened (hundreds), never with the device count.
var rootKeys, portKeys, nicKeys sync.Map // name -> *keySet

func keysFor(m *sync.Map, kind, name string) *keySet {
	if v, ok := m.Load(name); ok {
		return v.(*keySet)
	}
	pre := kind
	if name != "" {
		pre += name + "/"
	}
	k := &keySet{
		mtu: pre + "mtu", addresses: pre + "addresses", trust: pre + "trust", pfc: pre + "pfc",
		pfcwd: pre + "pfcwd", pause: pre + "pause", ecn: pre + "ecn", roceMode: pre + "roce_mode",
		tos: pre + "tos", irqCPUs: pre + "irq_cpus", cable: pre + "cable",
		firmwareLLDP: pre + "firmware_lldp", cableLen: pre + "cable_len", cnpDSCP: pre + "cnp_dscp", cnpPrio: pre + "cnp_prio",
	}
	for i := range k.dscp {
		k.dscp[i] = pre + "dscp/" + strconv.Itoa(i)
	}
	k.dscpDefault = pre + "dscp/default"
	for i := range k.tc {
		k.tc[i] = newTCKeys(pre + "tc/" + strconv.Itoa(i) + "/")
	}
	v, _ := m.LoadOrStore(name, k)
	return v.(*keySet)
}

// DSCPDefault returns the TC most code points of a DSCP table map to (the
// lowest such TC on a tie): the table's normal form is that default plus
// the code points that differ from it.
func DSCPDefault(table *[64]int) int { return dscpDefault(table) }

func dscpDefault[T int | uint8](table *[64]T) int {
	// One pass: best is the lowest TC among those counted most so far
	// (counts only grow, so that holds after each increment).
	var n [256]uint8
	best := 0
	for _, v := range table {
		tc := int(v)
		if tc < 0 || tc >= len(n) {
			continue
		}
		n[tc]++
		if n[tc] > n[best] || (n[tc] == n[best] && tc < best) {
			best = tc
		}
	}
	return best
}

// PutDSCP writes a DSCP -> TC table into a State in its normal form:
// "<prefix>dscp/default" = the default TC and "<prefix>dscp/<n>" for each
// code point mapped elsewhere (prefix "" for a switch, "nic/<name>/" for a
// NIC). Drivers reading a live table use it too, so both sides compare.
// A whole 64-entry table per NIC would be most of a host's settings.
func PutDSCP(st State, prefix string, table *[64]int) {
	def := DSCPDefault(table)
	st[prefix+"dscp/default"] = strconv.Itoa(def)
	for d, tc := range table {
		if tc != def {
			st[prefix+"dscp/"+strconv.Itoa(d)] = strconv.Itoa(tc)
		}
	}
}

func putDSCP[T int | uint8](st State, k *keySet, table *[64]T) {
	def := dscpDefault(table)
	st[k.dscpDefault] = strconv.Itoa(def)
	for d, tc := range table {
		if int(tc) != def {
			st[k.dscp[d]] = strconv.Itoa(int(tc))
		}
	}
}

// flattenTCs writes the traffic classes. ECN marking thresholds are a
// switch queue setting: a NIC is a DCQCN reaction/notification point, not
// a marking point, so hosts flatten without them (withECN false).
func flattenTCs(st State, ks *keySet, tcs []TC, withECN bool) {
	for _, tc := range tcs {
		var k tcKeys
		if tc.TC >= 0 && tc.TC < len(ks.tc) {
			k = ks.tc[tc.TC]
		} else {
			k = newTCKeys(strings.TrimSuffix(ks.tc[0].lossless, "0/lossless") + strconv.Itoa(tc.TC) + "/")
		}
		st[k.lossless] = boolString(tc.Lossless)
		if tc.Strict {
			st[k.sched] = "strict"
		} else {
			st[k.sched] = "ets"
			st[k.bandwidth] = strconv.Itoa(tc.Bandwidth)
		}
		if withECN && tc.ECN != nil {
			st[k.ecnMin] = strconv.FormatInt(int64(tc.ECN.Min), 10)
			st[k.ecnMax] = strconv.FormatInt(int64(tc.ECN.Max), 10)
			st[k.ecnProb] = strconv.FormatFloat(tc.ECN.Probability, 'f', -1, 64)
		}
	}
}

// Flatten returns a host's desired State.
func (h *Host) Flatten() State {
	st := make(State, h.stateSize())
	st["irqbalance"] = h.IRQBalance
	if h.NCCLEnvFile != "" {
		for k, v := range h.NCCL {
			st["nccl/"+k] = v
		}
	}
	for _, n := range h.NICs {
		k := keysFor(&nicKeys, "nic/", n.Name)
		st[k.mtu] = strconv.Itoa(n.MTU)
		addrs := n.Addresses
		if !sort.StringsAreSorted(addrs) {
			addrs = append([]string(nil), addrs...)
			sort.Strings(addrs)
		}
		if n.VLANName == "" {
			st[k.addresses] = strings.Join(addrs, ",")
		} else {
			flattenVLAN(st, &n, addrs)
		}
		if n.RoCEMode == "" {
			continue // iWARP/IB: no DCB on the host
		}
		if n.FirmwareLLDP != nil {
			st[k.firmwareLLDP] = onOffString(*n.FirmwareLLDP)
		}
		st[k.trust] = n.Trust
		if n.Trust == "dscp" {
			putDSCP(st, k, &n.DSCPToTC)
		}
		st[k.pfc] = intsString(n.PFC)
		if n.CableLength > 0 && len(n.PFC) > 0 {
			// whole metres, as the NIC takes it (ieee_pfc.delay)
			st[k.cableLen] = strconv.Itoa(int(math.Ceil(float64(n.CableLength))))
		}
		if n.ManagesBuffers() {
			// The NIC's receive buffers (mlx5 dcb buffer): the layout, and
			// "headroom" for each lossless buffer: at least the PFC
			// headroom the NIC needs for this link (drivers/host buffer.go).
			m, lossless := n.Prio2Buffer()
			st["nic/"+n.Name+"/buffer/prio"] = intsString(m[:])
			for _, b := range lossless {
				st["nic/"+n.Name+"/buffer/"+strconv.Itoa(b)+"/size"] = BufferHeadroom
			}
		}
		st[k.pause] = boolString(n.Pause)
		flattenTCs(st, k, n.TCs, false)
		if capped(n.TCs) {
			for _, tc := range n.TCs {
				st["nic/"+n.Name+"/tc/"+strconv.Itoa(tc.TC)+"/max_rate"] = strconv.FormatInt(int64(tc.MaxRate), 10)
			}
		}
		st[k.ecn] = intsString(n.ECNPrios)
		if n.CNPDSCP >= 0 {
			st[k.cnpDSCP] = strconv.Itoa(n.CNPDSCP)
		}
		if n.CNPPriority >= 0 {
			st[k.cnpPrio] = strconv.Itoa(n.CNPPriority)
		}
		st[k.roceMode] = n.RoCEMode
		st[k.tos] = strconv.Itoa(h.RDMATos)
		if n.NUMA.Auto {
			st[k.irqCPUs] = "auto"
		} else {
			st[k.irqCPUs] = n.NUMA.CPUs.String()
		}
	}
	return st
}

// stateSize is the number of settings Flatten writes, counted the way it
// writes them: the map's size hint. A hint twice too large (as a rough
// per-NIC bound was) doubles every host state's memory: a plan of 4,096
// hosts holds two of them per host.
func (h *Host) stateSize() int {
	n := 1 // irqbalance
	if h.NCCLEnvFile != "" {
		n += len(h.NCCL)
	}
	for i := range h.NICs {
		nic := &h.NICs[i]
		n += 2 // mtu, addresses
		if nic.VLANName != "" {
			n += 4 // the VLAN interface's five settings instead of addresses
		}
		if nic.RoCEMode == "" {
			continue
		}
		n += 7 // trust, pfc, pause, ecn, roce mode, tos, irq cpus
		if nic.FirmwareLLDP != nil {
			n++
		}
		if nic.CableLength > 0 && len(nic.PFC) > 0 {
			n++
		}
		if capped(nic.TCs) {
			n += len(nic.TCs) // max_rate
		}
		if nic.ManagesBuffers() {
			_, lossless := nic.Prio2Buffer()
			n += 1 + len(lossless) // buffer/prio, buffer/<k>/size
		}
		if nic.CNPDSCP >= 0 {
			n++
		}
		if nic.CNPPriority >= 0 {
			n++
		}
		if nic.Trust == "dscp" {
			def := dscpDefault(&nic.DSCPToTC)
			n++
			for _, tc := range nic.DSCPToTC {
				if int(tc) != def {
					n++
				}
			}
		}
		for _, tc := range nic.TCs {
			n += 2 // lossless, sched
			if !tc.Strict {
				n++ // bandwidth
			}
		}
	}
	return n
}

// flattenVLAN puts the RDMA VLAN interface of a NIC: the spec's addresses
// and MTU belong to it (the parent's addresses are not fabctl's then), and
// its egress-qos-map sends each class priority out as the same PCP, which
// is how PCP-trusting switches (RoCEv1) classify. Only non-zero PCPs are
// listed: the kernel neither dumps nor deletes a "p:0" entry.
func flattenVLAN(st State, n *NIC, addrs []string) {
	p := "nic/" + n.Name + "/vlan/"
	st[p+"interface"] = n.VLANName
	st[p+"id"] = strconv.Itoa(n.VLAN)
	st[p+"mtu"] = strconv.Itoa(n.MTU)
	st[p+"addresses"] = strings.Join(addrs, ",")
	st[p+"egress_qos_map"] = FormatQoSMap(n.VLANEgressMap())
}

// VLANEgressMap is the egress-qos-map of the NIC's VLAN interface: skb
// priority -> PCP, the identity for every class priority but 0, and on
// RoCE the skb priority rdma_cm gives a connection for the host's ToS
// (RDMASkbPriority: cma.c iboe_tos_to_sl takes the PCP as
// egress_map[rt_tos2priority(tos)] on a VLAN netdev) -> the RDMA class's
// PCP. Without that entry RoCE leaves on PCP 0 unless the ToS happens to
// map to the RDMA priority itself (lint HOST-7 explains collisions).
func (n *NIC) VLANEgressMap() map[int]int {
	m := map[int]int{}
	for _, tc := range n.TCs {
		if tc.TC > 0 && tc.TC < 8 {
			m[tc.TC] = tc.TC
		}
	}
	if n.RoCEMode != "" && n.RDMAPriority > 0 && n.RDMAPriority < 8 {
		m[n.RDMASkbPriority] = n.RDMAPriority
	}
	return m
}

// rdma_cm's paths to a RoCE connection's service level (the PCP a RoCE
// NIC sends on a VLAN), drivers/infiniband/core/cma.c iboe_tos_to_sl and
// get_vlan_ndev_tc: "if (dev->num_tc) return netdev_get_prio_tc_map(dev,
// prio);" on the real netdev, else the VLAN egress-qos-map entry of prio
// (0 without a VLAN), prio being rt_tos2priority(ToS).
const (
	CMViaEgressMap = "egress-map" // no TC count on the netdev: mlx5 (its dcbnl ops set none)
	CMViaPrioTC    = "prio-tc"    // the driver set a TC count: ice, bnxt
)

// CMSL is the service level rdma_cm gives this NIC's RoCE connections for
// the host's ToS on a NIC of the kernel driver family fam (spec.Family*),
// and which path decides it:
//   - ice sets the netdev's TC count and prio->TC map on every DCB
//     reconfiguration (ice_lib.c ice_vsi_cfg_netdev_tc: prio_tc_map[up] is
//     the netdev TC of the priority's ETS TC), so the SL is the TC that
//     rt_tos2priority(ToS) maps to in the layout fabctl gives ice: the
//     priority itself in DSCP mode (prio_tc the identity), the class's
//     compacted TC in VLAN mode (other priorities on the lowest class's);
//   - bnxt sets the TC count when an ETS is set (bnxt_setup_mq_tc:
//     netdev_set_num_tc) and never a prio->TC map: every priority is on
//     TC 0, so the SL is 0 once fabctl has set the ETS;
//   - mlx5 and other drivers: the VLAN egress map fabctl writes
//     (VLANEgressMap), 0 without a VLAN.
func (n *NIC) CMSL(fam string) (sl int, via string) {
	prio := n.RDMASkbPriority
	switch fam {
	case "ice":
		if n.Trust == "dscp" {
			return prio, CMViaPrioTC
		}
		low := -1
		for i, tc := range n.TCs { // sorted by priority: the compacted TC is the index
			if low < 0 {
				low = i
			}
			if tc.TC == prio {
				return i, CMViaPrioTC
			}
		}
		return max(low, 0), CMViaPrioTC
	case "bnxt":
		return 0, CMViaPrioTC
	}
	if n.VLANName == "" {
		return 0, CMViaEgressMap
	}
	return n.VLANEgressMap()[prio], CMViaEgressMap
}

// FormatQoSMap is the state form of a VLAN QoS map: "from:to" pairs with a
// non-zero "to", sorted by "from", comma-separated ("" for none).
func FormatQoSMap(m map[int]int) string {
	keys := make([]int, 0, len(m))
	for k, v := range m {
		if v != 0 {
			keys = append(keys, k)
		}
	}
	sort.Ints(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = strconv.Itoa(k) + ":" + strconv.Itoa(m[k])
	}
	return strings.Join(parts, ",")
}

// Field says how the diff treats the paths matching Pattern (path.Match
// syntax, e.g. "tc/*/ecn/min").
type Field struct {
	Pattern string
	// Tolerance is the relative difference (0.05 = 5 %) under which two
	// numeric values are equal: hardware quantises thresholds (a Spectrum
	// switch stores 146.48 KB for 150 KB).
	Tolerance float64
	// Disruptive marks changes that interrupt traffic, with the reason.
	Disruptive string
	// DisruptiveOnRemoval limits Disruptive to changes that remove an
	// element of a comma-separated list (addresses): adding to the list
	// interrupts nothing.
	DisruptiveOnRemoval bool
	// DisruptiveOnTrue limits Disruptive to changes that turn a boolean
	// on or off (a lossless PG added or removed): a setting absent on one
	// side counts as false, so creating or removing "false" interrupts
	// nothing.
	DisruptiveOnTrue bool
}

// disruptive is the field's Disruptive reason for a change from before
// to after (a setting absent on one side is ""), or "".
func (f Field) disruptive(before, after string) string {
	if f.Disruptive != "" && f.DisruptiveOnTrue {
		if (before == "true") == (after == "true") {
			return ""
		}
		return f.Disruptive
	}
	if f.Disruptive == "" || !f.DisruptiveOnRemoval {
		return f.Disruptive
	}
	kept := map[string]bool{}
	for _, e := range strings.Split(after, ",") {
		kept[strings.TrimSpace(e)] = true
	}
	for _, e := range strings.Split(before, ",") {
		if e = strings.TrimSpace(e); e != "" && !kept[e] {
			return f.Disruptive
		}
	}
	return ""
}

// FieldFor returns the first field whose pattern matches the path. A port
// name is one segment whatever it contains: "port/*/pfc" matches
// "port/Ethernet1/1/pfc" (EOS, NX-OS and SR Linux names have slashes).
func FieldFor(fields []Field, p string) (Field, bool) {
	p = foldPortName(p)
	for _, f := range fields {
		if ok, _ := path.Match(f.Pattern, p); ok {
			return f, true
		}
	}
	return Field{}, false
}

// fieldMatcher is FieldFor with the patterns split into '/'-separated
// segments once, so a diff over thousands of paths does not run
// path.Match for every path and pattern. Segment matching is exact for
// path.Match patterns: '*' and '?' never match '/'. Patterns with a
// character class or an escape ('[', '\\'), where a class could match
// '/', fall back to path.Match.
type fieldMatcher struct {
	fields []Field
	segs   [][]string // nil: use path.Match
}

func newFieldMatcher(fields []Field) fieldMatcher {
	m := fieldMatcher{fields: fields, segs: make([][]string, len(fields))}
	for i, f := range fields {
		if !strings.ContainsAny(f.Pattern, "[\\") {
			m.segs[i] = strings.Split(f.Pattern, "/")
		}
	}
	return m
}

func (m fieldMatcher) lookup(p string) Field {
	p = foldPortName(p)
	for i, f := range m.fields {
		segs := m.segs[i]
		if segs == nil {
			if ok, _ := path.Match(f.Pattern, p); ok {
				return f
			}
			continue
		}
		if matchSegments(segs, p) {
			return f
		}
	}
	return Field{}
}

func matchSegments(segs []string, p string) bool {
	for i, seg := range segs {
		var part string
		if j := strings.IndexByte(p, '/'); j >= 0 {
			if i == len(segs)-1 {
				return false // the path has more segments
			}
			part, p = p[:j], p[j+1:]
		} else {
			if i != len(segs)-1 {
				return false // the path has fewer segments
			}
			part = p
		}
		if seg == "*" {
			continue
		}
		if !strings.ContainsAny(seg, "*?") {
			if seg != part {
				return false
			}
			continue
		}
		if ok, _ := path.Match(seg, part); !ok {
			return false
		}
	}
	return true
}

// AtLeast is the desired value of a numeric setting that is a floor
// (">=9000"): a device value of n or more is what the spec wants.
func AtLeast(n int) string { return floorPrefix + strconv.Itoa(n) }

const floorPrefix = ">="

// FloorValue returns the number of a floor value (AtLeast) and true, or
// v and false for any other value.
func FloorValue(v string) (string, bool) { return strings.CutPrefix(v, floorPrefix) }

// Equal reports whether two values are the same under a field's
// tolerance; a desired floor a (AtLeast) equals any b at least as large.
func (f Field) Equal(a, b string) bool {
	if a == b {
		return true
	}
	if n, ok := FloorValue(a); ok {
		x, err1 := strconv.ParseFloat(n, 64)
		y, err2 := strconv.ParseFloat(b, 64)
		return err1 == nil && err2 == nil && y >= x
	}
	if f.Tolerance <= 0 {
		return false
	}
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	if err1 != nil || err2 != nil {
		return false
	}
	den := math.Max(math.Abs(x), math.Abs(y))
	return den == 0 || math.Abs(x-y)/den <= f.Tolerance
}

// Action is what a plan does to one setting.
type Action string

// Actions, with Terraform's symbols.
const (
	Create Action = "+"
	Update Action = "~"
	Delete Action = "-"
)

// AttrChange is one setting that differs.
type AttrChange struct {
	Path       string `json:"path"`
	Action     Action `json:"action"`
	Before     string `json:"before,omitempty"`
	After      string `json:"after,omitempty"`
	Disruptive string `json:"disruptive,omitempty"`
}

// foldPortName replaces the slashes inside a port name by '|' so field
// patterns see the name as one segment. Port settings are one segment, so
// the name is everything between "port/" and the last slash.
func foldPortName(p string) string {
	if !strings.HasPrefix(p, "port/") {
		return p
	}
	last := strings.LastIndexByte(p, '/')
	if last <= len("port/") || strings.IndexByte(p[len("port/"):last], '/') < 0 {
		return p
	}
	return "port/" + strings.ReplaceAll(p[len("port/"):last], "/", "|") + p[last:]
}

// owner is the scope a path belongs to: "port/Ethernet0" for port paths,
// "nic/ens1f0" for NIC paths, the first segment otherwise ("tc", "dscp").
// A live path absent from the desired state is removed only when desired
// owns its scope: fabctl owns the QoS tables as a whole, but never touches
// a port or NIC the spec does not name.
//
// Port names may contain '/' (EOS Ethernet1/1, NX-OS Ethernet1/1/1,
// SR Linux ethernet-1/1) and port settings are one segment, so a port's
// scope is its path without the last segment; NIC names (netdevs) have no
// '/', so a NIC's scope is its first two segments.
func owner(p string) string {
	i := strings.IndexByte(p, '/')
	if i < 0 {
		return p
	}
	switch p[:i] {
	case "port":
		if j := strings.LastIndexByte(p, '/'); j > i {
			return p[:j]
		}
		return p
	case "nic":
		if j := strings.IndexByte(p[i+1:], '/'); j >= 0 {
			return p[:i+1+j]
		}
		return p
	}
	return p[:i]
}

// NotSet is the live value of a setting the device does not have and has
// no sourced default for (an EOS DSCP code point its running-config does
// not list). Diff treats it as absence: a desired value is an addition,
// never an update, and no desired value is no change, never a removal.
const NotSet = "not set"

// dscpDefaultFor returns the default traffic class desired gives the DSCP
// code point path k ("<prefix>dscp/<n>"), when k is one.
func dscpDefaultFor(desired State, k string) (string, bool) {
	i := strings.LastIndex(k, "dscp/")
	if i < 0 || (i > 0 && k[i-1] != '/') {
		return "", false
	}
	if _, err := strconv.Atoi(k[i+len("dscp/"):]); err != nil {
		return "", false
	}
	def, ok := desired[k[:i]+"dscp/default"]
	return def, ok
}

// Diff compares desired with live state and returns the changes that make
// live equal desired, sorted by path.
//
// The maps are walked unsorted and only the (usually few) changes are
// sorted: a plan diffs millions of settings.
func Diff(desired, live State, fields []Field) []AttrChange {
	out, _ := diff(desired, live, fields, false)
	return out
}

// DiffTolerated is Diff that also returns the settings whose live value
// differs from the desired one but is equal under the field's tolerance
// (hardware quantisation): they are not changes, and plans list them so a
// reader sees why "146480" was accepted for "150000". Tolerated entries
// have Action Update, Before the live and After the desired value; both
// lists are sorted by path.
func DiffTolerated(desired, live State, fields []Field) (changes, tolerated []AttrChange) {
	return diff(desired, live, fields, true)
}

func diff(desired, live State, fields []Field, withTolerated bool) (out, tolerated []AttrChange) {
	m := newFieldMatcher(fields)
	found := 0 // live paths that desired has
	for k, want := range desired {
		have, ok := live[k]
		if ok {
			found++
			if have == want {
				continue
			}
		}
		f := m.lookup(k)
		switch {
		case !ok || have == NotSet:
			out = append(out, AttrChange{Path: k, Action: Create, After: want, Disruptive: f.disruptive("", want)})
		case !f.Equal(want, have):
			out = append(out, AttrChange{Path: k, Action: Update, Before: have, After: want, Disruptive: f.disruptive(have, want)})
		case withTolerated && !strings.HasPrefix(want, floorPrefix): // a floor met is the spec's own value, not a tolerance
			tolerated = append(tolerated, AttrChange{Path: k, Action: Update, Before: have, After: want})
		}
	}
	// Live paths desired does not have are removed where desired owns
	// their scope; usually there are none, and the scopes are not built.
	var owned map[string]bool
	if found < len(live) {
		owned = map[string]bool{}
		for k := range desired {
			owned[owner(k)] = true
		}
	}
	for k, have := range live {
		if owned == nil {
			break
		}
		if _, ok := desired[k]; ok || !owned[owner(k)] {
			continue
		}
		f := m.lookup(k)
		if have == NotSet {
			// Absent on the device and in the spec: nothing to remove. A
			// DSCP code point the normal form leaves out maps to the
			// default traffic class (PutDSCP): the apply adds it.
			if def, ok := dscpDefaultFor(desired, k); ok {
				out = append(out, AttrChange{Path: k, Action: Create, After: def, Disruptive: f.disruptive("", def)})
			}
			continue
		}
		out = append(out, AttrChange{Path: k, Action: Delete, Before: have, Disruptive: f.disruptive(have, "")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	sort.Slice(tolerated, func(i, j int) bool { return tolerated[i].Path < tolerated[j].Path })
	return out, tolerated
}

// ipTos2Prio is the kernel's ToS -> skb priority table (net/ipv4/route.c
// ip_tos2prio; TC_PRIO_BESTEFFORT 0, BULK 2, INTERACTIVE_BULK 4,
// INTERACTIVE 6 from include/uapi/linux/pkt_sched.h; ECN_OR_COST(c) is c).
var ipTos2Prio = [16]int{0, 0, 0, 0, 2, 2, 2, 2, 6, 6, 6, 6, 4, 4, 4, 4}

// RTTos2Priority is the kernel's rt_tos2priority (include/net/route.h):
// ip_tos2prio[IPTOS_TOS(tos) >> 1], IPTOS_TOS masking 0x1e. rdma_cm uses
// it to pick a RoCE connection's priority (cma.c iboe_tos_to_sl), so only
// 0, 2, 4 and 6 can come out.
func RTTos2Priority(tos int) int { return ipTos2Prio[(tos&0x1e)>>1] }

func onOffString(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// capped says whether any class caps its rate (then every class TC of a
// host NIC has a max_rate path, 0 for none).
// BufferHeadroom is the state value of a lossless receive buffer that
// holds the PFC headroom its link needs.
const BufferHeadroom = "headroom"

// ManagesBuffers says whether fabctl sizes the NIC's receive buffers: the
// spec asks for it (receive_buffers = "manual": the first sizing puts an
// mlx5 port in manual buffer mode for good, and its firmware stops sizing
// the buffers, e.g. after a speed change) on a RoCE NIC with lossless
// priorities on a link with a cable_length (the headroom grows with it).
// By default the firmware sizes them, as NVIDIA's nic-configuration-operator
// leaves them (it sets only the cable length, mlnx_qos --cable_len).
func (n *NIC) ManagesBuffers() bool {
	return n.ManualBuffers && n.RoCEMode != "" && len(n.PFC) > 0 && n.CableLength > 0
}

// Prio2Buffer is the NIC's receive buffer per priority when ManagesBuffers:
// each lossless priority on a buffer of its own, in priority order from
// buffer 1, and every other priority on buffer 0. A buffer is lossless
// as soon as one PFC priority maps to it (mlx5 en/port_buffer.c
// update_buffer_lossy), so a lossy priority sharing it would be paused
// too. With no lossy priority at all the first lossless one takes
// buffer 0. lossless lists the lossless buffers.
func (n *NIC) Prio2Buffer() (m [8]int, lossless []int) {
	pfc := [8]bool{}
	all := true
	for _, p := range n.PFC {
		if p >= 0 && p < 8 {
			pfc[p] = true
		}
	}
	for _, on := range pfc {
		all = all && on
	}
	next := 1
	if all {
		next = 0
	}
	for p := 0; p < 8; p++ {
		if pfc[p] {
			m[p] = next
			lossless = append(lossless, next)
			next++
		}
	}
	return m, lossless
}

func capped(tcs []TC) bool {
	for _, tc := range tcs {
		if tc.MaxRate > 0 {
			return true
		}
	}
	return false
}
