// Package host is the host driver: it reads, plans and applies a host's
// RDMA NIC settings through the kernel's own interfaces instead of the
// ip / dcb / mlnx_qos / ethtool / set_irq_affinity scripts:
//
//   - links (MTU, admin up) and addresses through rtnetlink
//     (vishvananda/netlink), touching only NICs the spec names and only
//     the addresses that differ; a NIC's RDMA VLAN interface with its
//     egress-qos-map (priority -> PCP), MTU and addresses (vlan.go);
//   - IEEE DCB (ETS, PFC, the DSCP APP table) through DCB netlink
//     (package dcbnl), read-modify-write one feature per message;
//   - 802.3x global pause through the ethtool ioctl (safchain/ethtool);
//   - DCQCN enable per priority (MLNX_OFED sysfs ecn/roce_np,
//     ecn/roce_rp), rdma_cm default RoCE mode and ToS (configfs), IRQ
//     affinity from the NIC's NUMA policy (/proc/irq, irqbalance stopped
//     when the spec says so), all read and set inside the host's own
//     sysfs view (sysns.go: a namespace host sees its namespace's sysfs);
//     sysfeat.go, ecn.go, rdmacm.go, irq.go;
//   - read-only findings (drivers.Reporter, findings.go): DCBX owner,
//     NUMA locality (numa.go), PCIe link and MaxReadReq (pcie.go), QP
//     sizing against the device's limits (qplimits.go);
//   - DCB drift: WatchDCB follows the kernel's RTNLGRP_DCB notifications
//     (watch.go), for `fabctl agent --watch`.
//
// Settings a device cannot have are reported absent by Read, never
// invented, and the driver is a drivers.Limiter: a veth has no DCB
// (EOPNOTSUPP), so the plan lists its DCB paths under "not expressible"
// with "eth1: no DCB support in the kernel driver (EOPNOTSUPP)" instead of
// planning changes that cannot apply (likewise DCQCN sysfs, rdma_cm
// configfs, IRQ affinity and global pause where the device has none). A
// change list that still holds such a path (a hand-made or old saved plan)
// is refused by Apply up front, before anything is touched.
//
// Transports: "local" and "netns:<name>" (handles are created inside the
// namespace); "ssh" and "ssh+netns:<name>" run `fabctl agent` on the host
// (transport_ssh.go, remote.go, package agent), which uses the local or
// netns transport there.
package host

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/host/dcbnl"
	"github.com/fabctl/fabctl/intent"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Driver is the host driver. One instance serves one run.
type Driver struct {
	mu sync.Mutex
	// unsupported remembers, per host and NIC, what Read found the device
	// cannot do, so Changes can say so in the plan.
	unsupported map[string]map[string]string // host -> path prefix -> reason
	// findings are Read's read-only observations per host (findings.go).
	findings map[string][]drivers.Finding
	// SSH tunes the transport of hosts reached over SSH (transport_ssh.go).
	SSH SSHOptions
}

// New returns a host driver.
func New() drivers.Driver {
	return &Driver{unsupported: map[string]map[string]string{}, findings: map[string][]drivers.Finding{}}
}

var _ drivers.Driver = (*Driver)(nil)

// Name is "host".
func (d *Driver) Name() string { return "host" }

// Capabilities: the driver rolls back by re-applying the state it saw
// before the transaction.
func (d *Driver) Capabilities() drivers.Capabilities { return drivers.Capabilities{Rollback: true} }

// Fields marks the disruptive host settings.
func (d *Driver) Fields() []intent.Field {
	return []intent.Field{
		{Pattern: "nic/*/pfc", Disruptive: "a PFC change flaps the link on mlx5"},
		{Pattern: "nic/*/mtu", Disruptive: "an MTU change restarts the NIC's queues (brief traffic loss, RDMA QPs re-negotiate path MTU)"},
		{Pattern: "nic/*/addresses", Disruptive: "removing an address drops the connections that use it"},
		{Pattern: "nic/*/vlan/addresses", Disruptive: "removing an address drops the connections that use it"},
		{Pattern: "nic/*/vlan/mtu", Disruptive: "an MTU change restarts the VLAN interface's queues (RDMA QPs re-negotiate path MTU)"},
		{Pattern: "nic/*/vlan/id", Disruptive: "the id of a VLAN interface is fixed: changing it re-creates the interface, whose addresses and RDMA GIDs vanish meanwhile"},
	}
}

func hostOf(t drivers.Target) (*intent.Host, error) {
	h, ok := t.Intent.(*intent.Host)
	if !ok || h == nil {
		return nil, fmt.Errorf("host driver: %s has no host intent", t.Device.Name)
	}
	return h, nil
}

