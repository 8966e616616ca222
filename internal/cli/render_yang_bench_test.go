package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/fabgen"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/yangval"
	"github.com/fabctl/fabctl/yangval/libyang"
)

// renderOC256 renders the 256-switch pod (fabgen.Pod: 224 leaves, 32
// spines, 4,096 hosts x 8 rails) with every switch on the openconfig
// platform, and returns each switch's YANG payload and the port count.
func renderOC256(b *testing.B) ([]drivers.YANGPayload, int) {
	b.Helper()
	src := bytes.NewBuffer(nil)
	for _, line := range bytes.SplitAfter(fabgen.Generate(fabgen.Pod), []byte("\n")) {
		if bytes.HasPrefix(bytes.TrimSpace(line), []byte("platform")) {
			line = []byte("  platform    = \"openconfig\"\n")
		}
		src.Write(line)
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pod.fab.hcl"), src.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	f, _, _, _ := testFactory("FAB_SWITCH_PASSWORD=x")
	lf, err := loadFabric(f, dir, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	reg := f.Drivers()
	var out []drivers.YANGPayload
	ports := 0
	for _, u := range plan.Units(lf.Fabric) {
		if u.Device.Kind != "switch" {
			continue
		}
		d, err := renderDevice(reg, u, true)
		if err != nil {
			b.Fatal(err)
		}
		if d.yang == nil {
			b.Fatalf("%s: the %s driver renders no YANG payload (drivers.YANGRenderer)", d.Address, d.Driver)
		}
		seen := map[string]bool{}
		for _, o := range d.yang.Ops {
			if rest, ok := strings.CutPrefix(o.Path, "/openconfig-qos:qos/interfaces/interface["); ok {
				seen[rest[:strings.IndexByte(rest, ']')]] = true
			}
		}
		ports += len(seen)
		out = append(out, *d.yang)
	}
	if len(out) != 256 {
		b.Fatalf("%d switches rendered, want 256", len(out))
	}
	return out, ports
}

// BenchmarkValidate256 validates the rendered OpenConfig payloads of the
// 256-switch pod against ../shared/yang/openconfig per iteration, as
// `fabctl render --yang-dir` does (with libyang in a libyang build); the
// models are parsed once, outside the timing, devices validated in
// parallel as render does, byte-identical payloads once (payloads: the
// switches, validations: the distinct payloads validated). The issue's
// budget is 2 s. cpu-s/op is the process CPU time per iteration, which
// stays meaningful on a busy machine.
func BenchmarkValidate256(b *testing.B) {
	dir := testutil.Shared(b, "yang", "openconfig")
	s, err := yangval.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	payloads, ports := renderOC256(b)
	size := 0
	for _, p := range payloads {
		for _, o := range p.Ops {
			size += len(o.Val)
		}
	}
	models := &yangModels{root: filepath.Dir(dir), sets: map[string]*yangval.Schema{dir: s}}
	// with the driver's Tree (references resolved in the configuration
	// left on a factory-default device), and from the operations alone
	modes := []string{"tree", "ops"}
	if libyang.Available {
		// libyang validates the configuration left on the device: without
		// the tree (the factory interfaces) the OpenConfig payload is
		// refused, as a device without those interfaces refuses it
		modes = modes[:1]
	}
	for _, mode := range modes {
		b.Run(mode, func(b *testing.B) {
			devs := make([]renderedDevice, len(payloads))
			b.SetBytes(int64(size))
			b.ResetTimer()
			cpu0 := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				for j := range payloads {
					p := payloads[j]
					if mode == "ops" {
						p.Tree = nil
					}
					devs[j] = renderedDevice{yang: &p}
				}
				if err := validateRendered(models, devs); err != nil {
					b.Fatal(err)
				}
				for _, d := range devs {
					if len(d.YANG.Errors) > 0 {
						b.Fatalf("rendered payload invalid: %+v", d.YANG.Errors[0])
					}
				}
			}
			b.ReportMetric((testutil.CPUTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(ports), "ports") // after ResetTimer, which drops metrics
			distinct := map[[32]byte]bool{}
			for _, p := range payloads {
				if mode == "ops" {
					p.Tree = nil
				}
				distinct[payloadKey(dir, p)] = true
			}
			b.ReportMetric(float64(len(payloads)), "payloads")
			b.ReportMetric(float64(len(distinct)), "validations")
		})
	}
}
