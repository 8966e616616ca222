package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fabctl/fabctl/drivers"
	"github.com/fabctl/fabctl/drivers/memory"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
)

// renderDriver is a driver that renders offline and must never be asked
// to read a device.
type renderDriver struct {
	memory.Driver
	files []drivers.RenderedFile
	err   error
}

func (d *renderDriver) Read(context.Context, drivers.Target) (intent.State, error) {
	return nil, errors.New("render must not contact a device")
}

func (d *renderDriver) Render(t drivers.Target) ([]drivers.RenderedFile, error) {
	if t.Credentials != nil {
		return nil, errors.New("render passed credentials to the driver")
	}
	sw, ok := t.Intent.(*intent.Switch)
	if !ok {
		return nil, fmt.Errorf("intent %T", t.Intent)
	}
	out := []drivers.RenderedFile{{Name: "native/ports.txt", Data: []byte(fmt.Sprintf("%s has %d ports\n", sw.Name, len(sw.Ports)))}}
	return append(out, d.files...), d.err
}

func renderFactory(t *testing.T, rd *renderDriver) (*Factory, *bytes.Buffer, *bytes.Buffer) {
	f, _, out, errOut := testFactory("FABCTL_TESTBED_PASSWORD=" + planTestSecret)
	reg := drivers.NewRegistry()
	if rd != nil {
		if err := reg.Register("sonic", func() drivers.Driver { return rd }); err != nil {
			t.Fatal(err)
		}
	}
	f.Drivers = func() *drivers.Registry { return reg }
	return f, out, errOut
}

const testbedSpec = "../../examples/testbed"