// Read returns the live state of what the spec manages on the host.
func (d *Driver) Read(ctx context.Context, t drivers.Target) (intent.State, error) {
	h, err := hostOf(t)
	if err != nil {
		return nil, err
	}
	if h.Connect.Kind == "ssh" {
		return d.readRemote(ctx, t, h)
	}
	s, err := open(h)
	if err != nil {
		return nil, err
	}
	defer s.close()
	st := intent.State{}
	unsup := map[string]string{}
	st["irqbalance"] = readIRQBalance(h.IRQBalance)
	if h.NCCLEnvFile != "" {
		for k, v := range readEnvFile(h.NCCLEnvFile) {
			st["nccl/"+k] = v
		}
	}
	var fs []drivers.Finding
	for i := range h.NICs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := readNIC(s, &h.NICs[i], st, unsup, &fs); err != nil {
			return nil, err
		}
	}
	sysFs, err := readSys(s, h, st, unsup) // sysfs, configfs, procfs (sysfeat.go)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.unsupported[h.Name] = unsup
	d.findings[h.Name] = append(fs, sysFs...)
	d.mu.Unlock()
	return st, nil
}

func readNIC(s *session, n *intent.NIC, st intent.State, unsup map[string]string, fs *[]drivers.Finding) error {
	p := "nic/" + n.Name + "/"
	link, err := s.nl.LinkByName(n.Name)
	if err != nil {
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			unsup[p] = fmt.Sprintf("%s: no such network device on %s", n.Name, s.name)
			return nil // absent: the plan shows every setting as missing
		}
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	st[p+"mtu"] = strconv.Itoa(link.Attrs().MTU)
	if n.VLANName != "" {
		// The addresses are the VLAN interface's (vlan.go); the NIC's own
		// are not fabctl's then.
		if err := readVLAN(s, n, link, st, unsup); err != nil {
			return err
		}
	} else {
		addrs, err := readAddrs(s, link)
		if err != nil {
			return fmt.Errorf("%s: addresses: %w", n.Name, err)
		}
		st[p+"addresses"] = strings.Join(addrs, ",")
	}
	if n.RoCEMode == "" {
		return nil // iWARP / InfiniBand: no host DCB
	}
	ieee, err := s.dcb.IEEE(n.Name)
	switch {
	case errors.Is(err, dcbnl.ErrNotSupported):
		unsup[p+"dcb"] = n.Name + ": no DCB support in the kernel driver (EOPNOTSUPP)"
	case err != nil:
		return err
	default:
		putDCB(st, p, ieee)
		if f := dcbxFinding(n.Name, ieee); f != nil {
			*fs = append(*fs, *f)
		}
	}
	if pause, err := readPause(s, n.Name); err != nil {
		unsup[p+"pause"] = err.Error()
	} else {
		st[p+"pause"] = pause
	}
	return nil // ECN, rdma_cm, IRQs: readSys
}

func readAddrs(s *session, link netlink.Link) ([]string, error) {
	list, err := s.nl.AddrList(link, netlink.FAMILY_ALL)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(list))
	for _, a := range list {
		if a.Scope != unix.RT_SCOPE_UNIVERSE || a.IPNet == nil {
			continue // link-local and host-scope addresses are the kernel's
		}
		pf, err := netip.ParsePrefix(a.IPNet.String())
		if err != nil {
			continue
		}
		out = append(out, pf.String())
	}
	sort.Strings(out)
	return out, nil
}

// putDCB writes the DCB part of a NIC's state as Flatten does: TC =
// priority, a TC is lossless when PFC is on for its priority.
func putDCB(st intent.State, p string, ieee *dcbnl.IEEE) {
	var pfcEn uint8
	if ieee.PFC != nil {
		pfcEn = ieee.PFC.Enable
	}
	var prios []string
	for i := 0; i < 8; i++ {
		if pfcEn&(1<<i) != 0 {
			prios = append(prios, strconv.Itoa(i))
		}
	}
	st[p+"pfc"] = strings.Join(prios, ",")
	tbl := dcbnl.DSCPApps(ieee.Apps)
	trust := "pcp"
	for _, v := range tbl {
		if v >= 0 {
			trust = "dscp" // mlx5: DSCP app entries imply DSCP trust
			break
		}
	}
	st[p+"trust"] = trust
	if trust == "dscp" {
		var table [64]int
		for i, v := range tbl {
			if v > 0 {
				table[i] = v // unmapped code points go to priority 0
			}
		}
		intent.PutDSCP(st, p, &table)
	}
	if ieee.ETS != nil {
		used := [8]bool{}
		for _, tc := range ieee.ETS.PrioTC {
			if tc < 8 {
				used[tc] = true
			}
		}
		for tc := 0; tc < 8; tc++ {
			if !used[tc] {
				continue
			}
			k := p + "tc/" + strconv.Itoa(tc) + "/"
			st[k+"lossless"] = strconv.FormatBool(pfcEn&(1<<tc) != 0)
			if ieee.ETS.TCTSA[tc] == dcbnl.TSAETS {
				st[k+"sched"] = "ets"
				st[k+"bandwidth"] = strconv.Itoa(int(ieee.ETS.TCTxBW[tc]))
			} else {
				st[k+"sched"] = "strict"
			}
		}
	}
}

