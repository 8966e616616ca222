package importer_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/internal/testutil"
)

// TestRoundTripNetnsHosts: two hosts in network namespaces, configured by
// hand with ip (an MTU of 9000, an address on each NIC, up), imported
// from an inventory naming only the hosts and their NICs: the written
// spec carries the fabric MTU and each NIC's addresses, and plans empty
// against the live namespaces; the fabric's MTU changed in it plans
// exactly that change on every host. A veth has no DCB (no software
// netdev in Linux implements dcbnl: the VM testbed's fabdcb module is the
// one that does), so its DCB settings are what the driver lists as not
// expressible, never left out by import nor planned.
func TestRoundTripNetnsHosts(t *testing.T) {
	testutil.RequireRoot(t, "creates network namespaces and veth pairs")
	dir := t.TempDir()
	var inv strings.Builder
	inv.WriteString("fabric \"hosts\" {\n  transport = \"rocev2\"\n}\n")
	var names []string
	for i := 1; i <= 2; i++ {
		ns := fmt.Sprintf("fabctl-import-h%d", i)
		testutil.Netns(t, ns)
		testutil.Run(t, "ip", "-n", ns, "link", "add", "v0a", "type", "veth", "peer", "name", "v0b")
		testutil.Run(t, "ip", "-n", ns, "link", "set", "v0a", "mtu", "9000")
		testutil.Run(t, "ip", "-n", ns, "addr", "add", fmt.Sprintf("198.18.40.%d/31", 2*i-1), "dev", "v0a")
		testutil.Run(t, "ip", "-n", ns, "link", "set", "v0a", "up")
		fmt.Fprintf(&inv, "\nhost \"h%d\" {\n  connect = \"netns:%s\"\n  nic \"v0a\" {}\n}\n", i, ns)
		names = append(names, fmt.Sprintf("h%d", i))
	}
	writeTest(t, filepath.Join(dir, "inventory.fab.hcl"), inv.String())
	res := importDir(t, dir, names)
	for _, l := range res.Report.LeftOut {
		t.Errorf("left out: %s %s (device %q, spec %q): %s", l.Device, l.Path, l.Live, l.Desired, l.Reason)
	}
	if res.Report.Read != len(names) {
		t.Fatalf("read %d devices, want %d", res.Report.Read, len(names))
	}
	src := string(res.HCL)
	t.Logf("written spec:\n%s", src)
	for _, want := range []string{"mtu       = 9000", `"198.18.40.1/31"`, `"198.18.40.3/31"`} {
		if !strings.Contains(src, want) {
			t.Errorf("the written spec lacks %s:\n%s", want, src)
		}
	}
	replaceSpec(t, dir, res.HCL)
	p := planDir(t, dir, names)
	for _, n := range names {
		dp := p.Device(n)
		if dp == nil || dp.Error != "" || dp.HasChanges() {
			t.Fatalf("plan of the imported spec on %s: %+v\n%s", n, dp, src)
		}
	}
	changed := strings.Replace(src, "mtu       = 9000", "mtu       = 4200", 1)
	if err := os.WriteFile(filepath.Join(dir, "imported.fab.hcl"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	p = planDir(t, dir, names)
	for _, n := range names {
		cs := changesOf(p, n)
		if len(cs) != 1 || cs[0].Path != "nic/v0a/mtu" || cs[0].After != "4200" {
			t.Errorf("%s: changes %+v, want exactly nic/v0a/mtu -> 4200", n, cs)
		}
	}
}
