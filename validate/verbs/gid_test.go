package verbs

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// fixture writes a sysfs tree (path -> content) under a temporary root.
func fixture(t *testing.T, files map[string]string) Sysfs {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Sysfs{Root: root}
}

const (
	gidLL   = "fe80:0000:0000:0000:5054:00ff:fe12:3456"
	gidV4a  = "0000:0000:0000:0000:0000:ffff:c612:0001" // 198.18.0.1
	gidV4b  = "0000:0000:0000:0000:0000:ffff:c612:0101" // 198.18.1.1
	gidV6   = "2001:0db8:0000:0000:0000:0000:0000:0001"
	ibPort1 = "class/infiniband/mlx5_0/ports/1/"
)

// A ConnectX-style RoCE port with v1 and v2 GIDs for a link-local, an
// IPv4 and an IPv6 address, on two netdevs (a VLAN interface).
func roceFixture(t *testing.T) Sysfs {
	f := map[string]string{
		ibPort1 + "state":                                 "4: ACTIVE",
		ibPort1 + "link_layer":                            "Ethernet",
		ibPort1 + "lid":                                   "0x0",
		ibPort1 + "rate":                                  "100 Gb/sec (4X EDR)",
		"class/infiniband/mlx5_0/node_type":               "1: CA",
		"class/infiniband/mlx5_0/device/numa_node":        "1",
		"class/net/ens1f0/device/infiniband/mlx5_0/.keep": "",
		"devices/system/node/node1/cpulist":               "8-11,24",
	}
	gids := []struct{ gid, typ, nd string }{
		{gidLL, GIDTypeRoCEv1, "ens1f0"}, {gidLL, GIDTypeRoCEv2, "ens1f0"},
		{gidV4a, GIDTypeRoCEv1, "ens1f0"}, {gidV4a, GIDTypeRoCEv2, "ens1f0"},
		{gidV6, GIDTypeRoCEv1, "ens1f0"}, {gidV6, GIDTypeRoCEv2, "ens1f0"},
		{gidV4b, GIDTypeRoCEv1, "ens1f0.100"}, {gidV4b, GIDTypeRoCEv2, "ens1f0.100"},
	}
	for i, g := range gids {
		n := string(rune('0' + i))
		f[ibPort1+"gids/"+n] = g.gid
		f[ibPort1+"gid_attrs/types/"+n] = g.typ
		f[ibPort1+"gid_attrs/ndevs/"+n] = g.nd
	}
	// Unpopulated slots read as zeroes (and their types fail to read).
	f[ibPort1+"gids/9"] = "0000:0000:0000:0000:0000:0000:0000:0000"
	return fixture(t, f)
}

func TestSelectGID(t *testing.T) {
	sys := roceFixture(t)
	table, err := sys.GIDTable("mlx5_0", 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(table) != 8 {
		t.Fatalf("GID table: %d entries, want 8 (the zero slot skipped): %+v", len(table), table)
	}
	for _, tc := range []struct {
		name    string
		choice  GIDChoice
		want    int
		wantErr string
	}{
		// perftest's score: IPv4 (+100), not link-local (+10), v2 (+2): the
		// first IPv4 v2 GID.
		{name: "auto IPv4 prefers RoCEv2", choice: GIDChoice{Index: -1}, want: 3},
		{name: "auto IPv6", choice: GIDChoice{Index: -1, IPv6: true}, want: 5},
		{name: "v1 only", choice: GIDChoice{Index: -1, Type: GIDTypeRoCEv1}, want: 2},
		{name: "by netdev", choice: GIDChoice{Index: -1, Netdev: "ens1f0.100"}, want: 7},
		{name: "by address", choice: GIDChoice{Index: -1, Addr: netip.MustParseAddr("198.18.1.1")}, want: 7},
		{name: "explicit", choice: GIDChoice{Index: 1}, want: 1},
		{name: "explicit missing", choice: GIDChoice{Index: 12}, wantErr: "has no GID at index 12; GIDs: [0] fe80"},
		{name: "explicit wrong type", choice: GIDChoice{Index: 2, Type: GIDTypeRoCEv2}, wantErr: "GID index 2 is IB/RoCE v1, not RoCE v2"},
		{name: "address absent", choice: GIDChoice{Index: -1, Addr: netip.MustParseAddr("10.0.0.1")}, wantErr: "has no GID for address 10.0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := SelectGID("mlx5_0", 1, table, tc.choice)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if e.Index != tc.want {
				t.Errorf("index %d (%s %s), want %d", e.Index, e.GID, e.Type, tc.want)
			}
		})
	}
}