func readPause(s *session, name string) (string, error) {
	e, err := s.ethtool()
	if err != nil {
		return "", fmt.Errorf("%s: ethtool: %w", name, err)
	}
	pp, err := e.GetPause(name)
	if err != nil {
		if errors.Is(err, unix.EOPNOTSUPP) {
			return "", fmt.Errorf("%s: global pause not supported by the driver (EOPNOTSUPP)", name)
		}
		return "", fmt.Errorf("%s: ethtool get pause: %w", name, err)
	}
	return strconv.FormatBool(pp.RxPause != 0 || pp.TxPause != 0), nil
}

// readIRQBalance reports the desired value when it holds ("keep" always
// holds: fabctl never starts irqbalance), "running" when "stop" is wanted
// and an irqbalance process exists.
func readIRQBalance(want string) string {
	if want != "stop" {
		return want
	}
	if irqbalanceRunning() {
		return "running"
	}
	return "stop"
}

func readEnvFile(path string) map[string]string {
	out := map[string]string{}
	f, err := os.Open(path)
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return out
}

// nicOf returns the NIC name of a "nic/<n>/..." path.
func nicOf(p string) string {
	rest, ok := strings.CutPrefix(p, "nic/")
	if !ok {
		return ""
	}
	n, _, _ := strings.Cut(rest, "/")
	return n
}

// feature groups a path into the step that settles it.
func feature(p string) string {
	if n := nicOf(p); n != "" {
		rest := strings.TrimPrefix(p, "nic/"+n+"/")
		switch {
		case rest == "mtu":
			return "mtu"
		case rest == "addresses":
			return "addresses"
		case strings.HasPrefix(rest, "vlan/"):
			return "vlan" // vlan.go
		case rest == "pfc":
			return "pfc"
		case rest == "trust" || strings.HasPrefix(rest, "dscp/"):
			return "app"
		case strings.HasPrefix(rest, "tc/") && strings.Contains(rest, "/ecn/"):
			return "tc-ecn"
		case strings.HasPrefix(rest, "tc/") && strings.HasSuffix(rest, "/lossless"):
			return "pfc"
		case strings.HasPrefix(rest, "tc/"):
			return "ets"
		default:
			return rest // pause, ecn, roce_mode, tos, irq_cpus
		}
	}
	if strings.HasPrefix(p, "nccl/") {
		return "nccl"
	}
	return p // irqbalance
}

// featureOrder is the apply order within a NIC: link first, then DCB in
// the kernel's own order (ETS before PFC before APP), then the rest.
var featureOrder = map[string]int{"mtu": 0, "addresses": 1, "vlan": 1, "ets": 2, "pfc": 3, "app": 4, "pause": 5,
	"ecn": 6, "tc-ecn": 7, "roce_mode": 8, "tos": 9, "irq_cpus": 10}

// applicable says whether this build can apply a feature.
func applicable(f string) bool {
	switch f {
	case "mtu", "addresses", "vlan", "ets", "pfc", "app", "pause", "nccl", "irqbalance",
		"ecn", "roce_mode", "tos", "irq_cpus": // the last four: sysfeat.go
		return true
	}
	return false
}

func notBuilt(f, nic string) string {
	switch f {
	case "tc-ecn":
		return nic + ": ECN marking thresholds (tc/*/ecn/*) are switch queue settings; a host NIC has none (DCQCN is nic/" + nic + "/ecn)"
	}
	return nic + ": " + f + " cannot be applied by this build"
}

// Changes groups the diff into one step per NIC feature, with the netlink
// operations as payload.
func (d *Driver) Changes(t drivers.Target, diff []intent.AttrChange, desired intent.State) ([]drivers.Change, error) {
	h, err := hostOf(t)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	unsup := d.unsupported[h.Name]
	d.mu.Unlock()
	where := ""
	if h.Connect.Netns != "" { // netns:NAME, or ssh+netns:NAME on the remote host
		where = " (netns " + h.Connect.Netns + ")"
	}
	type key struct{ nic, feat string }
	groups := map[key][]intent.AttrChange{}
	var keys []key
	for _, c := range diff {
		k := key{nicOf(c.Path), feature(c.Path)}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], c)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].nic != keys[j].nic {
			return keys[i].nic < keys[j].nic
		}
		oi, oj := featureOrder[keys[i].feat], featureOrder[keys[j].feat]
		if oi != oj {
			return oi < oj
		}
		return keys[i].feat < keys[j].feat
	})
	nics := map[string]*intent.NIC{}
	for i := range h.NICs {
		nics[h.NICs[i].Name] = &h.NICs[i]
	}
	out := make([]drivers.Change, 0, len(keys))
	for _, k := range keys {
		cs := groups[k]
		ch := drivers.Change{}
		for _, c := range cs {
			ch.Paths = append(ch.Paths, c.Path)
			if c.Disruptive != "" && ch.Disruptive == "" {
				ch.Disruptive = c.Disruptive
			}
		}
		n := nics[k.nic]
		ch.Summary, ch.Payload = describe(k.nic, k.feat, n, h, cs, where)
		if why := blocked(unsup, k.nic, k.feat); why != "" {
			ch.Summary += " — cannot apply: " + why
		} else if k.nic != "" && !applicable(k.feat) {
			ch.Summary += " — cannot apply: " + notBuilt(k.feat, k.nic)
		}
		out = append(out, ch)
	}
	return out, nil
}

