package telemetry

import (
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fabctl/fabctl/internal/sysattr"
	"github.com/fabctl/fabctl/validate/traffic"
)

// A semantic NIC counter and the native counters that carry it, per NIC
// family, in the order they are tried (traffic.Counters names: "rdma:" is
// sysfs hw_counters/counters, "eth:" ethtool -S, "pfc:" DCB netlink IEEE
// PFC statistics). A NIC that has none of them lacks the counter:
// fabctl_nic_counter_supported{counter} is 0 and the metric is absent,
// so a missing series never reads as zero.
type nicCounter struct {
	name, help string
	native     []string
}

// nicCounters are the per-port counters (no priority).
var nicCounters = []nicCounter{
	{"ecn_marked_packets", "RoCE packets that arrived ECN-marked (CE), counted by the notification point.",
		[]string{"rdma:np_ecn_marked_roce_packets"}}, // mlx5; rxe has no DCQCN
	{"cnp_sent", "Congestion notification packets sent by the notification point.",
		[]string{"rdma:np_cnp_sent"}},
	{"cnp_handled", "Congestion notification packets the reaction point handled (rate reductions).",
		[]string{"rdma:rp_cnp_handled"}},
	{"retransmits", "Retransmitted requests the responder received (duplicate requests).",
		[]string{"rdma:duplicate_request"}}, // mlx5, rxe
	{"out_of_sequence", "Packets the responder received out of sequence (PSN gap).",
		[]string{"rdma:out_of_sequence", "rdma:out_of_seq_request"}}, // mlx5, rxe
	{"packet_seq_errors", "NAK sequence errors the requester received.",
		[]string{"rdma:packet_seq_err", "rdma:rcvd_seq_err"}}, // mlx5, rxe
	{"ack_timeouts", "Local ACK timeouts of the requester (each one a retransmission).",
		[]string{"rdma:local_ack_timeout_err"}}, // mlx5; rxe has no per-timeout counter
	{"cq_overruns", "Completion queue overruns.",
		[]string{"rdma:cq_overrun", "rdma:cq_overflow"}}, // no upstream driver counts these (an async CQ_ERR event); see docs/telemetry.md
	{"rx_discards", "Packets the NIC discarded on receive (no buffer, physical port discards).",
		[]string{"eth:rx_discards_phy", "eth:rx_dropped", "rdma:port_rcv_discards"}}, // mlx5, ice, IB PMA
}

// pfcFrames are the per-priority PFC pause counters, by direction:
// DCB netlink's IEEE PFC requests/indications first (every DCB driver),
// then mlx5's and ice's ethtool names. %d is the priority.
var pfcFrames = map[string][]string{
	"tx": {"pfc:req:%d", "eth:tx_prio%d_pause", "eth:tx_priority_%d_xoff"},
	"rx": {"pfc:ind:%d", "eth:rx_prio%d_pause", "eth:rx_priority_%d_xoff"},
}

// pfcDuration are the per-priority pause duration counters (microseconds:
// mlx5 tx_prioN_pause_duration / rx_prioN_pause_duration).
var pfcDuration = map[string]string{
	"tx": "eth:tx_prio%d_pause_duration",
	"rx": "eth:rx_prio%d_pause_duration",
}

// rdmaWanted are the sysfs RDMA counters the collector reports.
var rdmaWanted = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range nicCounters {
		for _, x := range n.native {
			if strings.HasPrefix(x, "rdma:") {
				m[x] = true
			}
		}
	}
	return m
}()

func wanted(name string) bool { return rdmaWanted[name] }

// Reader reads one NIC's counters: traffic.Snapshot at a sysfs root.
type Reader func(sysRoot string, ep traffic.Endpoint) traffic.Counters