func TestRenderStdoutGolden(t *testing.T) {
	for _, tc := range []struct{ name, device string }{{"leaf1", "leaf1"}, {"h1", "host.h1"}} {
		f, out, errOut := renderFactory(t, nil)
		if code := runCLI(f, "render", "--device", tc.device, testbedSpec); code != ExitOK {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		testutil.Golden(t, filepath.Join("testdata", "plan", "render", tc.name+".golden"), out.Bytes())
		if !strings.Contains(out.String(), "no native payload: no driver for ") {
			t.Errorf("no native-payload note")
		}
		f, out2, _ := renderFactory(t, nil)
		runCLI(f, "render", "--device", tc.device, testbedSpec)
		if !bytes.Equal(out.Bytes(), out2.Bytes()) {
			t.Error("render output differs between two runs")
		}
	}
}

func TestRenderToDirectory(t *testing.T) {
	dir := t.TempDir()
	rd := &renderDriver{}
	f, out, errOut := renderFactory(t, rd)
	if code := runCLI(f, "render", "-o", dir, testbedSpec); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// Issue 40 (first run, defect 17): quiet by default, one note per
	// reason (not one line per host); -v lists every file by its path.
	testutil.Golden(t, filepath.Join("testdata", "plan", "render", "outdir.golden"), bytes.ReplaceAll(out.Bytes(), []byte(dir), []byte("OUT")))
	f, out, errOut = renderFactory(t, rd)
	if code := runCLI(f, "render", "-v", "-o", dir, testbedSpec); code != ExitOK {
		t.Fatalf("-v: exit %d: %s", code, errOut)
	}
	testutil.Golden(t, filepath.Join("testdata", "plan", "render", "outdir-verbose.golden"), bytes.ReplaceAll(out.Bytes(), []byte(dir), []byte("OUT")))
	for _, dev := range []string{"leaf1", "leaf2", "spine1", "h1", "h2", "h3", "h4"} {
		for _, name := range []string{"intent.json", "state.txt"} {
			b, err := os.ReadFile(filepath.Join(dir, dev, name))
			if err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(b, []byte(planTestSecret)) {
				t.Errorf("%s/%s contains the secret", dev, name)
			}
			if name == "intent.json" && !json.Valid(b) {
				t.Errorf("%s/intent.json is not JSON", dev)
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "leaf1", "native", "ports.txt"))
	if err != nil || string(b) != "leaf1 has 3 ports\n" {
		t.Errorf("native file: %q %v", b, err)
	}
	st, _ := os.ReadFile(filepath.Join(dir, "leaf1", "state.txt"))
	if !bytes.Contains(st, []byte("port/Ethernet0/pfc = 3\n")) || !bytes.Contains(st, []byte("tc/3/ecn/min = 150000\n")) {
		t.Errorf("state.txt:\n%s", st)
	}
}

// Issue 40 (first run, defect 17): a spec with errors stops render
// before anything is rendered, and says that, not "no device was read".
func TestRenderSpecErrorsTrailer(t *testing.T) {
	f, _, errOut := renderFactory(t, nil)
	if code := runCLI(f, "render", t.TempDir()); code != ExitError || !strings.Contains(errOut.String(), "nothing was rendered; fix the spec first") ||
		strings.Contains(errOut.String(), "no device was read") {
		t.Errorf("exit %d:\n%s", code, errOut)
	}
}

func TestRenderJSON(t *testing.T) {
	f, out, errOut := renderFactory(t, &renderDriver{})
	if code := runCLI(f, "render", "--json", "--device", "role:leaf", testbedSpec); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var doc struct {
		FormatVersion string `json:"format_version"`
		Devices       []struct {
			Address string            `json:"address"`
			Intent  map[string]any    `json:"intent"`
			State   map[string]string `json:"state"`
			Native  []struct{ Name, Data string }
			Note    string `json:"native_note"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Devices) != 6 || doc.Devices[0].Address != "switch.leaf1" || doc.Devices[1].Address != "switch.leaf2" {
		t.Fatalf("devices: %+v", doc.Devices)
	}
	if d := doc.Devices[0]; len(d.Native) != 1 || d.Native[0].Name != "native/ports.txt" || d.State["trust"] != "dscp" || d.Intent["name"] != "leaf1" {
		t.Errorf("leaf1: %+v", d)
	}
	// The device's driver (the fabctl driver) and address (the plan
	// address) are not the intent's way in and management address.
	if d := doc.Devices[0]; doc.FormatVersion != "2.0" || d.Intent["management_transport"] != "ssh" || d.Intent["management_address"] == nil ||
		d.Intent["driver"] != nil || d.Intent["address"] != nil || d.Intent["transport"] != "rocev2" {
		t.Errorf("format_version %q, leaf1 intent: %v", doc.FormatVersion, d.Intent)
	}
	if d := doc.Devices[1]; d.Note != "no driver for eos in this build" {
		t.Errorf("leaf2 note %q", d.Note)
	}
}

// TestRenderJSONKeysSnakeCase walks render --json's whole document, for
// switches, hosts and a subnet manager: every member name is snake_case,
// except in the objects whose keys are data (state paths, NCCL variable
// names, NUMA node numbers, P_Keys).
func TestRenderJSONKeysSnakeCase(t *testing.T) {
	snake := regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	dataKeys := map[string]bool{"state": true, "nccl": true, "numa_nodes": true, "pkeys": true}
	for _, specDir := range []string{testbedSpec, "../../examples/infiniband"} {
		f, out, errOut := renderFactory(t, &renderDriver{})
		if code := runCLI(f, "render", "--json", specDir); code != ExitOK {
			t.Fatalf("%s: exit %d: %s", specDir, code, errOut)
		}
		var doc any
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		kinds := map[string]bool{}
		var walk func(v any, at string, data bool)
		walk = func(v any, at string, data bool) {
			switch x := v.(type) {
			case map[string]any:
				for k, e := range x {
					if !data && !snake.MatchString(k) {
						t.Errorf("%s: key %q at %s is not snake_case", specDir, k, at)
					}
					if k == "kind" && at == ".devices[]" {
						kinds[e.(string)] = true
					}
					walk(e, at+"."+k, !data && dataKeys[k])
				}
			case []any:
				for _, e := range x {
					walk(e, at+"[]", false)
				}
			}
		}
		walk(doc, "", false)
		if len(kinds) < 2 {
			t.Errorf("%s: only device kinds %v walked", specDir, kinds)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		rd   *renderDriver
		args []string
		code ExitCode
		err  string
	}{
		{"no match", nil, []string{"--device", "nothing"}, ExitUsage, "no device matches --device nothing"},
		{"escaping name", &renderDriver{files: []drivers.RenderedFile{{Name: "../x"}}}, nil, ExitError, `rendered file name "../x" is not a clean relative path`},
		{"reserved name", &renderDriver{files: []drivers.RenderedFile{{Name: "state.txt"}}}, nil, ExitError, "reserved"},
		{"driver error", &renderDriver{err: errors.New("boom")}, nil, ExitError, "render switch.leaf1: sonic driver: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _, errOut := renderFactory(t, tc.rd)
			code := runCLI(f, append(append([]string{"render"}, tc.args...), testbedSpec)...)
			if code != tc.code || !strings.Contains(errOut.String(), tc.err) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errOut, tc.code, tc.err)
			}
		})
	}
}