var _ drivers.Limiter = (*Driver)(nil)

// Unexpressible reports the desired NIC settings that Read found the
// device cannot have, with the reason: DCB (ETS, PFC, trust and the DSCP
// APP table) on a NIC whose kernel driver has no DCB (EOPNOTSUPP, e.g. a
// veth), global pause without ethtool pause support, DCQCN without the
// MLNX_OFED sysfs, the rdma_cm default RoCE mode/ToS without configfs, IRQ
// affinity on a device without IRQs. Plans list them instead of planning
// changes that cannot apply and would never converge. A NIC that does
// not exist at all is not "unexpressible": its settings stay planned, and
// applying them fails naming the missing device. On a NIC with DCB (and
// the sysfs) nothing is reported.
func (d *Driver) Unexpressible(t drivers.Target, desired intent.State) map[string]string {
	h, err := hostOf(t)
	if err != nil {
		return nil
	}
	d.mu.Lock()
	unsup := d.unsupported[h.Name]
	d.mu.Unlock()
	if len(unsup) == 0 {
		return nil
	}
	out := map[string]string{}
	for k := range desired {
		nic := nicOf(k)
		if nic == "" {
			continue
		}
		if _, absent := unsup["nic/"+nic+"/"]; absent {
			continue
		}
		if why := blocked(unsup, nic, feature(k)); why != "" {
			out[k] = why
		}
	}
	return out
}

// blocked returns why Read found a NIC feature impossible ("" if not).
func blocked(unsup map[string]string, nic, feat string) string {
	if nic == "" {
		return ""
	}
	p := "nic/" + nic + "/"
	if why, ok := unsup[p]; ok {
		return why
	}
	switch feat {
	case "ets", "pfc", "app":
		return unsup[p+"dcb"]
	case "pause", "ecn", "roce_mode", "tos", "irq_cpus", "vlan":
		return unsup[p+feat]
	}
	return ""
}