// HostCollector is the Prometheus collector of a host's NICs: every
// scrape reads each NIC's counters once (Reader) and its RDMA port's
// state and rate (sysfs).
type HostCollector struct {
	NICs []NIC
	// SysRoot is where sysfs is read ("/sys"; tests use a fixture).
	SysRoot string
	// Read reads a NIC's counters (nil: traffic.Snapshot).
	Read Reader
	// QPs reads the QP counts of every RDMA device once per scrape (nil:
	// ReadQPs, the RDMA netlink dump).
	QPs QPReader

	mu       sync.Mutex
	watching bool
	drift    map[[2]string]int // host, nic -> changes (0: as at watch start)

	descs map[string]*prometheus.Desc
}

// NewHostCollector returns the collector of nics.
func NewHostCollector(nics []NIC, sysRoot string) *HostCollector {
	c := &HostCollector{NICs: nics, SysRoot: sysRoot, drift: map[[2]string]int{}, descs: map[string]*prometheus.Desc{}}
	d := func(name, help string, extra ...string) {
		c.descs[name] = prometheus.NewDesc("fabctl_nic_"+name, help, append(append([]string{}, LabelNames...), extra...), nil)
	}
	for _, n := range nicCounters {
		d(n.name+"_total", n.help)
	}
	d("pfc_pause_frames_total", "PFC pause frames per priority, tx (sent: the NIC asked its peer to pause) and rx (received).", "direction", "priority")
	d("pfc_pause_duration_seconds_total", "Time paused per priority (mlx5 pause_duration), tx and rx.", "direction", "priority")
	d("link_up", "1 when the NIC's RDMA port is ACTIVE.")
	d("link_speed_bits", "The RDMA port's trained rate in bits per second.")
	d("spec_speed_bits", "The NIC's speed in the spec, bits per second.")
	d("dcb_drift", "1 when the NIC's DCB settings changed since the agent's watch began (fabctl agent --watch).")
	d("dcb_drift_changes", "DCB settings that differ from the watch's baseline.")
	d("qps", "Queue pairs on the NIC's RDMA device (RDMA netlink resource dump).")
	d("qps_error_state", "Queue pairs on the NIC's RDMA device in the error state (IB_QPS_ERR).")
	d("counter_supported", "1 when the NIC family has the counter behind fabctl_nic_<counter>, 0 when it lacks it.", "counter")
	d("up", "1 when the NIC's counters could be read at this scrape.")
	return c
}

// WatchingDCB says a DCB watch feeds SetDrift, so fabctl_nic_dcb_drift
// is exported (0 until a drift).
func (c *HostCollector) WatchingDCB() {
	c.mu.Lock()
	c.watching = true
	c.mu.Unlock()
}

// SetDrift records a NIC's DCB drift: changes is the number of settings
// that differ from the watch's baseline (0: back at it).
func (c *HostCollector) SetDrift(host, nic string, changes int) {
	c.mu.Lock()
	c.watching = true
	c.drift[[2]string{host, nic}] = changes
	c.mu.Unlock()
}

