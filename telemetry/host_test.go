package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	promtest "github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/validate/traffic"
)

// mlx5HW and ibPMA are the counter files a ConnectX port has in sysfs
// (kernel 6.1 mlx5_ib hw_counters, and the IB PMA counters).
var mlx5HW = []string{"duplicate_request", "implied_nak_seq_err", "lifespan", "local_ack_timeout_err",
	"np_cnp_sent", "np_ecn_marked_roce_packets", "out_of_buffer", "out_of_sequence", "packet_seq_err",
	"req_cqe_error", "req_cqe_flush_error", "req_remote_access_errors", "req_remote_invalid_request",
	"resp_cqe_error", "resp_cqe_flush_error", "resp_local_length_error", "resp_remote_access_errors",
	"rnr_nak_retry_err", "roce_adp_retrans", "roce_adp_retrans_to", "roce_slow_restart",
	"roce_slow_restart_cnps", "roce_slow_restart_trans", "rp_cnp_handled", "rp_cnp_ignored",
	"rx_atomic_requests", "rx_dct_connect", "rx_icrc_encapsulated", "rx_read_requests", "rx_write_requests"}
var ibPMA = []string{"excessive_buffer_overrun_errors", "link_downed", "link_error_recovery",
	"local_link_integrity_errors", "port_rcv_constraint_errors", "port_rcv_data", "port_rcv_errors",
	"port_rcv_packets", "port_rcv_remote_physical_errors", "port_rcv_switch_relay_errors",
	"port_xmit_constraint_errors", "port_xmit_data", "port_xmit_discards", "port_xmit_packets",
	"port_xmit_wait", "symbol_error", "VL15_dropped", "multicast_rcv_packets", "multicast_xmit_packets",
	"unicast_rcv_packets", "unicast_xmit_packets"}

// rxeHW is soft-RoCE's hw_counters (kernel 6.1 rxe_hw_counters.c).
var rxeHW = []string{"sent_pkts", "rcvd_pkts", "duplicate_request", "out_of_seq_request", "rcvd_rnr_err",
	"send_rnr_err", "rcvd_seq_err", "ack_deferred", "retry_exceeded_err", "retry_rnr_exceeded_err",
	"completer_retry_err", "send_err", "link_downed", "rdma_sends", "rdma_recvs"}

// fakeSysfs writes RDMA devices with their counters (each value: its
// position + base) and port state/rate.
func fakeSysfs(tb testing.TB, root string, devs map[string][]string, base uint64) {
	tb.Helper()
	for dev, names := range devs {
		port := filepath.Join(root, "class/infiniband", dev, "ports/1")
		for _, d := range []string{"hw_counters", "counters"} {
			if err := os.MkdirAll(filepath.Join(port, d), 0o755); err != nil {
				tb.Fatal(err)
			}
		}
		for i, n := range names {
			dir := "hw_counters"
			if strings.HasPrefix(n, "counters/") {
				dir, n = "counters", strings.TrimPrefix(n, "counters/")
			}
			write(tb, filepath.Join(port, dir, n), strconv.FormatUint(base+uint64(i), 10))
		}
		write(tb, filepath.Join(port, "state"), "4: ACTIVE")
		write(tb, filepath.Join(port, "rate"), "100 Gb/sec (4X EDR)")
	}
}

func write(tb testing.TB, p, s string) {
	tb.Helper()
	if err := os.WriteFile(p, []byte(s+"\n"), 0o644); err != nil {
		tb.Fatal(err)
	}
}

func withPrefix(p string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = p + n
	}
	return out
}

const twoHosts = `
fabric "f" { transport = "rocev2" }
switch "leaf1" {
  platform = "sonic"
  address  = "127.0.0.1"
  }
host "h1" {
  connect = "local"
  nic "eth0" {
    device  = "mlx5_0"
    model   = "connectx-7"
    addresses = ["10.0.0.1/31"]
  }
  nic "eth1" {
    device  = "rxe1"
    model   = "rxe"
    addresses = ["10.0.1.1/31"]
  }
}
link {
  endpoints = ["leaf1:Ethernet0", "h1:eth0"]
  speed     = "200G"
}
link {
  endpoints = ["leaf1:Ethernet4", "h1:eth1"]
  speed     = "100G"
}
`

func TestNICLabelsFromSpec(t *testing.T) {
	s := testutil.LoadSrc(t, twoHosts)
	nics, unknown := NICs(s, []string{"h1", "nope"})
	if fmt.Sprint(unknown) != "[nope]" {
		t.Errorf("unknown = %v", unknown)
	}
	var got []string
	for _, n := range nics {
		got = append(got, strings.Join(n.Labels.Values(), ","))
	}
	want := []string{"f,h1,eth0,0,leaf1,Ethernet0", "f,h1,eth1,1,leaf1,Ethernet4"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("labels:\n got %v\nwant %v", got, want)
	}
	if nics[0].SpeedBits != 200e9 {
		t.Errorf("spec speed %v", nics[0].SpeedBits)
	}
	ports := SwitchPorts(s, s.Switch("leaf1"))
	if len(ports) != 2 || strings.Join(ports[1].Labels.Values(), ",") != "f,h1,eth1,1,leaf1,Ethernet4" {
		t.Errorf("switch port labels: %+v", ports)
	}
}

