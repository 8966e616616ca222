package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
)

// yangDriver renders a fixed YANG payload for every switch.
type yangDriver struct {
	renderDriver
	payload drivers.YANGPayload
}

func (d *yangDriver) YANGPayload(drivers.Target) (drivers.YANGPayload, error) { return d.payload, nil }

// corpusPayload is the payload of ops (the corpus's base plus a
// violation).
func corpusPayload(set string, ops []gnmitarget.Op) drivers.YANGPayload {
	p := drivers.YANGPayload{Models: set}
	for _, o := range ops {
		p.Ops = append(p.Ops, drivers.YANGOp{Op: o.Op, Path: o.Path, Val: o.Val})
	}
	return p
}

// TestRenderYANGCorpus: the schema violations the gNMI target refuses
// (testbed/gnmitarget/testdata/violations) are caught offline by render
// --yang-dir, per device and path, with exit status 1.
func TestRenderYANGCorpus(t *testing.T) {
	for _, set := range []string{"openconfig", "srlinux"} {
		t.Run(set, func(t *testing.T) {
			root := filepath.Dir(testutil.Shared(t, "yang", set))
			c, err := gnmitarget.LoadCorpus(filepath.Join("..", "..", "testbed", "gnmitarget", "testdata", "violations", set+".json"))
			if err != nil {
				t.Fatal(err)
			}
			run := func(t *testing.T, ops []gnmitarget.Op) (ExitCode, string) {
				yd := &yangDriver{payload: corpusPayload(set, ops)}
				f, _, errOut := renderFactory(t, nil)
				reg := drivers.NewRegistry()
				if err := reg.Register("sonic", func() drivers.Driver { return yd }); err != nil {
					t.Fatal(err)
				}
				f.Drivers = func() *drivers.Registry { return reg }
				code := runCLI(f, "render", "--yang-dir", root, "--device", "leaf1", testbedSpec)
				return code, errOut.String()
			}
			code, stderr := run(t, c.Base)
			if code != ExitOK || !strings.Contains(stderr, "YANG: switch.leaf1: valid against the "+set+" models in "+filepath.Join(root, set)) {
				t.Fatalf("valid base: exit %d\n%s", code, stderr)
			}
			for _, v := range c.Violations {
				t.Run(v.Name, func(t *testing.T) {
					code, stderr := run(t, append(append([]gnmitarget.Op(nil), c.Base...), v.Ops...))
					if code != ExitError {
						t.Errorf("exit %d, want %d\n%s", code, ExitError, stderr)
					}
					var hit bool
					for _, line := range strings.Split(stderr, "\n") {
						hit = hit || (strings.HasPrefix(line, "  "+v.Path) && strings.Contains(line, v.Reason))
					}
					if !hit || !strings.Contains(stderr, "YANG: switch.leaf1: ") {
						t.Errorf("want a line for %s with %q under switch.leaf1, got:\n%s", v.Path, v.Reason, stderr)
					}
				})
			}
		})
	}
}

// TestRenderYANGExamples: every example's YANG-modelled payloads (the
// real sonic, openconfig and srlinux drivers) pass the vendors' models;
// devices without one are counted, not failed; the JSON view carries the
// result.
func TestRenderYANGExamples(t *testing.T) {
	root := filepath.Dir(testutil.Shared(t, "yang", "sonic"))
	testutil.Shared(t, "yang", "openconfig")
	testutil.Shared(t, "yang", "srlinux")
	dirs, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*"))
	sets := map[string]bool{}
	for _, dir := range dirs {
		if m, _ := filepath.Glob(filepath.Join(dir, "*.fab.hcl")); len(m) == 0 {
			continue
		}
		f, _, _, errOut := testFactory("FABCTL_TESTBED_PASSWORD=" + planTestSecret)
		if code := runCLI(f, "render", "--yang-dir", root, dir); code != ExitOK || !strings.Contains(errOut.String(), " valid, 0 invalid, ") {
			t.Errorf("%s: exit %d\n%s", dir, code, errOut)
		}
		for _, set := range []string{"sonic", "openconfig", "srlinux"} {
			if strings.Contains(errOut.String(), "valid against the "+set+" models") {
				sets[set] = true
			}
		}
	}
	if len(sets) != 3 {
		t.Errorf("model sets exercised by the examples: %v, want sonic, openconfig and srlinux", sets)
	}
	f, _, out, errOut := testFactory("FABCTL_TESTBED_PASSWORD=" + planTestSecret)
	if code := runCLI(f, "render", "--json", "--yang-dir", root, "--device", "leaf1", testbedSpec); code != ExitOK {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var doc struct {
		Devices []struct {
			YANG *yangResult `json:"yang"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Devices) != 1 || doc.Devices[0].YANG == nil || doc.Devices[0].YANG.Models != "sonic" || len(doc.Devices[0].YANG.Errors) != 0 {
		t.Errorf("JSON yang member: %s", out)
	}
	if errOut.Len() != 0 {
		t.Errorf("--json wrote to stderr: %s", errOut)
	}
	// a model set that is not there is an error, not a silent pass
	f, _, _, errOut = testFactory("FABCTL_TESTBED_PASSWORD=" + planTestSecret)
	if code := runCLI(f, "render", "--yang-dir", t.TempDir(), "--device", "leaf1", testbedSpec); code != ExitError ||
		!strings.Contains(errOut.String(), "no sonic YANG models in") {
		t.Errorf("missing models: exit %d\n%s", code, errOut)
	}
}
