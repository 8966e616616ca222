package libyang

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/fabctl/fabctl/drivers/switch/srlinux"
)

var repoRoot = filepath.Join("..", "..")

var (
	fabOnce sync.Once
	fabBin  string
	fabErr  error
)

// fabctl builds cmd/fabctl once per test binary (into a directory the
// process removes at exit, see TestMain).
func fabctl(t testing.TB) string {
	t.Helper()
	fabOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fabctl-libyang-")
		if err != nil {
			fabErr = err
			return
		}
		tmpDirs = append(tmpDirs, dir)
		fabBin = filepath.Join(dir, "fabctl")
		cmd := exec.Command("go", "build", "-o", fabBin, "./cmd/fabctl")
		cmd.Dir = repoRoot
		out, err := cmd.CombinedOutput()
		if err != nil {
			fabErr = fmt.Errorf("go build ./cmd/fabctl: %v\n%s", err, out)
		}
	})
	if fabErr != nil {
		t.Fatal(fabErr)
	}
	return fabBin
}

var tmpDirs []string

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range tmpDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// render runs `fabctl render -o out spec [--device d]...`.
func render(t testing.TB, spec, out string, devices ...string) {
	t.Helper()
	args := []string{"render", "-o", out, spec}
	for _, d := range devices {
		args = append(args, "--device", d)
	}
	cmd := exec.Command(fabctl(t), args...)
	cmd.Env = append(os.Environ(), "FAB_SWITCH_PASSWORD=x", "FAB_HOST_PASSWORD=x")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("fabctl %s: %v\n%s", strings.Join(args, " "), err, b)
	}
}

// payload is one rendered YANG-modelled file.
type payload struct {
	name    string // where it came from
	profile string
	set     *SetRequest
	db      ConfigDB
}

func loadPayload(t testing.TB, name string, b []byte) payload {
	t.Helper()
	// golden files start with '#' comment lines
	var lines [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if !bytes.HasPrefix(l, []byte("#")) {
			lines = append(lines, l)
		}
	}
	b = bytes.Join(lines, []byte("\n"))
	p := payload{name: name}
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	_, del := probe["deletes"]
	_, rep := probe["replaces"]
	_, upd := probe["updates"]
	if del || rep || upd {
		var req SetRequest
		if err := json.Unmarshal(b, &req); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		p.set = &req
		p.profile = "srlinux"
		for _, u := range append(append([]Update{}, req.Replace...), req.Update...) {
			if strings.HasPrefix(u.Path, "/openconfig-") {
				p.profile = "openconfig"
			}
		}
		return p
	}
	if err := json.Unmarshal(b, &p.db); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	p.profile = "sonic"
	return p
}

var reIfName = regexp.MustCompile(`interface\[name=([^\]]+)\]|"interface":"([^"]+)"`)

// validate validates p over the configuration the device has before it
// (its factory defaults and ports): SR Linux's system-reserved queues,
// PFC queues and forwarding classes for a 7220 IXR-D5
// (testdata/srlinux-7220-d5-factory.json, fabctl's own assumption in
// drivers/switch/srlinux/defaults.go without the feature-disabled
// output/queue); OpenConfig ports with their type; SONiC: FragmentBase
// (ports with lanes and speed, the buffer model and the lossless pool).
func (p payload) validate(t testing.TB, c *Context, factory []byte, maxErrors int, st *Stats) error {
	switch {
	case p.set != nil && p.profile == "srlinux":
		return c.ValidateSet(factory, *p.set, Options{MaxErrors: maxErrors, Stats: st})
	case p.set != nil:
		names := map[string]bool{}
		for _, u := range append(append([]Update{}, p.set.Replace...), p.set.Update...) {
			for _, m := range reIfName.FindAllStringSubmatch(u.Path+" "+strings.ReplaceAll(string(u.Val), " ", ""), -1) {
				names[m[1]+m[2]] = true
			}
		}
		var ifs []any
		for _, n := range sortedKeys(names) {
			ifs = append(ifs, map[string]any{"name": n, "config": map[string]any{"name": n, "type": "iana-if-type:ethernetCsmacd"}})
		}
		base, _ := json.Marshal(map[string]any{"openconfig-interfaces:interfaces": map[string]any{"interface": ifs}})
		return c.ValidateSet(base, *p.set, Options{MaxErrors: maxErrors, Stats: st})
	default:
		return c.ValidateConfigDB(MergeConfigDB(FragmentBase(p.db), p.db), Options{MaxErrors: maxErrors, Stats: st})
	}
}