// TestHostCollectorFamilies reads an mlx5 port and an rxe port through
// traffic.Snapshot (sysfs fixture) plus mlx5 ethtool per-priority
// counters, and checks each semantic metric comes from the family's
// native counter and that what rxe lacks is declared, not zero.
func TestHostCollectorFamilies(t *testing.T) {
	s := testutil.LoadSrc(t, twoHosts)
	nics, _ := NICs(s, nil)
	root := t.TempDir()
	fakeSysfs(t, root, map[string][]string{
		"mlx5_0": append(append([]string{}, mlx5HW...), withPrefix("counters/", ibPMA)...),
		"rxe1":   rxeHW,
	}, 100)
	c := NewHostCollector(nics, root)
	c.Read = func(sysRoot string, ep traffic.Endpoint) traffic.Counters {
		cnt := traffic.SnapshotOnly(sysRoot, ep, wanted)
		if ep.NIC.Name == "eth0" { // what mlx5's ethtool -S adds
			cnt["eth:rx_prio3_pause"] = 7
			cnt["eth:tx_prio3_pause"] = 9
			cnt["eth:rx_prio3_pause_duration"] = 2_500_000
			cnt["eth:rx_discards_phy"] = 4
		}
		return cnt
	}
	c.SetDrift("h1", "eth1", 2)
	idx := func(names []string, n string) float64 {
		i := sort.SearchStrings(names, n)
		for j, x := range names {
			if x == n {
				i = j
			}
		}
		return float64(100 + i)
	}
	want := fmt.Sprintf(`
# HELP fabctl_nic_ecn_marked_packets_total RoCE packets that arrived ECN-marked (CE), counted by the notification point.
# TYPE fabctl_nic_ecn_marked_packets_total counter
fabctl_nic_ecn_marked_packets_total{fabric="f",host="h1",leaf="leaf1",nic="eth0",port="Ethernet0",rail="0"} %v
# HELP fabctl_nic_out_of_sequence_total Packets the responder received out of sequence (PSN gap).
# TYPE fabctl_nic_out_of_sequence_total counter
fabctl_nic_out_of_sequence_total{fabric="f",host="h1",leaf="leaf1",nic="eth0",port="Ethernet0",rail="0"} %v
fabctl_nic_out_of_sequence_total{fabric="f",host="h1",leaf="leaf1",nic="eth1",port="Ethernet4",rail="1"} %v
# HELP fabctl_nic_pfc_pause_frames_total PFC pause frames per priority, tx (sent: the NIC asked its peer to pause) and rx (received).
# TYPE fabctl_nic_pfc_pause_frames_total counter
fabctl_nic_pfc_pause_frames_total{direction="rx",fabric="f",host="h1",leaf="leaf1",nic="eth0",port="Ethernet0",priority="3",rail="0"} 7
fabctl_nic_pfc_pause_frames_total{direction="tx",fabric="f",host="h1",leaf="leaf1",nic="eth0",port="Ethernet0",priority="3",rail="0"} 9
# HELP fabctl_nic_pfc_pause_duration_seconds_total Time paused per priority (mlx5 pause_duration), tx and rx.
# TYPE fabctl_nic_pfc_pause_duration_seconds_total counter
fabctl_nic_pfc_pause_duration_seconds_total{direction="rx",fabric="f",host="h1",leaf="leaf1",nic="eth0",port="Ethernet0",priority="3",rail="0"} 2.5
# HELP fabctl_nic_rx_discards_total Packets the NIC discarded on receive (no buffer, physical port discards).
# TYPE fabctl_nic_rx_discards_total counter
fabctl_nic_rx_discards_total{fabric="f",host="h1",leaf="leaf1",nic="eth0",port="Ethernet0",rail="0"} 4
# HELP fabctl_nic_link_speed_bits The RDMA port's trained rate in bits per second.
# TYPE fabctl_nic_link_speed_bits gauge
fabctl_nic_link_speed_bits{fabric="f",host="h1",leaf="leaf1",nic="eth0",port="Ethernet0",rail="0"} 1e+11
fabctl_nic_link_speed_bits{fabric="f",host="h1",leaf="leaf1",nic="eth1",port="Ethernet4",rail="1"} 1e+11
# HELP fabctl_nic_spec_speed_bits The NIC's speed in the spec, bits per second.
# TYPE fabctl_nic_spec_speed_bits gauge
fabctl_nic_spec_speed_bits{fabric="f",host="h1",leaf="leaf1",nic="eth0",port="Ethernet0",rail="0"} 2e+11
fabctl_nic_spec_speed_bits{fabric="f",host="h1",leaf="leaf1",nic="eth1",port="Ethernet4",rail="1"} 1e+11
# HELP fabctl_nic_dcb_drift 1 when the NIC's DCB settings changed since the agent's watch began (fabctl agent --watch).
# TYPE fabctl_nic_dcb_drift gauge
fabctl_nic_dcb_drift{fabric="f",host="h1",leaf="leaf1",nic="eth0",port="Ethernet0",rail="0"} 0
fabctl_nic_dcb_drift{fabric="f",host="h1",leaf="leaf1",nic="eth1",port="Ethernet4",rail="1"} 1
`, idx(mlx5HW, "np_ecn_marked_roce_packets"), idx(mlx5HW, "out_of_sequence"), idx(rxeHW, "out_of_seq_request"))
	if err := promtest.CollectAndCompare(c, strings.NewReader(want),
		"fabctl_nic_ecn_marked_packets_total", "fabctl_nic_out_of_sequence_total", "fabctl_nic_pfc_pause_frames_total",
		"fabctl_nic_pfc_pause_duration_seconds_total", "fabctl_nic_rx_discards_total", "fabctl_nic_link_speed_bits",
		"fabctl_nic_spec_speed_bits", "fabctl_nic_dcb_drift"); err != nil {
		t.Error(err)
	}
	// What rxe lacks is declared.
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	lacks := map[string]bool{}
	for _, mf := range mfs {
		if mf.GetName() != "fabctl_nic_counter_supported" {
			continue
		}
		for _, m := range mf.GetMetric() {
			var nic, counter string
			for _, l := range m.GetLabel() {
				switch l.GetName() {
				case "nic":
					nic = l.GetValue()
				case "counter":
					counter = l.GetValue()
				}
			}
			if m.GetGauge().GetValue() == 0 {
				lacks[nic+":"+counter] = true
			}
		}
	}
	for _, k := range []string{"eth1:ecn_marked_packets", "eth1:cnp_sent", "eth1:ack_timeouts", "eth1:cq_overruns", "eth1:pfc_pause_frames", "eth0:cq_overruns"} {
		if !lacks[k] {
			t.Errorf("%s not declared unsupported (lacks: %v)", k, lacks)
		}
	}
	if lacks["eth0:ecn_marked_packets"] || lacks["eth0:ack_timeouts"] || lacks["eth1:retransmits"] {
		t.Errorf("supported counters declared missing: %v", lacks)
	}
}

