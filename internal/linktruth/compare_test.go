package linktruth

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/spec"
)

var testPlatforms = []spec.PlatformInfo{{Name: "eos", Transport: "ssh"}, {Name: "sonic", Transport: "ssh"}, {Name: "infiniband", InfiniBand: true}}

func load(tb testing.TB, src string) *spec.Spec {
	tb.Helper()
	s, diags := spec.LoadFiles([]spec.File{{Name: "t.fab.hcl", Data: []byte(src)}}, spec.LoadOptions{Platforms: testPlatforms})
	if diags.HasErrors() {
		tb.Fatalf("load: %v", diags)
	}
	return s
}

// Two hosts on leaf1 (EOS), leaf1 up to spine1 (SONiC, LLDP name
// spine1.dc1), the hosts' NICs declared 400G.
const twoHosts = `
fabric "t" {
  transport = "rocev2"
  link_errors_max = 10
}
switch "leaf1" {
  platform = "eos"
  address  = "192.0.2.1"
}
switch "spine1" {
  platform  = "sonic"
  address   = "192.0.2.2"
  lldp_name = "spine1.dc1"
}
host "gpu01" {
  address = "192.0.2.11"
  nic "ens1f0" {
    device = "mlx5_0"
    speed  = "400G"
  }
}
host "gpu02" {
  address = "192.0.2.12"
  nic "ens1f0" {
    device = "mlx5_0"
    speed  = "400G"
  }
}
link {
  endpoints = ["leaf1:Ethernet1", "gpu01:ens1f0"]
}
link {
  endpoints = ["leaf1:Ethernet2", "gpu02:ens1f0"]
}
link {
  endpoints = ["leaf1:Ethernet49", "spine1:Ethernet0"]
  speed = "800G"
}
`

func up(mbps int64, ns ...Neighbor) *Observation {
	return &Observation{Oper: Up, SpeedMbps: mbps, Neighbors: ns, Counters: &Counters{}}
}

// cleanReads is every device of twoHosts reporting its ports as cabled.
func cleanReads() map[string]Read {
	return map[string]Read{
		"switch.leaf1": {Links: &DeviceLinks{LLDP: true, Ports: map[string]*Observation{
			"Ethernet1":  up(400000, Neighbor{SystemName: "gpu01.example.net", PortID: "0c:42:a1:00:00:01", PortIDSubtype: "mac", PortDesc: "ens1f0"}),
			"Ethernet2":  up(400000, Neighbor{SystemName: "gpu02", PortID: "ens1f0"}),
			"Ethernet49": up(800000, Neighbor{SystemName: "spine1.dc1", PortID: "Ethernet0"}),
		}}},
		"switch.spine1": {Links: &DeviceLinks{LLDP: true, Ports: map[string]*Observation{
			"Ethernet0": up(800000, Neighbor{SystemName: "leaf1", PortID: "Ethernet49"}),
		}}},
		"host.gpu01": {Links: &DeviceLinks{LLDP: true, Ports: map[string]*Observation{
			"ens1f0": up(400000, Neighbor{SystemName: "leaf1", PortID: "Ethernet1"}),
		}}},
		"host.gpu02": {Links: &DeviceLinks{LLDPNote: "lldpd is not running", Ports: map[string]*Observation{
			"ens1f0": up(400000),
		}}},
	}
}

func TestCompareClean(t *testing.T) {
	s := load(t, twoHosts)
	r := Compare(s, cleanReads())
	if len(r.Findings) != 0 {
		t.Fatalf("findings on a clean fabric: %v", r.Findings)
	}
	if r.Links != 3 || r.Ends != 6 || r.ErrorsMax != 10 {
		t.Fatalf("links %d ends %d errors_max %d, want 3 6 10", r.Links, r.Ends, r.ErrorsMax)
	}
	if len(r.NoLLDP) != 1 || r.NoLLDP[0].Devices[0] != "host.gpu02" || !strings.Contains(r.NoLLDP[0].Reason, "lldpd is not running") {
		t.Fatalf("no_lldp = %+v", r.NoLLDP)
	}
}