// Describe sends every descriptor.
func (c *HostCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect reads every NIC once.
func (c *HostCollector) Collect(ch chan<- prometheus.Metric) {
	read := c.Read
	if read == nil {
		read = func(sysRoot string, ep traffic.Endpoint) traffic.Counters {
			return traffic.SnapshotOnly(sysRoot, ep, wanted)
		}
	}
	c.mu.Lock()
	watching := c.watching
	drift := make(map[[2]string]int, len(c.drift))
	for k, v := range c.drift {
		drift[k] = v
	}
	c.mu.Unlock()
	readQPs := c.QPs
	if readQPs == nil {
		readQPs = ReadQPs
	}
	qps, qpErr := readQPs() // one dump for every NIC
	for _, n := range c.NICs {
		lv := n.Labels.Values()
		emit := func(name string, t prometheus.ValueType, v float64, extra ...string) {
			ch <- prometheus.MustNewConstMetric(c.descs[name], t, v, append(append([]string{}, lv...), extra...)...)
		}
		cnt := read(c.SysRoot, n.Endpoint)
		up := 0.0
		if len(cnt) > 0 {
			up = 1
		}
		emit("up", prometheus.GaugeValue, up)
		for _, nc := range nicCounters {
			v, ok := first(cnt, nc.native...)
			emit("counter_supported", prometheus.GaugeValue, b2f(ok), nc.name)
			if ok {
				emit(nc.name+"_total", prometheus.CounterValue, float64(v))
			}
		}
		var anyPFC, anyDur bool
		for _, dir := range []string{"tx", "rx"} {
			for p := 0; p < 8; p++ {
				ps := strconv.Itoa(p)
				names := make([]string, len(pfcFrames[dir]))
				for i, f := range pfcFrames[dir] {
					names[i] = strings.Replace(f, "%d", ps, 1)
				}
				if v, ok := first(cnt, names...); ok {
					anyPFC = true
					emit("pfc_pause_frames_total", prometheus.CounterValue, float64(v), dir, ps)
				}
				if v, ok := cnt[strings.Replace(pfcDuration[dir], "%d", ps, 1)]; ok {
					anyDur = true
					emit("pfc_pause_duration_seconds_total", prometheus.CounterValue, float64(v)/1e6, dir, ps)
				}
			}
		}
		emit("counter_supported", prometheus.GaugeValue, b2f(anyPFC), "pfc_pause_frames")
		emit("counter_supported", prometheus.GaugeValue, b2f(anyDur), "pfc_pause_duration_seconds")
		if upv, speed, ok := c.port(n); ok {
			emit("link_up", prometheus.GaugeValue, upv)
			emit("link_speed_bits", prometheus.GaugeValue, speed)
		}
		emit("counter_supported", prometheus.GaugeValue, b2f(qpErr == nil), "qps_error_state")
		if qpErr == nil && n.Endpoint.NIC != nil && n.Endpoint.NIC.Device != "" {
			q := qps[n.Endpoint.NIC.Device] // absent: the device has no QPs
			emit("qps", prometheus.GaugeValue, float64(q.Total))
			emit("qps_error_state", prometheus.GaugeValue, float64(q.Error))
		}
		if n.SpeedBits > 0 {
			emit("spec_speed_bits", prometheus.GaugeValue, n.SpeedBits)
		}
		if watching {
			ch := drift[[2]string{n.Labels.Host, n.Labels.NIC}]
			emit("dcb_drift", prometheus.GaugeValue, b2f(ch > 0))
			emit("dcb_drift_changes", prometheus.GaugeValue, float64(ch))
		}
	}
}

// port reads the RDMA port's state and rate from sysfs.
func (c *HostCollector) port(n NIC) (up, speed float64, ok bool) {
	dev := n.Endpoint.NIC.Device
	if dev == "" {
		return 0, 0, false
	}
	base := filepath.Join(c.SysRoot, "class/infiniband", dev, "ports/1")
	st, err := sysattr.Read(filepath.Join(base, "state"))
	if err != nil {
		return 0, 0, false
	}
	if strings.Contains(st, "ACTIVE") {
		up = 1
	}
	if r, err := sysattr.Read(filepath.Join(base, "rate")); err == nil {
		speed = ParseRate(r)
	}
	return up, speed, true
}

// ParseRate parses a sysfs RDMA port rate ("100 Gb/sec (4X EDR)",
// "2.5 Gb/sec (1X SDR)") into bits per second; 0 when it cannot.
func ParseRate(s string) float64 {
	f := strings.Fields(s)
	if len(f) < 2 {
		return 0
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	switch f[1] {
	case "Gb/sec":
		return v * 1e9
	case "Mb/sec":
		return v * 1e6
	}
	return 0
}

func first(c traffic.Counters, names ...string) (uint64, bool) {
	for _, n := range names {
		if v, ok := c[n]; ok {
			return v, true
		}
	}
	return 0, false
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