func describe(nic, feat string, n *intent.NIC, h *intent.Host, cs []intent.AttrChange, where string) (string, []string) {
	if n == nil && nic != "" {
		return "nic " + nic + " is not in the spec", nil
	}
	switch feat {
	case "mtu":
		return fmt.Sprintf("%s: MTU %d", nic, n.MTU), []string{
			fmt.Sprintf("ip link set dev %s mtu %d%s", nic, n.MTU, where),
			fmt.Sprintf("ip link set dev %s up%s", nic, where)}
	case "addresses":
		var pl []string
		add, del := addrDelta(cs[0].Before, cs[0].After)
		for _, a := range del {
			pl = append(pl, fmt.Sprintf("ip addr del %s dev %s%s", a, nic, where))
		}
		for _, a := range add {
			pl = append(pl, fmt.Sprintf("ip addr add %s dev %s%s", a, nic, where))
		}
		return fmt.Sprintf("%s: addresses %s", nic, strings.Join(n.Addresses, ",")), pl
	case "ets":
		e := desiredETS(n)
		return fmt.Sprintf("%s: ETS prio-tc/tsa/bandwidth", nic), []string{fmt.Sprintf(
			"dcb ieee ets dev %s prio_tc %v tc_tsa %v tc_bw %v (DCB_CMD_IEEE_SET{ETS}, read-modify-write)%s", nic, e.PrioTC, e.TCTSA, e.TCTxBW, where)}
	case "pfc":
		return fmt.Sprintf("%s: PFC on priorities %q", nic, intsList(n.PFC)), []string{fmt.Sprintf(
			"dcb ieee pfc dev %s enable %s (DCB_CMD_IEEE_SET{PFC}, delay kept)%s", nic, orNone(intsList(n.PFC)), where)}
	case "app":
		want := desiredApps(n)
		return fmt.Sprintf("%s: trust %s, %d DSCP app entries", nic, n.Trust, len(want)), []string{fmt.Sprintf(
			"dcb ieee app dev %s replace dscp-prio table (%d entries; DCB_CMD_IEEE_DEL stale + DCB_CMD_IEEE_SET new)%s", nic, len(want), where)}
	case "vlan":
		return describeVLAN(nic, n, cs, where)
	case "pause":
		return fmt.Sprintf("%s: global pause %s", nic, onOff(n.Pause)), []string{fmt.Sprintf(
			"ethtool -A %s rx %s tx %s%s", nic, onOff(n.Pause), onOff(n.Pause), where)}
	case "nccl":
		return "NCCL env file " + h.NCCLEnvFile, []string{"write " + h.NCCLEnvFile}
	case "irqbalance":
		return "irqbalance " + h.IRQBalance, []string{"systemctl stop irqbalance (SIGTERM to irqbalance without systemd)"}
	}
	if sum, pl, ok := describeSys(nic, feat, n, h, where); ok {
		return sum, pl
	}
	var pl []string
	for _, c := range cs {
		pl = append(pl, fmt.Sprintf("set %s = %s", c.Path, c.After))
	}
	return fmt.Sprintf("%s: %s", nic, feat), pl
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func intsList(v []int) string {
	parts := make([]string, len(v))
	for i, x := range v {
		parts[i] = strconv.Itoa(x)
	}
	return strings.Join(parts, ",")
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func addrDelta(before, after string) (add, del []string) {
	have := map[string]bool{}
	for _, a := range splitList(before) {
		have[a] = true
	}
	want := map[string]bool{}
	for _, a := range splitList(after) {
		want[a] = true
		if !have[a] {
			add = append(add, a)
		}
	}
	for _, a := range splitList(before) {
		if !want[a] {
			del = append(del, a)
		}
	}
	return add, del
}

// desiredETS is the NIC's ETS: priority p -> TC p for the spec's classes,
// other priorities -> the lowest class, unused TCs ETS with 0 % (mlx5:
// ETS bandwidths must sum to 100 and non-ETS TCs must have 0 %).
func desiredETS(n *intent.NIC) dcbnl.ETS {
	var e dcbnl.ETS
	present := [8]bool{}
	low := 0
	for i, tc := range n.TCs {
		if tc.TC < 0 || tc.TC > 7 {
			continue
		}
		present[tc.TC] = true
		if i == 0 {
			low = tc.TC
		}
	}
	for p := 0; p < 8; p++ {
		e.PrioTC[p] = uint8(low)
		if present[p] {
			e.PrioTC[p] = uint8(p)
		}
		e.TCTSA[p] = dcbnl.TSAETS
	}
	for _, tc := range n.TCs {
		if tc.TC < 0 || tc.TC > 7 {
			continue
		}
		if tc.Strict {
			e.TCTSA[tc.TC] = dcbnl.TSAStrict
		} else {
			e.TCTxBW[tc.TC] = uint8(tc.Bandwidth)
		}
	}
	return e
}

func desiredPFC(n *intent.NIC) uint8 {
	var en uint8
	for _, p := range n.PFC {
		if p >= 0 && p < 8 {
			en |= 1 << p
		}
	}
	return en
}

// desiredApps is the DSCP APP table for trust dscp: every code point whose
// priority is not 0 (unmapped code points are priority 0), or all 64 when
// every one maps to 0; none for trust pcp.
func desiredApps(n *intent.NIC) []dcbnl.App {
	if n.Trust != "dscp" {
		return nil
	}
	var out []dcbnl.App
	for d, tc := range n.DSCPToTC {
		if tc > 0 && tc < 8 {
			out = append(out, dcbnl.App{Selector: dcbnl.SelDSCP, Priority: uint8(tc), Protocol: uint16(d)})
		}
	}
	if len(out) == 0 {
		for d := 0; d < 64; d++ {
			out = append(out, dcbnl.App{Selector: dcbnl.SelDSCP, Protocol: uint16(d)})
		}
	}
	return out
}

// snapshot is a NIC's state before a transaction, for restore.
type snapshot struct {
	NIC   string      `json:"nic"`
	MTU   int         `json:"mtu"`
	Up    bool        `json:"up"`
	Addrs []string    `json:"addresses"`
	DCB   *dcbnl.IEEE `json:"dcb,omitempty"`
	Pause *bool       `json:"pause,omitempty"`
	VLAN  *vlanSnap   `json:"vlan,omitempty"` // vlan.go
}

// dcbOf returns the DCB state prepare read for a NIC (nil if none).
func (t *token) dcbOf(nic string) *dcbnl.IEEE {
	for i := range t.NICs {
		if t.NICs[i].NIC == nic {
			return t.NICs[i].DCB
		}
	}
	return nil
}

type token struct {
	NICs    []snapshot `json:"nics"`
	EnvFile string     `json:"env_file,omitempty"`
	Env     *string    `json:"env,omitempty"` // prior content; nil: file absent
	// Sys are the sysfs/configfs/procfs snapshots (sysfeat.go);
	// IRQBalance says the transaction stopped irqbalance.
	Sys        []sysSnap `json:"sys,omitempty"`
	IRQBalance bool      `json:"irqbalance_stopped,omitempty"`
}

// Apply applies the change list as one transaction. Everything the host
// cannot do is found before anything is touched; a failure part-way
// restores the NICs' prior state, or returns a PartialError.
func (d *Driver) Apply(ctx context.Context, t drivers.Target, changes []drivers.Change, _ drivers.ApplyOptions) (drivers.Result, error) {
	h, err := hostOf(t)
	if err != nil {
		return drivers.Result{}, err
	}
	if h.Connect.Kind == "ssh" {
		return d.applyRemote(ctx, t, h, changes)
	}
	s, err := open(h)
	if err != nil {
		return drivers.Result{}, err
	}
	defer s.close()
	nics := map[string]*intent.NIC{}
	for i := range h.NICs {
		nics[h.NICs[i].Name] = &h.NICs[i]
	}
	// What to do, per NIC and feature, and the pre-checks.
	todo := map[string]map[string]bool{}
	var order []string
	var problems []string
	for _, ch := range changes {
		for _, p := range ch.Paths {
			nic, f := nicOf(p), feature(p)
			if nic != "" && nics[nic] == nil {
				problems = append(problems, fmt.Sprintf("%s: not in the spec", nic))
				continue
			}
			if nic != "" && !applicable(f) {
				problems = append(problems, notBuilt(f, nic))
				continue
			}
			if todo[nic] == nil {
				todo[nic] = map[string]bool{}
				order = append(order, nic)
			}
			todo[nic][f] = true
		}
	}
	tok := token{}
	for _, nic := range order {
		if nic == "" {
			continue
		}
		snap, probs := d.prepare(s, nic, todo[nic])
		problems = append(problems, probs...)
		if snap != nil && todo[nic]["vlan"] {
			snap.VLAN, probs = prepareVLAN(s, nics[nic])
			problems = append(problems, probs...)
		}
		if snap != nil {
			tok.NICs = append(tok.NICs, *snap)
		}
	}
	sysSnaps, probs := prepareSys(s, h, todo)
	problems = dedup(append(problems, probs...))
	tok.Sys = sysSnaps
	if len(problems) > 0 {
		return drivers.Result{}, fmt.Errorf("%s: nothing applied: %s", h.Name, strings.Join(problems, "; "))
	}
	if todo[""]["nccl"] {
		tok.EnvFile = h.NCCLEnvFile
		if b, err := os.ReadFile(h.NCCLEnvFile); err == nil {
			v := string(b)
			tok.Env = &v
		}
	}
	raw, _ := json.Marshal(tok)
	res := drivers.Result{Token: string(raw)}
	fail := func(err error) (drivers.Result, error) {
		if rerr := restore(s, h, tok); rerr != nil {
			return drivers.Result{}, &drivers.PartialError{Device: t.Device.Addr(), Err: fmt.Errorf("%v; restore: %v", err, rerr)}
		}
		return drivers.Result{}, err
	}
	if todo[""]["irqbalance"] && h.IRQBalance == "stop" {
		// Before the IRQs are pinned, or irqbalance moves them again.
		stopped, err := stopIRQBalance()
		tok.IRQBalance = stopped
		raw, _ = json.Marshal(tok)
		res.Token = string(raw)
		if err != nil {
			return fail(err)
		}
	}
	for _, nic := range order {
		if nic == "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		if err := applyNIC(s, nics[nic], todo[nic], tok.dcbOf(nic)); err != nil {
			return fail(err)
		}
	}
	if err := applySys(s, h, todo); err != nil {
		return fail(err)
	}
	if todo[""]["nccl"] {
		if err := writeEnvFile(h.NCCLEnvFile, h.NCCL); err != nil {
			return fail(err)
		}
	}
	return res, nil
}

func dedup(v []string) []string {
	seen := map[string]bool{}
	out := v[:0]
	for _, s := range v {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// prepare snapshots a NIC and checks that every feature to apply is
// possible on it.
func (d *Driver) prepare(s *session, nic string, feats map[string]bool) (*snapshot, []string) {
	link, err := s.nl.LinkByName(nic)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: no such network device on %s", nic, s.name)}
	}
	snap := &snapshot{NIC: nic, MTU: link.Attrs().MTU, Up: link.Attrs().Flags&unixIFFUp != 0}
	if snap.Addrs, err = readAddrs(s, link); err != nil {
		return nil, []string{fmt.Sprintf("%s: addresses: %v", nic, err)}
	}
	var probs []string
	if feats["ets"] || feats["pfc"] || feats["app"] {
		ieee, err := s.dcb.IEEE(nic)
		if err != nil {
			probs = append(probs, err.Error())
		} else {
			snap.DCB = ieee
		}
	}
	if feats["pause"] {
		v, err := readPause(s, nic)
		if err != nil {
			probs = append(probs, err.Error())
		} else {
			b := v == "true"
			snap.Pause = &b
		}
	}
	return snap, probs
}

const unixIFFUp = 1 // net.FlagUp

// applyNIC applies a NIC's netlink features. cur is its DCB state as the
// transaction's prepare read it: ETS, PFC and APP are each set from it
// (read-modify-write, one feature per message) without reading again.
func applyNIC(s *session, n *intent.NIC, feats map[string]bool, cur *dcbnl.IEEE) error {
	link, err := s.nl.LinkByName(n.Name)
	if err != nil {
		return fmt.Errorf("%s: %w", n.Name, err)
	}
	if feats["mtu"] {
		if err := s.nl.LinkSetMTU(link, n.MTU); err != nil {
			return fmt.Errorf("%s: set mtu %d: %w", n.Name, n.MTU, err)
		}
		if err := s.nl.LinkSetUp(link); err != nil {
			return fmt.Errorf("%s: set up: %w", n.Name, err)
		}
	}
	if feats["addresses"] {
		if err := setAddrs(s, link, n.Addresses); err != nil {
			return err
		}
	}
	if feats["vlan"] { // after the NIC's MTU: a VLAN's MTU cannot exceed it
		if err := applyVLAN(s, n); err != nil {
			return err
		}
	}
	if (feats["ets"] || feats["pfc"] || feats["app"]) && cur == nil {
		if cur, err = s.dcb.IEEE(n.Name); err != nil {
			return err
		}
	}
	if feats["ets"] {
		want := desiredETS(n)
		var e dcbnl.ETS
		if cur.ETS != nil {
			e = *cur.ETS
		}
		before := e
		e.PrioTC, e.TCTSA, e.TCTxBW = want.PrioTC, want.TCTSA, want.TCTxBW
		if e != before || cur.ETS == nil {
			if err := s.dcb.SetETS(n.Name, &e); err != nil {
				return err
			}
		}
	}
	if feats["pfc"] {
		var p dcbnl.PFC
		if cur.PFC != nil {
			p = *cur.PFC // keeps the delay (cable length)
		}
		if en := desiredPFC(n); en != p.Enable || cur.PFC == nil {
			p.Enable = en
			if err := s.dcb.SetPFC(n.Name, &p); err != nil {
				return err
			}
		}
	}
	if feats["app"] {
		if err := setAppsFrom(s, n.Name, cur, desiredApps(n)); err != nil {
			return err
		}
	}
	if feats["pause"] {
		if err := setPause(s, n.Name, n.Pause); err != nil {
			return err
		}
	}
	return nil
}

func setAddrs(s *session, link netlink.Link, want []string) error {
	name := link.Attrs().Name
	have, err := readAddrs(s, link)
	if err != nil {
		return fmt.Errorf("%s: addresses: %w", name, err)
	}
	add, del := addrDelta(strings.Join(have, ","), strings.Join(want, ","))
	for _, a := range del {
		addr, err := netlink.ParseAddr(a)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := s.nl.AddrDel(link, addr); err != nil {
			return fmt.Errorf("%s: ip addr del %s: %w", name, a, err)
		}
	}
	for _, a := range add {
		addr, err := netlink.ParseAddr(a)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := s.nl.AddrAdd(link, addr); err != nil {
			return fmt.Errorf("%s: ip addr add %s: %w", name, a, err)
		}
	}
	return nil
}

// setApps makes the DSCP APP entries exactly want: delete stale entries,
// add missing ones (non-DSCP entries are left alone).
func setApps(s *session, nic string, want []dcbnl.App) error {
	st, err := s.dcb.IEEE(nic)
	if err != nil {
		return err
	}
	return setAppsFrom(s, nic, st, want)
}

// setAppsFrom is setApps from a state just read.
func setAppsFrom(s *session, nic string, st *dcbnl.IEEE, want []dcbnl.App) error {
	var err error
	wantSet := map[dcbnl.App]bool{}
	for _, a := range want {
		wantSet[a] = true
	}
	haveSet := map[dcbnl.App]bool{}
	var del []dcbnl.App
	for _, a := range st.Apps {
		if a.Selector != dcbnl.SelDSCP {
			continue
		}
		haveSet[a] = true
		if !wantSet[a] {
			del = append(del, a)
		}
	}
	var add []dcbnl.App
	for _, a := range want {
		if !haveSet[a] {
			add = append(add, a)
		}
	}
	// Add before delete: on mlx5 deleting the last DSCP entry switches the
	// port back to PCP trust for a moment.
	if err := s.dcb.AddApps(nic, add); err != nil {
		return err
	}
	if len(add) > 0 && len(del) > 0 {
		// mlx5 keeps one priority per DSCP: adding 26:5 already removed
		// 26:4, and deleting it again fails with ENOENT. The generic
		// table keeps both. Delete what is still there.
		if st, err = s.dcb.IEEE(nic); err != nil {
			return err
		}
		present := map[dcbnl.App]bool{}
		for _, a := range st.Apps {
			present[a] = true
		}
		kept := del[:0]
		for _, a := range del {
			if present[a] {
				kept = append(kept, a)
			}
		}
		del = kept
	}
	return s.dcb.DelApps(nic, del)
}

func setPause(s *session, nic string, on bool) error {
	e, err := s.ethtool()
	if err != nil {
		return fmt.Errorf("%s: ethtool: %w", nic, err)
	}
	pp, err := e.GetPause(nic)
	if err != nil {
		return fmt.Errorf("%s: ethtool get pause: %w", nic, err)
	}
	v := uint32(0)
	if on {
		v = 1
	}
	pp.RxPause, pp.TxPause = v, v
	if _, err := e.SetPause(nic, pp); err != nil {
		return fmt.Errorf("%s: ethtool set pause: %w", nic, err)
	}
	return nil
}

func writeEnvFile(path string, env map[string]string) error {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString("# written by fabctl: NCCL settings for this fabric\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, env[k])
	}
	tmp := path + ".fabctl-tmp"
	if err := os.WriteFile(tmp, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("nccl env file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("nccl env file: %w", err)
	}
	return nil
}

// restore puts the NICs of a token back as they were.
func restore(s *session, h *intent.Host, tok token) error {
	var errs []error
	errs = append(errs, restoreSys(s, h, tok.Sys))
	if tok.IRQBalance {
		errs = append(errs, startIRQBalance())
	}
	for _, sn := range tok.NICs {
		link, err := s.nl.LinkByName(sn.NIC)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if link.Attrs().MTU != sn.MTU {
			if err := s.nl.LinkSetMTU(link, sn.MTU); err != nil {
				errs = append(errs, fmt.Errorf("%s: mtu: %w", sn.NIC, err))
			}
		}
		if !sn.Up && link.Attrs().Flags&unixIFFUp != 0 {
			if err := s.nl.LinkSetDown(link); err != nil {
				errs = append(errs, fmt.Errorf("%s: down: %w", sn.NIC, err))
			}
		}
		if err := setAddrs(s, link, sn.Addrs); err != nil {
			errs = append(errs, err)
		}
		if sn.DCB != nil {
			if sn.DCB.ETS != nil {
				errs = append(errs, s.dcb.UpdateETS(sn.NIC, func(e *dcbnl.ETS) { *e = *sn.DCB.ETS }))
			}
			if sn.DCB.PFC != nil {
				errs = append(errs, s.dcb.UpdatePFC(sn.NIC, func(p *dcbnl.PFC) { p.Enable = sn.DCB.PFC.Enable }))
			}
			var dscp []dcbnl.App
			for _, a := range sn.DCB.Apps {
				if a.Selector == dcbnl.SelDSCP {
					dscp = append(dscp, a)
				}
			}
			errs = append(errs, setApps(s, sn.NIC, dscp))
		}
		if sn.Pause != nil {
			errs = append(errs, setPause(s, sn.NIC, *sn.Pause))
		}
		if sn.VLAN != nil { // after the NIC's MTU, as in applyNIC
			errs = append(errs, restoreVLAN(s, sn.NIC, sn.VLAN))
		}
	}
	if tok.EnvFile != "" {
		if tok.Env == nil {
			if err := os.Remove(tok.EnvFile); err != nil && !os.IsNotExist(err) {
				errs = append(errs, err)
			}
		} else if err := os.WriteFile(tok.EnvFile, []byte(*tok.Env), 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Confirm: the host driver commits at once; nothing is pending.
func (d *Driver) Confirm(ctx context.Context, t drivers.Target, r drivers.Result) error { return nil }

// Rollback re-applies the state the transaction saw before it changed
// anything.
func (d *Driver) Rollback(ctx context.Context, t drivers.Target, r drivers.Result) error {
	h, err := hostOf(t)
	if err != nil {
		return err
	}
	if h.Connect.Kind == "ssh" {
		return d.rollbackRemote(ctx, t, h, r)
	}
	var tok token
	if err := json.Unmarshal([]byte(r.Token), &tok); err != nil {
		return fmt.Errorf("%s: rollback token: %w", h.Name, err)
	}
	s, err := open(h)
	if err != nil {
		return err
	}
	defer s.close()
	return restore(s, h, tok)
}