// problems groups a payload's Errors by kind, message and schema path.
func problems(err error) []string {
	var es Errors
	if err == nil {
		return nil
	}
	if e, ok := err.(Errors); ok {
		es = e
	} else {
		return []string{err.Error()}
	}
	type group struct {
		n       int
		example string
	}
	groups := map[string]*group{}
	strip := regexp.MustCompile(`\[[^\]]*\]`)
	for _, e := range es {
		k := fmt.Sprintf("%s | %s | %s", e.Kind, strip.ReplaceAllString(e.Path, ""), e.Message)
		if e.Constraint != "" && e.Kind != KindLeafref && e.Kind != KindMandatory {
			k += " | " + e.Kind.String() + " " + strings.Join(strings.Fields(e.Constraint), " ")
		}
		if groups[k] == nil {
			groups[k] = &group{example: e.Path}
		}
		groups[k].n++
	}
	var out []string
	for k, g := range groups {
		out = append(out, fmt.Sprintf("%dx %s (e.g. %s)", g.n, k, g.example))
	}
	sort.Strings(out)
	return out
}

// TestRenderedPayloads renders every example spec with the fabctl of
// this tree, takes the driver goldens too, and validates every gNMI and
// CONFIG_DB payload with libyang, over the device's factory state. Any
// refusal fails the test (with the report: every problem, grouped);
// FABCTL_LIBYANG_REPORT=file writes the report to a file.
func TestRenderedPayloads(t *testing.T) {
	need(t)
	if testing.Short() {
		t.Skip("renders every example (-short)")
	}
	out := t.TempDir()
	var payloads []payload
	examples, _ := filepath.Glob(filepath.Join(repoRoot, "examples", "*"))
	for _, ex := range examples {
		if specs, _ := filepath.Glob(filepath.Join(ex, "*.fab.hcl")); len(specs) == 0 {
			continue
		}
		dir := filepath.Join(out, filepath.Base(ex))
		render(t, ex, dir)
		files, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
		for _, f := range files {
			if b := filepath.Base(f); b != "gnmi-setrequest.json" && b != "config_db.json" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(out, f)
			payloads = append(payloads, loadPayload(t, "examples/"+rel, b))
		}
	}
	goldens, _ := filepath.Glob(filepath.Join(repoRoot, "drivers", "switch", "*", "testdata", "*.golden"))
	for _, g := range goldens {
		drv := filepath.Base(filepath.Dir(filepath.Dir(g)))
		if drv != "sonic" && drv != "srlinux" && drv != "openconfig" {
			continue
		}
		if strings.HasSuffix(g, ".state.golden") {
			continue // a reader's golden (state read from real output), not a rendering
		}
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(repoRoot, g)
		payloads = append(payloads, loadPayload(t, rel, b))
	}
	if len(payloads) == 0 {
		t.Fatal("no payloads rendered")
	}
	factory := srlFactory(t)
	var report strings.Builder
	var stats Stats
	refused := 0
	for _, p := range payloads {
		err := p.validate(t, profile(t, p.profile), factory, 100000, &stats)
		if err == nil {
			fmt.Fprintf(&report, "ACCEPT %s (%s)\n", p.name, p.profile)
			continue
		}
		refused++
		fmt.Fprintf(&report, "REFUSE %s (%s): %s\n", p.name, p.profile, summary(err))
		for _, line := range problems(err) {
			fmt.Fprintf(&report, "    %s\n", line)
		}
	}
	fmt.Fprintf(&report, "libyang: %d payloads, %d refused; %d data nodes, %d constraints evaluated (%d must, %d when, %d leafref)\n",
		len(payloads), refused, stats.Nodes, stats.Constraints(), stats.Musts, stats.Whens, stats.Leafrefs)
	if stats.Validations != int64(len(payloads)) || stats.Musts == 0 || stats.Whens == 0 || stats.Leafrefs == 0 {
		t.Errorf("constraint counts: %+v (every payload validated once; the SR Linux and SONiC models have musts, whens and leafrefs)", stats)
	}
	t.Log("\n" + report.String())
	if f := os.Getenv("FABCTL_LIBYANG_REPORT"); f != "" {
		if err := os.WriteFile(f, []byte(report.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
	if refused > 0 {
		t.Errorf("%d rendered payloads refused by libyang", refused)
	}
}

// TestSRLinuxSystemDefaults: the factory configuration fabctl's SR Linux
// driver assumes and the testbed's SR Linux targets start with
// (srlinux.SystemDefaults) is valid on a 7220 IXR-D5, and is the one
// this package validates the rendered payloads over.
func TestSRLinuxSystemDefaults(t *testing.T) {
	c := profile(t, "srlinux")
	if err := c.ValidateJSON(srlinux.SystemDefaults(), Options{}); err != nil {
		t.Fatalf("srlinux.SystemDefaults refused:\n%v", err)
	}
	var a, b any
	if err := json.Unmarshal(srlinux.SystemDefaults(), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(srlFactory(t), &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("testdata/srlinux-7220-d5-factory.json differs from srlinux.SystemDefaults()")
	}
}