// eightNICs is a host with 8 ConnectX NICs in sysfs; when root, their
// netdevs are 8 veths in a namespace of their own, so every scrape also
// makes the real ethtool and DCB netlink calls in that namespace.
func eightNICs(tb testing.TB) *HostCollector {
	root := tb.TempDir()
	devs := map[string][]string{}
	var b strings.Builder
	connect := `"local"`
	netns := ""
	if os.Geteuid() == 0 {
		netns = fmt.Sprintf("fabtele-bench-%d", os.Getpid())
		testutil.Netns(tb, netns)
		connect = `"netns:` + netns + `"`
	}
	fmt.Fprintf(&b, "fabric \"f\" { transport = \"rocev2\" }\nhost \"h\" {\n connect = %s\n", connect)
	for i := 0; i < 8; i++ {
		dev := fmt.Sprintf("mlx5_%d", i)
		devs[dev] = append(append([]string{}, mlx5HW...), withPrefix("counters/", ibPMA)...)
		fmt.Fprintf(&b, " nic \"ens%d\" {\n  device = %q\n  addresses = [\"10.0.%d.1/31\"]\n }\n", i, dev, i)
		if netns != "" {
			testutil.Run(tb, "ip", "-n", netns, "link", "add", fmt.Sprintf("ens%d", i), "type", "veth", "peer", "name", fmt.Sprintf("p%d", i))
			testutil.Run(tb, "ip", "-n", netns, "link", "set", fmt.Sprintf("ens%d", i), "up")
		}
	}
	b.WriteString("}\n")
	fakeSysfs(tb, root, devs, 1000)
	s, diags := spec.LoadFiles([]spec.File{{Name: "t.fab.hcl", Data: []byte(b.String())}}, spec.LoadOptions{})
	if diags.HasErrors() {
		tb.Fatal(diags)
	}
	nics, _ := NICs(s, nil)
	return NewHostCollector(nics, root)
}

func scrape(tb testing.TB, g prometheus.Gatherer) int {
	mfs, err := g.Gather()
	if err != nil {
		tb.Fatal(err)
	}
	return len(mfs)
}

// BenchmarkHostScrape8NICs is the cost of one scrape of a host with 8
// NICs (go test -run '^$' -bench HostScrape8NICs ./telemetry): the
// cpu-ms/scrape it reports is user+system CPU of the process.
func BenchmarkHostScrape8NICs(b *testing.B) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(eightNICs(b))
	b.ResetTimer()
	start := testutil.CPUTime()
	for i := 0; i < b.N; i++ {
		scrape(b, reg)
	}
	cpu := testutil.CPUTime() - start
	b.ReportMetric(float64(cpu)/float64(b.N)/float64(time.Millisecond), "cpu-ms/scrape")
}