func TestCompareFaults(t *testing.T) {
	s := load(t, twoHosts)
	for _, tc := range []struct {
		name  string
		fault func(map[string]Read)
		want  []string // "end kind verdict" of every finding, in order
		text  string   // in the first finding's message
	}{
		{"hosts swapped", func(r map[string]Read) {
			p := r["switch.leaf1"].Links.Ports
			p["Ethernet1"].Neighbors, p["Ethernet2"].Neighbors = p["Ethernet2"].Neighbors, p["Ethernet1"].Neighbors
		}, []string{"leaf1:Ethernet1 miswired mismatch", "leaf1:Ethernet2 miswired mismatch"}, "LLDP neighbour is gpu02:ens1f0, the spec cables gpu01:ens1f0"},
		{"port down", func(r map[string]Read) {
			o := r["switch.leaf1"].Links.Ports["Ethernet2"]
			o.Oper, o.Neighbors, o.SpeedMbps = Down, nil, 0
			r["host.gpu02"].Links.Ports["ens1f0"].Oper = Down
		}, []string{"leaf1:Ethernet2 link-down mismatch", "gpu02:ens1f0 link-down mismatch"}, "link to gpu02:ens1f0 is down"},
		{"host port not brought up yet", func(r map[string]Read) {
			o := r["switch.leaf1"].Links.Ports["Ethernet2"]
			o.Oper, o.Neighbors, o.SpeedMbps = Down, nil, 0
			h := r["host.gpu02"].Links.Ports["ens1f0"]
			h.Oper, h.AdminDown = Down, true
		}, []string{"leaf1:Ethernet2 link-down unchecked", "gpu02:ens1f0 link-down unchecked"}, "and gpu02:ens1f0 is administratively down"},
		{"lower speed", func(r map[string]Read) {
			r["switch.leaf1"].Links.Ports["Ethernet49"].SpeedMbps = 400000
			r["switch.spine1"].Links.Ports["Ethernet0"].SpeedMbps = 400000
		}, []string{"leaf1:Ethernet49 speed mismatch", "spine1:Ethernet0 speed mismatch"}, "runs at 400G, the spec's link is 800G"},
		{"errors above the fabric's maximum", func(r map[string]Read) {
			r["host.gpu01"].Links.Ports["ens1f0"].Counters = &Counters{InErrors: 8, OutErrors: 3}
			r["host.gpu02"].Links.Ports["ens1f0"].Counters = &Counters{InErrors: 10}
		}, []string{"gpu01:ens1f0 errors mismatch"}, "8 input and 3 output errors (link_errors_max = 10)"},
		{"silent port facing a host that speaks LLDP", func(r map[string]Read) {
			r["switch.leaf1"].Links.Ports["Ethernet1"].Neighbors = nil
		}, []string{"leaf1:Ethernet1 no-neighbor mismatch"}, "no LLDP neighbour seen; the spec cables gpu01:ens1f0"},
		{"silent port facing a host whose LLDP was not read", func(r map[string]Read) {
			r["switch.leaf1"].Links.Ports["Ethernet2"].Neighbors = nil
		}, []string{"leaf1:Ethernet2 no-neighbor unchecked"}, "gpu02's own LLDP was not read"},
		{"unknown neighbour named as advertised", func(r map[string]Read) {
			r["switch.spine1"].Links.Ports["Ethernet0"].Neighbors = []Neighbor{{SystemName: "oob-sw9", PortID: "Gi0/1"}}
		}, []string{"spine1:Ethernet0 miswired mismatch"}, "LLDP neighbour is oob-sw9:Gi0/1"},
		{"spine seen by its spec name instead of its lldp_name", func(r map[string]Read) {
			r["switch.leaf1"].Links.Ports["Ethernet49"].Neighbors[0].SystemName = "spine1"
		}, []string{"leaf1:Ethernet49 miswired mismatch"}, "the spec cables spine1:Ethernet0"},
		{"port missing from the device's report", func(r map[string]Read) {
			delete(r["host.gpu01"].Links.Ports, "ens1f0")
		}, []string{"gpu01:ens1f0 unreadable unchecked"}, "did not report the port"},
		{"a device not read", func(r map[string]Read) {
			r["switch.spine1"] = Read{NotRead: "link truth not read on sonic"}
		}, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reads := cleanReads()
			tc.fault(reads)
			r := Compare(s, reads)
			var got []string
			for _, f := range r.Findings {
				got = append(got, f.End+" "+f.Kind+" "+f.Verdict)
				if f.Link == "" || f.Peer == "" || f.Device == "" || f.Want == "" || f.Have == "" {
					t.Errorf("finding without its link, peer, device, want or have: %+v", f)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("findings %q, want %q (%v)", got, tc.want, r.Findings)
			}
			if tc.text != "" && !strings.Contains(r.Findings[0].Message, tc.text) {
				t.Fatalf("message %q lacks %q", r.Findings[0].Message, tc.text)
			}
			if got := r.Mismatch(); got != strings.Contains(fmt.Sprint(tc.want), "mismatch") {
				t.Fatalf("Mismatch() = %v", got)
			}
		})
	}
}

func TestCompareNotRead(t *testing.T) {
	s := load(t, twoHosts)
	reads := cleanReads()
	reads["switch.spine1"] = Read{NotRead: "link truth not read on sonic"}
	r := Compare(s, reads)
	if len(r.NotRead) != 1 || r.NotRead[0].Reason != "link truth not read on sonic" || r.NotRead[0].Devices[0] != "switch.spine1" {
		t.Fatalf("not_read = %+v", r.NotRead)
	}
	if r.Ends != 5 {
		t.Fatalf("ends read %d, want 5", r.Ends)
	}
}

