package host

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/switchtest"
)

// FuzzHostPaths (issue 37): host paths built from labels are checked like
// rendered lines. For any spec the loader accepts, the host driver takes
// the intent (hostOf's name checks pass), and every sysfs, configfs and
// procfs path it builds from a NIC label or an RDMA device name stays
// inside its root with the name as exactly one path element: a label
// such as ../../etc/x never names another file.
func FuzzHostPaths(f *testing.F) {
	switchtest.FuzzSeeds(f)
	f.Fuzz(func(t *testing.T, port1, port2, desc, addr, user, nic, dev string) {
		in := switchtest.FuzzInput{Port1: "Ethernet0", Port2: "Ethernet4", Address: "192.0.2.1", User: "admin", NIC: nic, Device: dev}
		fab, ok := switchtest.FuzzLoad(t, "sonic", in)
		if !ok {
			return
		}
		if len(fab.Hosts) != 1 {
			t.Fatalf("%d hosts", len(fab.Hosts))
		}
		h := fab.Hosts[0]
		if _, err := hostOf(drivers.Target{Device: h.Device, Intent: h}); err != nil {
			t.Fatalf("the loader accepted what the host driver refuses: %v", err)
		}
		under := func(root, p, name string) {
			rel, err := filepath.Rel(root, p)
			if err != nil || rel == ".." || strings.HasPrefix(rel, "../") || filepath.Clean(p) != p {
				t.Errorf("%q builds %s, outside %s", name, p, root)
				return
			}
			if el := strings.Split(rel, "/"); !contains(el, name) {
				t.Errorf("%q is not one path element of %s", name, p)
			}
		}
		for _, n := range h.NICs {
			for _, netdev := range []string{n.Name, n.VLANName} {
				if netdev == "" {
					continue
				}
				under(sysRoot, ecnFile(netdev, "np", 3), netdev)
				under(sysRoot, cnpFile(netdev, "cnp_dscp"), netdev)
				under(sysRoot, sysDevice(netdev), netdev)
			}
			if n.Device != "" {
				under(cfgRoot, bnxtCCDir(n.Device), n.Device)
				under(cfgRoot, rdmacmPort(n.Device), n.Device)
			}
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
