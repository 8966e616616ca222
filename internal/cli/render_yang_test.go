package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/switch/gnmicore"
	"github.com/fabctl/fabctl/drivers/switch/openconfig"
	"github.com/fabctl/fabctl/drivers/switch/srlinux"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
	"github.com/fabctl/fabctl/yangval/check"
	"github.com/fabctl/fabctl/yangval/libyang"
)

// wantValidator is the validator render --yang-dir names in this build.
func wantValidator() string {
	if libyang.Available {
		return validatorLibYANG
	}
	return validatorGoYANG
}

// yangDriver renders a fixed YANG payload for every switch.
type yangDriver struct {
	renderDriver
	payload drivers.YANGPayload
}

func (d *yangDriver) YANGPayload(drivers.Target) (drivers.YANGPayload, error) { return d.payload, nil }

// corpusPayload is the payload of stages of operations (the corpus's
// base, then a violation) as the set's driver renders it: the
// operations, and the configuration they leave on the platform's factory
// configuration (Platform.Factory of a switch with the corpus's
// interfaces), each stage applied as one SetRequest, as the gNMI target
// receives them.
func corpusPayload(t *testing.T, set string, ifs []string, stages ...[]gnmitarget.Op) drivers.YANGPayload {
	t.Helper()
	p := drivers.YANGPayload{Models: set}
	sw := &intent.Switch{}
	for _, n := range ifs {
		sw.Ports = append(sw.Ports, intent.Port{Name: n})
	}
	var tree map[string]any
	switch set {
	case "srlinux":
		tree = srlinux.Platform{}.Factory(sw)
	case "openconfig":
		tree = openconfig.Platform{}.Factory(sw)
	default:
		t.Fatalf("no factory for model set %s", set)
	}
	for _, ops := range stages {
		var gops []gnmicore.Op
		for _, o := range ops {
			p.Ops = append(p.Ops, drivers.YANGOp{Op: o.Op, Path: o.Path, Val: o.Val})
			gops = append(gops, gnmicore.Op{Op: o.Op, Path: o.Path, Val: o.Val})
		}
		var err error
		if tree, err = gnmicore.ApplyOps(tree, gops); err != nil {
			t.Fatal(err)
		}
	}
	var err error
	if p.Tree, err = json.Marshal(tree); err != nil {
		t.Fatal(err)
	}
	return p
}

// reQualified is a module prefix of a path element; libyang names data
// nodes by their schema path (/srl_nokia-qos:qos/...[k='v']), the corpus
// by gNMI path strings (/qos/...[k=v]).
var reQualified = regexp.MustCompile(`/[A-Za-z_][A-Za-z0-9_.-]*:([A-Za-z_])`)

// gnmiPath rewrites a libyang data path as a gNMI path string (module
// prefixes and key quotes dropped) for comparison with the corpus.
func gnmiPath(p string) string {
	return strings.ReplaceAll(reQualified.ReplaceAllString(p, "/$1"), "'", "")
}

// reportLine finds the report line for path (a gNMI path string) whose
// message contains one of reasons; it returns the line or "".
func reportLine(stderr, path string, reasons ...string) string {
	for _, line := range strings.Split(stderr, "\n") {
		rest, ok := strings.CutPrefix(line, "  ")
		at, _, _ := strings.Cut(rest, ": ")
		if !ok || !strings.HasPrefix(gnmiPath(at), path) {
			continue
		}
		for _, r := range reasons {
			if r != "" && strings.Contains(line, r) {
				return line
			}
		}
	}
	return ""
}