func TestCompareSkipsInfiniBand(t *testing.T) {
	s := load(t, `
fabric "ib" { transport = "infiniband" }
switch "ib1" {
  platform = "infiniband"
  ports    = 8
}
host "cn01" {
  address = "192.0.2.1"
  nic "ib0" { device = "mlx5_0" }
}
link {
  endpoints = ["ib1:1", "cn01:ib0"]
  speed     = "200G"
}
`)
	if Applies(s) {
		t.Fatal("an InfiniBand fabric has no Ethernet links to compare")
	}
	if r := Compare(s, map[string]Read{}); r.Links != 0 || len(r.Findings) != 0 {
		t.Fatalf("report %+v", r)
	}
}

func TestParseSpeed(t *testing.T) {
	for in, want := range map[string]int64{"100G": 100000, "400Gbps": 400000, "25000": 25000, "100000Mb/s": 100000, "10Mbps": 10, "2.5G": 2500, " 800g ": 800000} {
		if got, ok := ParseSpeed(in); !ok || got != want {
			t.Errorf("ParseSpeed(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "fast", "-1", "G", "1e99G"} {
		if got, ok := ParseSpeed(in); ok {
			t.Errorf("ParseSpeed(%q) = %d, want refused", in, got)
		}
	}
	for mbps, want := range map[int64]string{400000: "400G", 2500: "2.5G", 100: "100M", 0: "unknown speed"} {
		if got := SpeedString(mbps); got != want {
			t.Errorf("SpeedString(%d) = %q, want %q", mbps, got, want)
		}
	}
}

// BenchmarkCompare40k compares 40,000 links (2,500 leaves of 16 hosts),
// every end read clean, and reports the time per link.
func BenchmarkCompare40k(b *testing.B) { benchCompare(b, 2500) }

// BenchmarkCompare4k is a tenth of it: the two together show the
// comparison is linear.
func BenchmarkCompare4k(b *testing.B) { benchCompare(b, 250) }

func benchCompare(b *testing.B, leaves int) {
	var src strings.Builder
	src.WriteString("fabric \"bench\" {\n  transport = \"rocev2\"\n}\n")
	reads := map[string]Read{}
	for l := 0; l < leaves; l++ {
		fmt.Fprintf(&src, "switch \"leaf%d\" {\n  platform = \"eos\"\n  address = \"192.0.2.1\"\n}\n", l)
		sw := &DeviceLinks{LLDP: true, Ports: map[string]*Observation{}}
		reads[fmt.Sprintf("switch.leaf%d", l)] = Read{Links: sw}
		for h := 0; h < 16; h++ {
			host := fmt.Sprintf("h%d-%d", l, h)
			port := fmt.Sprintf("Ethernet%d", h+1)
			fmt.Fprintf(&src, "host %q {\n  address = \"192.0.2.2\"\n  nic \"ens1f0\" {\n    device = \"mlx5_0\"\n    speed = \"400G\"\n  }\n}\n", host)
			fmt.Fprintf(&src, "link {\n  endpoints = [\"leaf%d:%s\", \"%s:ens1f0\"]\n}\n", l, port, host)
			sw.Ports[port] = up(400000, Neighbor{SystemName: host, PortID: "ens1f0"})
			reads["host."+host] = Read{Links: &DeviceLinks{LLDP: true, Ports: map[string]*Observation{
				"ens1f0": up(400000, Neighbor{SystemName: fmt.Sprintf("leaf%d", l), PortID: port}),
			}}}
		}
	}
	s := load(b, src.String())
	links := len(s.Links)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if r := Compare(s, reads); len(r.Findings) != 0 || r.Ends != 2*links {
			b.Fatalf("findings %d, ends %d", len(r.Findings), r.Ends)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(links), "ns/link")
}

// TestComparePortAlias: a SONiC spine advertises its port's alias as the
// LLDP Port ID (lldpmgrd: portidsubtype local <alias>), so leaf1 hears
// "etp1", not "Ethernet0". The spine's read says so (PortIDs) and the
// link is clean; without it the same neighbour is a miswire, and an
// alias of another port is one too.
func TestComparePortAlias(t *testing.T) {
	s := load(t, twoHosts)
	reads := cleanReads()
	reads["switch.leaf1"].Links.Ports["Ethernet49"].Neighbors = []Neighbor{{SystemName: "spine1.dc1", PortID: "etp1", PortIDSubtype: "local"}}
	if r := Compare(s, reads); len(r.Findings) != 1 || r.Findings[0].Kind != KindMiswired {
		t.Fatalf("the alias unexplained: %v", r.Findings)
	}
	reads["switch.spine1"].Links.PortIDs = map[string]string{"Ethernet0": "etp1"}
	if r := Compare(s, reads); len(r.Findings) != 0 {
		t.Fatalf("the spine advertises etp1 for Ethernet0: %v", r.Findings)
	}
	reads["switch.spine1"].Links.PortIDs = map[string]string{"Ethernet0": "etp2", "Ethernet4": "etp1"}
	if r := Compare(s, reads); len(r.Findings) != 1 || r.Findings[0].Kind != KindMiswired {
		t.Fatalf("another port's alias: %v", r.Findings)
	}
}
