package intent

import (
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
)

const small = `
fabric "t" {}
switch "leaf1" {
  platform = "sonic"
  address  = "192.0.2.1"
  port "Ethernet10" {}
  port "Ethernet2" {
    mtu = 9100
  }
}
host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    addresses = ["10.0.0.1/31"]
  }
}
link {
  endpoints    = ["leaf1:Ethernet2", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}
`

func compile(t *testing.T, src string) *Fabric {
	t.Helper()
	return Compile(testutil.LoadSrc(t, src))
}

func TestCompile(t *testing.T) {
	f := compile(t, small)
	sw := f.Switches[0]
	if sw.Ports[0].Name != "Ethernet2" || sw.Ports[1].Name != "Ethernet10" {
		t.Errorf("natural port order: %v", sw.Ports)
	}
	p := sw.Ports[0]
	if p.MTU != 9100 || strings.Join(strings.Fields(intsString(p.PFC)), "") != "3" || !p.Watchdog || p.Peer != "h1:eth1" || p.CableLength != 3 {
		t.Errorf("port %+v", p)
	}
	if len(sw.TCs) != 3 || !sw.TCs[1].Lossless || sw.TCs[1].TC != 3 || sw.TCs[2].TC != 6 || !sw.TCs[2].Strict {
		t.Errorf("tcs %+v", sw.TCs)
	}
	h := f.Hosts[0]
	n := h.NICs[0]
	if h.RDMATos != 106 || n.RoCEMode != "v2" || !n.ECN || intsString(n.ECNPrios) != "0,1,2,3,4,5,6,7" || n.MTU != 9000 {
		t.Errorf("host %+v nic %+v", h, n)
	}
	if h.NCCL["NCCL_IB_TC"] != "106" || h.NCCL["NCCL_IB_HCA"] != "mlx5_0" {
		t.Errorf("nccl %v", h.NCCL)
	}
	st := sw.Flatten()
	want := map[string]string{
		"trust": "dscp", "dscp/26": "3", "dscp/48": "6", "dscp/default": "0",
		"tc/3/lossless": "true", "tc/3/bandwidth": "50", "tc/3/ecn/min": "150000", "tc/6/sched": "strict",
		"pfcwd/detect": "200ms", "port/Ethernet2/mtu": "9100", "port/Ethernet2/pfc": "3", "port/Ethernet2/cable": "3m",
	}
	for k, v := range want {
		if st[k] != v {
			t.Errorf("%s = %q, want %q", k, st[k], v)
		}
	}
	hs := h.Flatten()
	if hs["nic/eth1/pfc"] != "3" || hs["nic/eth1/dscp/26"] != "3" || hs["nic/eth1/tos"] != "106" || hs["nic/eth1/addresses"] != "10.0.0.1/31" {
		t.Errorf("host state %v", hs)
	}
}

