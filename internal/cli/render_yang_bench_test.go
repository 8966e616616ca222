package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/fabgen"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/yangval"
	"github.com/fabctl/fabctl/yangval/check"
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
	models := &yangModels{root: filepath.Dir(dir)}
	models.check().Preloaded(dir, s)
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
				distinct[check.PayloadKey(dir, checkPayload(&p))] = true
			}
			b.ReportMetric(float64(len(payloads)), "payloads")
			b.ReportMetric(float64(len(distinct)), "validations")
		})
	}
}

// renderPod256 renders the 256-switch pod with every switch on platform
// ("" keeps fabgen's platforms: SONiC, Cumulus, EOS and NX-OS leaves,
// SONiC spines) and returns the switches that render a YANG-modelled
// payload.
func renderPod256(b *testing.B, platform string) []renderedDevice {
	b.Helper()
	src := fabgen.Generate(fabgen.Pod)
	if platform != "" {
		var out bytes.Buffer
		for _, line := range bytes.SplitAfter(src, []byte("\n")) {
			if bytes.HasPrefix(bytes.TrimSpace(line), []byte("platform")) {
				line = []byte("  platform    = \"" + platform + "\"\n")
			}
			out.Write(line)
		}
		src = out.Bytes()
	}
	if platform == "srlinux" {
		src = srlPortNames(src)
	}
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "pod.fab.hcl"), src, 0o644); err != nil {
		b.Fatal(err)
	}
	f, _, _, _ := testFactory("FAB_SWITCH_PASSWORD=x")
	lf, err := loadFabric(f, dir, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	reg := f.Drivers()
	var out []renderedDevice
	for _, u := range plan.Units(lf.Fabric) {
		if u.Device.Kind != "switch" {
			continue
		}
		d, err := renderDevice(reg, u, true)
		if err != nil {
			b.Fatal(err)
		}
		if d.yang != nil {
			out = append(out, d)
		}
	}
	if len(out) == 0 {
		b.Fatal("no YANG-modelled payloads rendered")
	}
	return out
}

// BenchmarkRenderYANGPod256 is `fabctl render --yang-dir ../shared/yang`
// of the 256-switch pod, validation only (rendering and model loading
// outside the timing): the pod as fabgen generates it (its SONiC
// switches carry YANG payloads) and every switch on sonic, srlinux and
// openconfig. With libyang it is libyang's verdict on each switch's
// resulting configuration (byte-identical payloads validated once).
// Reported: payloads (switches validated), validations (distinct
// payloads), invalid (must be 0), cpu-s/op (process CPU per pod). The
// issue's budget is 2 s per pod; the constraint counts per payload are
// yangval/libyang BenchmarkValidatePod256's.
//
//	go test -tags libyang -run '^$' -bench RenderYANGPod256 -benchtime 3x ./internal/cli/
func BenchmarkRenderYANGPod256(b *testing.B) {
	root := filepath.Dir(testutil.Shared(b, "yang", "sonic"))
	testutil.Shared(b, "yang", "srlinux")
	testutil.Shared(b, "yang", "openconfig")
	for _, variant := range []string{"native", "sonic", "srlinux", "openconfig"} {
		b.Run(variant, func(b *testing.B) {
			plat := variant
			if variant == "native" {
				plat = ""
			}
			devs := renderPod256(b, plat)
			models := &yangModels{root: root}
			distinct := map[[32]byte]bool{}
			for _, d := range devs {
				distinct[check.PayloadKey(models.check().Dir(d.yang.Models), checkPayload(d.yang))] = true
			}
			invalid := 0
			b.ResetTimer()
			cpu0 := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				for j := range devs {
					devs[j].YANG = nil
				}
				if err := validateRendered(models, devs); err != nil {
					b.Fatal(err)
				}
				invalid = 0
				for _, d := range devs {
					if len(d.YANG.Errors) > 0 {
						invalid++
					}
				}
			}
			b.ReportMetric((testutil.CPUTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
			b.ReportMetric(float64(len(devs)), "payloads")
			b.ReportMetric(float64(len(distinct)), "validations")
			b.ReportMetric(float64(invalid), "invalid")
			if invalid > 0 {
				b.Errorf("%d payloads invalid; first: %+v", invalid, firstIssue(devs))
			}
		})
	}
}

func firstIssue(devs []renderedDevice) any {
	for _, d := range devs {
		if d.YANG != nil && len(d.YANG.Errors) > 0 {
			return struct {
				Device string
				Issues []yangIssue
			}{d.Address, d.YANG.Errors[:min(3, len(d.YANG.Errors))]}
		}
	}
	return nil
}

// srlPortNames renames fabgen's ports for SR Linux, whose interface names
// are ethernet-<slot>/<connector>/<port> (srl_nokia-interfaces
// interface-all pattern; ports 1..128): a host port numbered N (EthernetN,
// swpN, Ethernet1/N) -> ethernet-1/(N/4+1)/(N%4+1), an uplink numbered
// UplinkBase+N or above -> ethernet-2/(N/4+1)/(N%4+1).
func srlPortNames(spec []byte) []byte {
	return rePodPort.ReplaceAllFunc(spec, func(m []byte) []byte {
		sub := rePodPort.FindSubmatch(m)
		n, _ := strconv.Atoi(string(sub[2]))
		slot := 1
		if n >= fabgen.UplinkBase {
			slot, n = 2, n-fabgen.UplinkBase
		}
		return []byte(fmt.Sprintf("ethernet-%d/%d/%d", slot, n/4+1, n%4+1))
	})
}

var rePodPort = regexp.MustCompile(`\b(Ethernet1/|Ethernet|swp)([0-9]+)\b`)