// runYANG renders payload for switch leaf1 of the testbed spec with
// --yang-dir root and returns the exit code and stderr.
func runYANG(t *testing.T, root string, payload drivers.YANGPayload) (ExitCode, string) {
	t.Helper()
	yd := &yangDriver{payload: payload}
	f, _, errOut := renderFactory(t, nil)
	reg := drivers.NewRegistry()
	if err := reg.Register("sonic", func() drivers.Driver { return yd }); err != nil {
		t.Fatal(err)
	}
	f.Drivers = func() *drivers.Registry { return reg }
	code := runCLI(f, "render", "--yang-dir", root, "--device", "leaf1", testbedSpec)
	return code, errOut.String()
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
			run := func(t *testing.T, stages ...[]gnmitarget.Op) (ExitCode, string) {
				return runYANG(t, root, corpusPayload(t, set, c.Interfaces, stages...))
			}
			code, stderr := run(t, c.Base)
			if code != ExitOK || !strings.Contains(stderr, "YANG: switch.leaf1: valid against the "+set+" models in "+filepath.Join(root, set)+" ("+wantValidator()+")") {
				t.Fatalf("valid base: exit %d\n%s", code, stderr)
			}
			for _, v := range c.Violations {
				t.Run(v.Name, func(t *testing.T) {
					code, stderr := run(t, c.Base, v.Ops)
					if code != ExitError {
						t.Errorf("exit %d, want %d\n%s", code, ExitError, stderr)
					}
					reasons := []string{v.Reason}
					if libyang.Available {
						reasons = append(reasons, v.LibYANG)
					}
					if reportLine(stderr, v.Path, reasons...) == "" || !strings.Contains(stderr, "YANG: switch.leaf1: ") {
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

// TestRenderYANGConstraints: each constraint class only libyang
// evaluates (the gNMI target's constraint corpus: SR Linux classifier on
// the interface entry, ECN slope without its buffer-allocation profile,
// scheduler, classifier and PFC musts; an OpenConfig when and a leafref
// outside the payload; the SONiC emulator's CONFIG_DB probes: PFC
// watchdog times vs the poll interval, WRED max >= min, a leafref) is
// refused by render --yang-dir with the model's own message, the
// constraint's kind and "(libyang)", and the valid base (or the fixed
// fragment) passes.
func TestRenderYANGConstraints(t *testing.T) {
	if !libyang.Available {
		testutil.SkipOrFail(t, "this build has no libyang (go test -tags libyang, as make test does with libyang2-dev)")
	}
	root := filepath.Dir(testutil.Shared(t, "yang", "srlinux"))
	for _, set := range []string{"srlinux", "openconfig"} {
		t.Run(set, func(t *testing.T) {
			testutil.Shared(t, "yang", set)
			c, err := gnmitarget.LoadCorpus(filepath.Join("..", "..", "testbed", "gnmitarget", "testdata", "constraints", set+".json"))
			if err != nil {
				t.Fatal(err)
			}
			code, stderr := runYANG(t, root, corpusPayload(t, set, c.Interfaces, c.Base))
			if code != ExitOK || !strings.Contains(stderr, "valid against the "+set+" models in "+filepath.Join(root, set)+" (libyang)") {
				t.Fatalf("valid base: exit %d\n%s", code, stderr)
			}
			for _, v := range c.Violations {
				t.Run(v.Name, func(t *testing.T) {
					code, stderr := runYANG(t, root, corpusPayload(t, set, c.Interfaces, c.Base, v.Ops))
					line := reportLine(stderr, v.Path, v.Reason)
					if code != ExitError || line == "" || !strings.Contains(line, "["+v.Class) || !strings.HasSuffix(line, "(libyang)") {
						t.Errorf("want exit %d and a libyang %s line for %s with %q, got exit %d:\n%s", ExitError, v.Class, v.Path, v.Reason, code, stderr)
					}
				})
			}
		})
	}
	t.Run("sonic", func(t *testing.T) {
		testutil.Shared(t, "yang", "sonic")
		for _, p := range sonicProbes(t) {
			t.Run(p.Name, func(t *testing.T) {
				code, stderr := runYANG(t, root, drivers.YANGPayload{Models: "sonic", ConfigDB: p.Bad})
				if code != ExitError || !strings.Contains(stderr, p.Reason) || !strings.Contains(stderr, "["+p.Class) {
					t.Errorf("bad fragment: want exit %d and a %s line with %q, got exit %d:\n%s", ExitError, p.Class, p.Reason, code, stderr)
				}
				if code, stderr := runYANG(t, root, drivers.YANGPayload{Models: "sonic", ConfigDB: p.Fixed}); code != ExitOK {
					t.Errorf("fixed fragment: exit %d\n%s", code, stderr)
				}
			})
		}
	})
}

// sonicProbe is one CONFIG_DB probe of testbed/sonicemu/testdata/constraints.json.
type sonicProbe struct {
	Name   string          `json:"name"`
	Class  string          `json:"class"`
	Bad    json.RawMessage `json:"bad"`
	Fixed  json.RawMessage `json:"fixed"`
	Reason string          `json:"reason"`
}

func sonicProbes(t *testing.T) []sonicProbe {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testbed", "sonicemu", "testdata", "constraints.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Probes []sonicProbe `json:"probes"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Probes) == 0 {
		t.Fatal("no probes")
	}
	return doc.Probes
}

// TestRenderYANGGoYANGOnly: without libyang render says so, on every
// device and in the summary, and its verdict is goyang's: a must
// violation (the SR Linux classifier on the interface entry) passes
// unseen. It also runs in a build without the libyang tag, where it is
// what render does.
func TestRenderYANGGoYANGOnly(t *testing.T) {
	root := filepath.Dir(testutil.Shared(t, "yang", "srlinux"))
	c, err := gnmitarget.LoadCorpus(filepath.Join("..", "..", "testbed", "gnmitarget", "testdata", "constraints", "srlinux.json"))
	if err != nil {
		t.Fatal(err)
	}
	p := corpusPayload(t, "srlinux", c.Interfaces, c.Base, c.Violations[0].Ops)
	devs := []renderedDevice{{Address: "switch.leaf1", yang: &p}}
	if err := validateRendered(&yangModels{root: root, noLibYANG: true}, devs); err != nil {
		t.Fatal(err)
	}
	var w strings.Builder
	if code := reportYANG(&w, devs, true); code != ExitOK {
		t.Fatalf("goyang refused a payload only libyang refuses: exit %d\n%s", code, w.String())
	}
	if devs[0].YANG.Validator != validatorGoYANG || !strings.Contains(w.String(), "valid against the srlinux models in "+filepath.Join(root, "srlinux")+" (goyang)") ||
		!strings.Contains(w.String(), "YANG: validated by goyang alone: ") || !strings.Contains(w.String(), "must, when and if-feature NOT evaluated") {
		t.Errorf("report does not say goyang alone ran:\n%s", w.String())
	}
	if !libyang.Available {
		return
	}
	devs[0].YANG = nil
	if err := validateRendered(&yangModels{root: root}, devs); err != nil {
		t.Fatal(err)
	}
	w.Reset()
	if code := reportYANG(&w, devs, true); code != ExitError || devs[0].YANG.Validator != validatorLibYANG ||
		!strings.Contains(w.String(), "YANG: validated by libyang ") {
		t.Errorf("libyang: exit %d\n%s", code, w.String())
	}
}

// TestRenderYANGSharedVerdicts: byte-identical payloads are validated
// once and every device gets the verdict; a payload that differs is
// validated on its own.
func TestRenderYANGSharedVerdicts(t *testing.T) {
	root := filepath.Dir(testutil.Shared(t, "yang", "srlinux"))
	c, err := gnmitarget.LoadCorpus(filepath.Join("..", "..", "testbed", "gnmitarget", "testdata", "violations", "srlinux.json"))
	if err != nil {
		t.Fatal(err)
	}
	good := corpusPayload(t, "srlinux", c.Interfaces, c.Base)
	bad := corpusPayload(t, "srlinux", c.Interfaces, c.Base, c.Violations[1].Ops)
	bad2 := corpusPayload(t, "srlinux", c.Interfaces, c.Base, c.Violations[1].Ops)
	devs := []renderedDevice{{Address: "a", yang: &bad}, {Address: "b", yang: &good}, {Address: "c", yang: &bad2}}
	payloadKey := func(dir string, p drivers.YANGPayload) [32]byte { return check.PayloadKey(dir, checkPayload(&p)) }
	if payloadKey("d", bad) != payloadKey("d", bad2) || payloadKey("d", bad) == payloadKey("d", good) || payloadKey("d", bad) == payloadKey("e", bad) {
		t.Fatal("payload keys")
	}
	if err := validateRendered(&yangModels{root: root}, devs); err != nil {
		t.Fatal(err)
	}
	if len(devs[0].YANG.Errors) == 0 || len(devs[2].YANG.Errors) != len(devs[0].YANG.Errors) || len(devs[1].YANG.Errors) != 0 {
		t.Fatalf("verdicts: a %d, b %d, c %d errors", len(devs[0].YANG.Errors), len(devs[1].YANG.Errors), len(devs[2].YANG.Errors))
	}
	devs[0].YANG.Errors[0].Path = "changed"
	if devs[2].YANG.Errors[0].Path == "changed" {
		t.Error("devices share one errors slice")
	}
}
