package telemetry

import (
	"errors"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"

	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/validate/traffic"
)

// qpDumpMsg builds one RES_QP_GET dump message as the kernel's
// nldev.c lays it out: fill_nldev_handle (DEV_INDEX, DEV_NAME), then the
// RES_QP table (nla_nest_start) of RES_QP_ENTRY nests, each from
// fill_res_qp_entry (PORT_INDEX when set, LQPN, KERN_NAME or PID) and
// fill_res_qp_entry_query (..., RES_TYPE, RES_STATE).
func qpDumpMsg(dev string, states ...uint8) []byte {
	var b []byte
	b = append(b, nl.NewRtAttr(nldevAttrDevIndex, nlU32(3)).Serialize()...)
	b = append(b, nl.NewRtAttr(nldevAttrDevName, nl.ZeroTerminated(dev)).Serialize()...)
	table := nl.NewRtAttr(nldevAttrResQP|unix.NLA_F_NESTED, nil)
	for i, st := range states {
		e := table.AddRtAttr(nldevAttrResQPEnt|unix.NLA_F_NESTED, nil)
		if st != 0 { // a QP in RESET has no port yet ("In create_qp() port is not set yet")
			e.AddRtAttr(nldevAttrPort, nlU32(1))
		}
		e.AddRtAttr(nldevAttrResLQPN, nlU32(uint32(17+i)))
		e.AddRtAttr(26, []byte{2}) // RES_TYPE IB_QPT_RC
		e.AddRtAttr(nldevAttrResState, []byte{st})
	}
	return append(b, table.Serialize()...)
}

func TestParseQPDump(t *testing.T) {
	got, err := ParseQPDump([][]byte{
		qpDumpMsg("mlx5_0", 3, 3, 6, 0), // RTS, RTS, ERR, RESET
		qpDumpMsg("rxe0", 6, 6),
		qpDumpMsg("mlx5_1"),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]QPCount{"mlx5_0": {Total: 4, Error: 1}, "rxe0": {Total: 2, Error: 2}, "mlx5_1": {}}
	for dev, w := range want {
		if got[dev] != w {
			t.Errorf("%s: %+v, want %+v", dev, got[dev], w)
		}
	}
	if _, err := ParseQPDump([][]byte{nl.NewRtAttr(nldevAttrResQP, nil).Serialize()}); err == nil {
		t.Error("a message without a device name was accepted")
	}
}

// TestHostCollectorQPs: the QP counts of the NIC's RDMA device from the
// one dump per scrape; when the dump fails (no RDMA netlink: ib_core not
// loaded) the NIC says it lacks them instead of reporting 0.
func TestHostCollectorQPs(t *testing.T) {
	s := testutil.LoadSrc(t, twoHosts)
	nics, _ := NICs(s, nil)
	c := NewHostCollector(nics, t.TempDir())
	c.Read = func(string, traffic.Endpoint) traffic.Counters { return traffic.Counters{"rdma:duplicate_request": 1} }
	calls := 0
	c.QPs = func() (map[string]QPCount, error) {
		calls++
		return map[string]QPCount{"mlx5_0": {Total: 5, Error: 2}}, nil
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	h1eth0 := map[string]string{"host": "h1", "nic": "eth0"}
	if v, ok := value(t, reg, "fabctl_nic_qps_error_state", h1eth0); !ok || v != 2 {
		t.Errorf("qps_error_state = %v, %v", v, ok)
	}
	if v, ok := value(t, reg, "fabctl_nic_qps", map[string]string{"host": "h1", "nic": "eth1"}); !ok || v != 0 {
		t.Errorf("qps of a device without QPs = %v, %v", v, ok)
	}
	if calls != 2 { // two gathers: one dump per scrape, not per NIC
		t.Errorf("%d dumps for 2 scrapes", calls)
	}
	c.QPs = func() (map[string]QPCount, error) { return nil, errors.New("Failed to open NETLINK_RDMA socket") }
	if _, ok := value(t, reg, "fabctl_nic_qps_error_state", h1eth0); ok {
		t.Error("qps_error_state exported without a dump")
	}
	if v, ok := value(t, reg, "fabctl_nic_counter_supported", map[string]string{"host": "h1", "nic": "eth0", "counter": "qps_error_state"}); !ok || v != 0 {
		t.Errorf("counter_supported{qps_error_state} = %v, %v", v, ok)
	}
}

func FuzzParseQPDump(f *testing.F) {
	f.Add(qpDumpMsg("mlx5_0", 3, 6))
	f.Add(qpDumpMsg("rxe0"))
	f.Add([]byte{4, 0, 2, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseQPDump([][]byte{b}) // an error, never a panic
	})
}