// rxe: RoCEv2 only, IPv4 GID at index 1 (as measured in the VM testbed),
// the netdev named by "parent", no NUMA node.
func TestSoftRoCEDevice(t *testing.T) {
	sys := fixture(t, map[string]string{
		"class/infiniband/rxe_a/parent":                    "fa",
		"class/infiniband/rxe_a/node_type":                 "1: CA",
		"class/infiniband/rxe_a/ports/1/state":             "4: ACTIVE",
		"class/infiniband/rxe_a/ports/1/link_layer":        "Ethernet",
		"class/infiniband/rxe_a/ports/1/gids/0":            gidLL,
		"class/infiniband/rxe_a/ports/1/gid_attrs/types/0": GIDTypeRoCEv2,
		"class/infiniband/rxe_a/ports/1/gid_attrs/ndevs/0": "fa",
		"class/infiniband/rxe_a/ports/1/gids/1":            gidV4a,
		"class/infiniband/rxe_a/ports/1/gid_attrs/types/1": GIDTypeRoCEv2,
		"class/infiniband/rxe_a/ports/1/gid_attrs/ndevs/1": "fa",
		"class/infiniband/siw_w/node_type":                 "4: RNIC",
		"class/infiniband/siw_w/ports/1/gid_attrs/ndevs/0": "wa",
		"devices/system/node/node0/cpulist":                "0",
	})
	d, err := sys.DeviceForNetdev("fa")
	if err != nil || d != "rxe_a" {
		t.Fatalf("DeviceForNetdev(fa) = %q, %v", d, err)
	}
	if d, err := sys.DeviceForNetdev("wa"); err != nil || d != "siw_w" {
		t.Fatalf("DeviceForNetdev(wa) = %q, %v", d, err)
	}
	if _, err := sys.DeviceForNetdev("nope"); err == nil || !strings.Contains(err.Error(), "devices: rxe_a, siw_w") {
		t.Fatalf("DeviceForNetdev(nope) err = %v", err)
	}
	table, err := sys.GIDTable("rxe_a", 1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := SelectGID("rxe_a", 1, table, GIDChoice{Index: -1})
	if err != nil || e.Index != 1 {
		t.Fatalf("SelectGID = %+v, %v; want index 1", e, err)
	}
	if _, err := SelectGID("rxe_a", 1, table, GIDChoice{Index: -1, Type: GIDTypeRoCEv1}); err == nil ||
		!strings.Contains(err.Error(), "has no GID of type IB/RoCE v1") {
		t.Fatalf("v1 on rxe: %v", err)
	}
	if tr := sys.Transport("siw_w"); tr != "iwarp" {
		t.Errorf("siw transport %q", tr)
	}
	if tr := sys.Transport("rxe_a"); tr != "ib" {
		t.Errorf("rxe transport %q", tr)
	}
	if n := sys.NUMAFor("rxe_a", "fa"); n.Node != -1 {
		t.Errorf("rxe NUMA %+v, want none", n)
	}
	ps, err := sys.Port("rxe_a", 1)
	if err != nil || ps.State != "ACTIVE" || ps.LinkLayer != LinkEthernet {
		t.Errorf("Port = %+v, %v", ps, err)
	}
	if _, err := sys.Port("mlx9", 1); err == nil || !strings.Contains(err.Error(), `no RDMA device "mlx9"`) {
		t.Errorf("missing device: %v", err)
	}
	if _, err := sys.GIDTable("rxe_a", 2); err == nil || !strings.Contains(err.Error(), "has no port 2") {
		t.Errorf("missing port: %v", err)
	}
}

func TestNUMAAndPlacement(t *testing.T) {
	sys := roceFixture(t)
	if d, err := sys.DeviceForNetdev("ens1f0"); err != nil || d != "mlx5_0" {
		t.Fatalf("DeviceForNetdev = %q, %v", d, err)
	}
	n := sys.NUMAFor("mlx5_0", "ens1f0")
	if n.Node != 1 || cpuList(n.CPUs) != "8-11,24" {
		t.Fatalf("NUMA %+v", n)
	}
	var got []int
	setaff := func(pid int, set *unix.CPUSet) error {
		for c := 0; c < 64; c++ {
			if set.IsSet(c) {
				got = append(got, c)
			}
		}
		return nil
	}
	var inherited unix.CPUSet // what taskset or a cpuset left the process
	getaff := func(pid int, set *unix.CPUSet) error { *set = inherited; return nil }
	for c := 0; c < 32; c++ {
		inherited.Set(c)
	}
	l := Local{Device: "mlx5_0", Netdev: "ens1f0"}
	notes := placeWith(sys, &l, getaff, setaff)
	if cpuList(got) != "8-11,24" || l.NUMANode == nil || *l.NUMANode != 1 {
		t.Fatalf("pinned to %v, node %v", got, l.NUMANode)
	}
	if len(notes) != 1 || !strings.Contains(notes[0], "pinned to CPUs 8-11,24 (NUMA node 1 of mlx5_0)") {
		t.Errorf("notes %q", notes)
	}
	// Explicit CPUs win; a software device is not pinned.
	got = nil
	l = Local{Device: "mlx5_0", CPUs: []int{2, 3}}
	placeWith(sys, &l, getaff, setaff)
	if cpuList(got) != "2-3" {
		t.Errorf("explicit CPUs: %v", got)
	}
	got = nil
	sw := fixture(t, map[string]string{"class/infiniband/rxe_a/parent": "fa"})
	l = Local{Netdev: "fa"}
	notes = placeWith(sw, &l, getaff, setaff)
	if got != nil || l.Device != "rxe_a" || !strings.Contains(notes[0], "rxe_a reports no NUMA node") {
		t.Errorf("software device: pinned %v, device %q, notes %q", got, l.Device, notes)
	}
	// A process kept on some CPUs (taskset 9-10,30) is narrowed to the
	// node's CPUs among them, never moved off them.
	inherited = unix.CPUSet{}
	for _, c := range []int{9, 10, 30} {
		inherited.Set(c)
	}
	got = nil
	l = Local{Device: "mlx5_0", Netdev: "ens1f0"}
	notes = placeWith(sys, &l, getaff, setaff)
	if cpuList(got) != "9-10" || len(notes) != 1 || !strings.Contains(notes[0], "pinned to CPUs 9-10 (NUMA node 1 of mlx5_0, within this process's CPUs 9-10,30)") {
		t.Errorf("inherited affinity: pinned %v, notes %q", got, notes)
	}
	// Kept off the node entirely (taskset 0-3): left there, and said so.
	inherited = unix.CPUSet{}
	for c := 0; c < 4; c++ {
		inherited.Set(c)
	}
	got = nil
	l = Local{Device: "mlx5_0", Netdev: "ens1f0"}
	notes = placeWith(sys, &l, getaff, setaff)
	if got != nil || len(notes) != 1 || !strings.Contains(notes[0], "NUMA node 1 of mlx5_0 is CPUs 8-11,24, outside this process's CPUs 0-3") || l.NUMANode == nil {
		t.Errorf("affinity off the node: pinned %v, notes %q", got, notes)
	}
	// Requested CPUs are used as they are, whatever the inherited affinity.
	got = nil
	l = Local{Device: "mlx5_0", CPUs: []int{20}}
	placeWith(sys, &l, getaff, setaff)
	if cpuList(got) != "20" {
		t.Errorf("requested CPUs under an affinity: %v", got)
	}
}

func mustAddr(s string) netip.Addr { return netip.MustParseAddr(s) }