func TestDiff(t *testing.T) {
	fields := []Field{
		{Pattern: "tc/*/ecn/*", Tolerance: 0.05},
		{Pattern: "port/*/pfc", Disruptive: "PFC change flaps the link"},
	}
	desired := State{"tc/3/ecn/min": "150000", "port/E1/pfc": "3", "port/E1/mtu": "9000", "trust": "dscp"}
	live := State{"tc/3/ecn/min": "146480", "port/E1/pfc": "", "port/E1/pause": "true", "port/E9/mtu": "1500", "tc/4/lossless": "true"}
	got := Diff(desired, live, fields)
	var lines []string
	for _, c := range got {
		lines = append(lines, string(c.Action)+" "+c.Path+" "+c.Before+">"+c.After+" "+c.Disruptive)
	}
	want := []string{
		"+ port/E1/mtu >9000 ",
		"- port/E1/pause true> ",
		"~ port/E1/pfc >3 PFC change flaps the link",
		"- tc/4/lossless true> ",
		"+ trust >dscp ",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("diff:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
	if len(Diff(desired, desired, fields)) != 0 {
		t.Errorf("self diff not empty")
	}
	if desired.Fingerprint() == live.Fingerprint() || desired.Fingerprint() != (State{"trust": "dscp", "port/E1/mtu": "9000", "port/E1/pfc": "3", "tc/3/ecn/min": "150000"}).Fingerprint() {
		t.Errorf("fingerprint")
	}
}

func TestSlashedPortNames(t *testing.T) {
	fields := []Field{{Pattern: "port/*/pfc", Disruptive: "flap"}, {Pattern: "port/*/cable"}}
	for _, p := range []string{"port/Ethernet1/pfc", "port/Ethernet1/1/pfc", "port/ethernet-1/1/1/pfc"} {
		if f, ok := FieldFor(fields, p); !ok || f.Disruptive != "flap" {
			t.Errorf("FieldFor(%s) = %+v, %v", p, f, ok)
		}
		if got := newFieldMatcher(fields).lookup(p); got.Disruptive != "flap" {
			t.Errorf("matcher(%s) = %+v", p, got)
		}
	}
	if _, ok := FieldFor(fields, "port/Ethernet1/1/mtu"); ok {
		t.Errorf("port/*/pfc matched an mtu path")
	}
	d := Diff(State{"port/Ethernet1/1/pfc": "3"}, State{"port/Ethernet1/1/pfc": ""}, fields)
	if len(d) != 1 || d[0].Disruptive != "flap" {
		t.Errorf("diff %+v", d)
	}
}

func TestDSCPNormalForm(t *testing.T) {
	var table [64]int
	table[26], table[48] = 3, 6
	st := State{}
	PutDSCP(st, "nic/eth1/", &table)
	if len(st) != 3 || st["nic/eth1/dscp/default"] != "0" || st["nic/eth1/dscp/26"] != "3" || st["nic/eth1/dscp/48"] != "6" {
		t.Errorf("normal form %v", st)
	}
	// A table mostly on TC 3 has default 3 and lists the others.
	for i := 0; i < 40; i++ {
		table[i] = 3
	}
	if DSCPDefault(&table) != 3 {
		t.Errorf("default %d", DSCPDefault(&table))
	}
	// A live table with one extra entry diffs as one removal.
	var want [64]int
	want[26] = 3
	live := State{}
	PutDSCP(live, "", &want)
	live["dscp/10"] = "5"
	desired := State{}
	PutDSCP(desired, "", &want)
	d := Diff(desired, live, nil)
	if len(d) != 1 || d[0].Path != "dscp/10" || d[0].Action != Delete {
		t.Errorf("diff %+v", d)
	}
}

// TestDCQCNPriorities: the DCQCN priority mask follows the spec. Default:
// the NIC vendor's (every priority; mlx5 ROCE_CC_PRIO_MASK = 0xff, as
// NVIDIA's nic-configuration-operator leaves it); an explicit
// dcqcn_priorities always gains the RDMA class's priority; a lossy RoCE
// class under ecn-only is never left without DCQCN.
func TestDCQCNPriorities(t *testing.T) {
	lossy := `
fabric "t" {
  congestion_control = "ecn-only"
}
class "roce" {
  role      = "rdma"
  priority  = 3
  dscp      = [26]
  lossless  = false
  bandwidth = 50
  ecn {
    min         = "150KB"
    max         = "1500KB"
    probability = 100
  }
}
class "cnp" {
  role     = "cnp"
  priority = 6
  dscp     = [48]
  strict   = true
}
class "default" {
  role      = "other"
  priority  = 0
  default   = true
  bandwidth = 50
}
host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    addresses = ["10.0.0.1/31"]
    %s
  }
}
`
	for _, tc := range []struct{ name, nicAttr, want string }{
		{"vendor default", "", "0,1,2,3,4,5,6,7"},
		{"explicit mask gains the RoCE priority", "dcqcn_priorities = [5]", "3,5"},
		{"ecn off on the NIC", "ecn = false", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := compile(t, strings.Replace(lossy, "%s", tc.nicAttr, 1))
			n := f.Hosts[0].NICs[0]
			if got := intsString(n.ECNPrios); got != tc.want {
				t.Errorf("DCQCN priorities %q, want %q", got, tc.want)
			}
			if got := f.Hosts[0].Flatten()["nic/eth1/ecn"]; got != tc.want {
				t.Errorf("nic/eth1/ecn = %q, want %q", got, tc.want)
			}
		})
	}
}

// roceV1Spec is a RoCEv1 fabric with a lossless RDMA class on priority 3
// and a default class on 0, one host whose NIC eth1 (mlx5_0) gets
// nicAttrs; fabricAttrs go into the fabric block.
func roceV1Spec(fabricAttrs, trust, nicAttrs string) string {
	return `
fabric "t" {
  transport          = "rocev1"
  trust              = "` + trust + `"
  congestion_control = "pfc-only"
  ` + fabricAttrs + `
}
class "roce" {
  role      = "rdma"
  priority  = 3
  lossless  = true
  bandwidth = 50
}
class "default" {
  role      = "other"
  priority  = 0
  default   = true
  bandwidth = 50
}
host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    addresses = ["10.0.0.1/24"]
    ` + nicAttrs + `
  }
}
`
}

// TestRoCEEgressMap: rdma_cm picks the PCP of a RoCE connection as
// egress_map[rt_tos2priority(tos)] on the VLAN netdev (drivers/infiniband/
// core/cma.c iboe_tos_to_sl / get_vlan_ndev_tc), and rt_tos2priority only
// yields 0, 2, 4 or 6 (net/ipv4/route.c ip_tos2prio): the map must send
// that skb priority to the RDMA class's PCP, or RoCE leaves on PCP 0.
func TestRoCEEgressMap(t *testing.T) {
	for _, tc := range []struct {
		tosAttr string
		want    string
	}{
		{"", "0:3,3:3"},             // ToS 0 -> skb priority 0
		{"rdma_tos = 8", "2:3,3:3"}, // IPTOS_THROUGHPUT -> TC_PRIO_BULK 2
		{"rdma_tos = 24", "3:3,4:3"},
		{"rdma_tos = 16", "3:3,6:3"}, // IPTOS_LOWDELAY -> TC_PRIO_INTERACTIVE 6
	} {
		f := compile(t, roceV1Spec(tc.tosAttr, "pcp", "vlan = 100"))
		n := f.Hosts[0].NICs[0]
		if got := FormatQoSMap(n.VLANEgressMap()); got != tc.want {
			t.Errorf("%q: egress map %q, want %q", tc.tosAttr, got, tc.want)
		}
		m := n.VLANEgressMap()
		if pcp := m[RTTos2Priority(f.Hosts[0].RDMATos)]; pcp != 3 {
			t.Errorf("%q: rdma_cm would send RoCE on PCP %d, want 3", tc.tosAttr, pcp)
		}
	}
	for tos, want := range map[int]int{0: 0, 2: 0, 8: 2, 10: 2, 16: 6, 24: 4, 26: 4, 106: 2, 184: 4, 255: 4} {
		if got := RTTos2Priority(tos); got != want {
			t.Errorf("rt_tos2priority(%d) = %d, want %d", tos, got, want)
		}
	}
}

// TestNCCLFamilyAndVersion: where the host driver leaves an unresolvable
// NCCL_IB_GID_INDEX out, NCCL 2.21+ picks the GID by NCCL_IB_ADDR_FAMILY
// (default AF_INET) and NCCL_IB_ROCE_VERSION_NUM (default 2): an IPv6-only
// host gets AF_INET6, a RoCEv1 fabric version 1; dual-stack and IPv4
// hosts on RoCEv2 keep NCCL's defaults.
func TestNCCLFamilyAndVersion(t *testing.T) {
	src := func(transport, addrs string) string {
		return `
fabric "t" {
  transport = "` + transport + `"
}
host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    addresses = [` + addrs + `]
  }
}
`
	}
	for _, c := range []struct{ transport, addrs, family, version string }{
		{"rocev2", `"fd00::1/64"`, "AF_INET6", ""},
		{"rocev2", `"fd00::1/64", "198.18.0.1/24"`, "", ""},
		{"rocev2", `"198.18.0.1/24"`, "", ""},
		{"rocev1", `"198.18.0.1/24"`, "", "1"},
	} {
		h := Compile(testutil.LoadSrc(t, src(c.transport, c.addrs))).Hosts[0]
		if h.NCCL["NCCL_IB_ADDR_FAMILY"] != c.family || h.NCCL["NCCL_IB_ROCE_VERSION_NUM"] != c.version || h.NCCL["NCCL_IB_GID_INDEX"] != "auto" {
			t.Errorf("%s %s: %v", c.transport, c.addrs, h.NCCL)
		}
	}
}

// TestCMSL: the SL rdma_cm gives a RoCE connection, by the path the NIC's
// driver makes it take (cma.c get_vlan_ndev_tc): mlx5 the VLAN egress map
// fabctl writes (the skb priority of the ToS to the RDMA PCP; 0 without
// a VLAN), ice its prio->TC map (the class's compacted TC in VLAN mode,
// the priority in DSCP mode), bnxt 0 (a TC count, no map).
func TestCMSL(t *testing.T) {
	src := func(trust string, vlan int) string {
		v := ""
		if vlan > 0 {
			v = "vlan = 100"
		}
		return roceV1Spec("rdma_tos = 24", trust, v)
	}
	n := Compile(testutil.LoadSrc(t, src("pcp", 100))).Hosts[0].NICs[0]
	for _, c := range []struct {
		fam, via string
		sl       int
	}{{"mlx5", CMViaEgressMap, 3}, {"", CMViaEgressMap, 3}, {"ice", CMViaPrioTC, 0}, {"bnxt", CMViaPrioTC, 0}} {
		if sl, via := n.CMSL(c.fam); sl != c.sl || via != c.via {
			t.Errorf("%q: SL %d via %s, want %d via %s", c.fam, sl, via, c.sl, c.via)
		}
	}
	n.RDMASkbPriority = 3 // an skb priority on the RDMA class: ice's compacted TC 1
	if sl, _ := n.CMSL("ice"); sl != 1 {
		t.Errorf("ice, skb priority 3 in VLAN mode: SL %d, want TC 1", sl)
	}
	n.Trust = "dscp"
	if sl, _ := n.CMSL("ice"); sl != 3 {
		t.Errorf("ice in DSCP mode: SL %d, want the priority 3", sl)
	}
	if sl, via := Compile(testutil.LoadSrc(t, src("pcp", 0))).Hosts[0].NICs[0].CMSL("mlx5"); sl != 0 || via != CMViaEgressMap {
		t.Errorf("mlx5 without a VLAN: SL %d via %s", sl, via)
	}
}
