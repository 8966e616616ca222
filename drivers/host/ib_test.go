package host

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/intent"
)

// ibNIC is an NDR HCA that must hold the default partition (full),
// 0x8001 (full) and 0x0002 (limited), with IPoIB groups at 4096.
func ibNIC() *intent.NIC {
	return &intent.NIC{Name: "ib0", Device: "mlx5_0", Speed: 400e9, RDMAMTU: 4096,
		IB: &intent.IBPort{GUID: "0x0c42a10300000b01", MTU: 4096,
			PKeys: map[int]string{0x7fff: "full", 0x0001: "full", 0x0002: "limited"}}}
}

// TestIBFindings reads sysfs fixture trees (testdata/ib/<case>/sys, laid
// out as ib_core's sysfs.c shows a port) with recorded ibv_devinfo -v
// output, and checks what the host driver reports.
func TestIBFindings(t *testing.T) {
	for _, c := range []struct {
		name string
		nic  func(*intent.NIC)
		want []string // substrings of the findings, in order ("" none)
	}{
		{"active", nil, nil},
		{"active", func(n *intent.NIC) { n.IB.PKeys = nil }, nil}, // no subnet manager in the spec: P_Keys unchecked
		{"init-no-sm", nil, []string{
			"warning: ib0: mlx5_0 port 1 is INIT with no subnet manager (sm_lid 0)",
			"info: ib0: active MTU of mlx5_0 port 1 not checked"}},
		{"down", nil, []string{
			"warning: ib0: mlx5_0 port 1 link is Polling (state DOWN): no link to the switch",
			"warning: ib0: mlx5_0 port 1 trained at 10 Gb/sec (4X SDR), the spec says 400G",
			"info: ib0: active MTU"}},
		{"degraded", nil, []string{
			"warning: ib0: mlx5_0 port 1 has port GUID 0x0c42a10300000bff, the spec says guid = 0x0c42a10300000b01",
			"warning: ib0: mlx5_0 port 1 trained at 200 Gb/sec (4X HDR), the spec says 400G",
			"warning: ib0: mlx5_0 port 1's P_Key table lacks 0x0002 (limited)",
			"warning: ib0: mlx5_0 port 1 holds 0x0001 limited, the spec says full; 0x7fff limited, the spec says full",
			"info: ib0: mlx5_0 port 1 holds P_Keys the spec does not give it: 0x0005 (full)",
			"warning: ib0: mlx5_0 port 1 has active MTU 2048, below its partitions' IPoIB group MTU 4096"}},
		{"degraded", func(n *intent.NIC) { n.IB = &intent.IBPort{}; n.Speed = 0 }, []string{
			"warning: ib0: mlx5_0 port 1 has active MTU 2048, below the fabric's rdma_mtu 4096"}},
		{"ethernet", nil, []string{"warning: ib0: mlx5_0 port 1 runs link layer Ethernet, not InfiniBand"}},
		{"missing", nil, []string{"warning: ib0: no InfiniBand port mlx5_0/1 in sysfs"}},
		{"missing", func(n *intent.NIC) { n.Device = "" }, []string{"warning: ib0: no RDMA device"}},
		{"active", func(n *intent.NIC) { n.IB = nil }, nil}, // an Ethernet NIC: not an IB port
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join("testdata", "ib", c.name)
			oldRoot, oldInfo := sysRoot, ibvDevinfo
			t.Cleanup(func() { sysRoot, ibvDevinfo = oldRoot, oldInfo })
			sysRoot = filepath.Join(dir, "sys")
			ibvDevinfo = func(dev string) (string, error) {
				b, err := os.ReadFile(filepath.Join(dir, "ibv_devinfo.txt"))
				if err != nil {
					return "", errNoDevinfo
				}
				return string(b), nil
			}
			n := ibNIC()
			if c.nic != nil {
				c.nic(n)
			}
			var got []string
			for _, f := range ibFindings(n) {
				if f.Path != "nic/ib0/ib" {
					t.Errorf("finding path %q", f.Path)
				}
				got = append(got, f.Severity+": "+f.Message)
			}
			if len(got) != len(c.want) {
				t.Fatalf("findings:\n%s\nwant %d:\n%s", strings.Join(got, "\n"), len(c.want), strings.Join(c.want, "\n"))
			}
			for i := range got {
				if !strings.HasPrefix(got[i], c.want[i]) {
					t.Errorf("finding %d:\n got  %s\n want %s...", i, got[i], c.want[i])
				}
			}
		})
	}
}

func TestReadIBPort(t *testing.T) {
	old := sysRoot
	t.Cleanup(func() { sysRoot = old })
	sysRoot = filepath.Join("testdata", "ib", "active", "sys")
	oldInfo := ibvDevinfo
	t.Cleanup(func() { ibvDevinfo = oldInfo })
	ibvDevinfo = func(string) (string, error) { return "", errNoDevinfo }
	p, ok := readIBPort("mlx5_0", 1)
	want := ibPortInfo{Dev: "mlx5_0", Port: 1, State: "ACTIVE", PhysState: "LinkUp", Rate: "400 Gb/sec (4X NDR)", RateGbps: 400,
		LID: 5, SMLID: 1, LinkLayer: "InfiniBand", GUID: "0x0c42a10300000b01",
		PKeys: map[int]string{0x7fff: "full", 0x0001: "full", 0x0002: "limited"}}
	if !ok || !reflect.DeepEqual(p, want) {
		t.Errorf("got  %+v\nwant %+v", p, want)
	}
}

func TestParseActiveMTU(t *testing.T) {
	two := "hca_id:\tmlx4_0\n\t\tport:\t1\n\t\t\tactive_mtu:\t\t2048 (4)\n\t\tport:\t2\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n\t\t\tactive_mtu:\t\t4096 (5)\n"
	for _, c := range []struct {
		out        string
		port, want int
	}{
		{two, 1, 2048}, {two, 2, 4096}, {two, 3, 0}, {"active_mtu: 4096 (5)\n", 1, 0}, {"", 1, 0},
	} {
		if got := parseActiveMTU(c.out, c.port); got != c.want {
			t.Errorf("port %d of %q: %d, want %d", c.port, c.out, got, c.want)
		}
	}
}
