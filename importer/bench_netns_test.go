package importer_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/importer"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
)

// BenchmarkImportNetns256 is the 256-host import over a real transport:
// 256 hosts in network namespaces (one veth NIC each, MTU and address
// set by hand with ip), read through the host driver's netns transport
// (netlink, sysfs) at plan's parallelism 8 and imported; one op is the
// reads and import's own work, end to end. Root (network namespaces):
//
//	flock /work/.maketest.lock go test ./importer/ -run '^$' -bench ImportNetns256 -benchtime 3x
func BenchmarkImportNetns256(b *testing.B) {
	testutil.RequireRoot(b, "creates 256 network namespaces")
	const hosts = 256
	var add, del strings.Builder
	for i := 0; i < hosts; i++ {
		fmt.Fprintf(&add, "netns add fabctl-imb-%d\n", i)
		fmt.Fprintf(&del, "netns del fabctl-imb-%d\n", i)
	}
	batch := func(input string, args ...string) error {
		cmd := exec.Command("ip", append(args, "-batch", "-")...)
		cmd.Stdin = strings.NewReader(input)
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %v: %v: %s", args, err, out)
		}
		return nil
	}
	_ = batch(del.String(), "-force")
	b.Cleanup(func() { _ = batch(del.String(), "-force") })
	if err := batch(add.String()); err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	var inv strings.Builder
	inv.WriteString("fabric \"netns256\" {\n  transport = \"rocev2\"\n}\n")
	var names []string
	for i := 0; i < hosts; i++ {
		ns := fmt.Sprintf("fabctl-imb-%d", i)
		cmds := fmt.Sprintf("link add v0a type veth peer name v0b\nlink set v0a mtu 9000\naddr add 198.19.%d.%d/31 dev v0a\nlink set v0a up\n", i/128, 2*(i%128)+1)
		if err := batch(cmds, "-n", ns); err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(&inv, "\nhost \"h%d\" {\n  connect = \"netns:%s\"\n  nic \"v0a\" {}\n}\n", i, ns)
		names = append(names, fmt.Sprintf("h%d", i))
	}
	if err := os.WriteFile(filepath.Join(dir, "inventory.fab.hcl"), []byte(inv.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	files, diags := spec.ReadFiles(dir)
	if diags.HasErrors() {
		b.Fatal(diags)
	}
	s := testutil.Load(b, dir, spec.LoadOptions{})
	fab := intent.Compile(s)
	opts := plan.Options{Parallelism: 8, Credentials: s.CredentialsByName, Targets: names}
	b.ResetTimer()
	t0, c0 := time.Now(), testutil.CPUTime()
	for i := 0; i < b.N; i++ {
		obs := map[string]*importer.Observed{}
		for _, o := range plan.Observe(context.Background(), fab, builtin.Registry(), opts) {
			obs[o.Address] = &importer.Observed{Live: o.Live, Err: o.Err, Fields: o.Fields, Unexpressible: o.Unexpressible, Read: o.Read}
		}
		res, err := importer.Import(files, obs, importer.Options{Name: filepath.Join(dir, "imported.fab.hcl"),
			Load: func(files []spec.File) (*spec.Spec, hcl.Diagnostics) {
				return spec.LoadFiles(files, spec.LoadOptions{Platforms: builtin.SpecPlatforms()})
			}})
		if err != nil {
			b.Fatal(err)
		}
		if res.Report.Read != hosts || len(res.Report.LeftOut) != 0 {
			b.Fatalf("read %d of %d, left out %d", res.Report.Read, hosts, len(res.Report.LeftOut))
		}
	}
	wall, cpu := time.Since(t0)/time.Duration(b.N), (testutil.CPUTime()-c0)/time.Duration(b.N)
	b.ReportMetric(float64(wall)/1e6, "wall-ms/op")
	b.ReportMetric(float64(cpu)/1e6, "cpu-ms/op")
	la, _ := os.ReadFile("/proc/loadavg")
	b.Logf("import of %d namespace hosts: wall %d ms, cpu %d ms; load average %s", hosts, wall.Milliseconds(), cpu.Milliseconds(), strings.Join(strings.Fields(string(la))[:min(3, len(strings.Fields(string(la))))], " "))
}
