package importer_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"

	"github.com/fabctl/fabctl/drivers/builtin"
	"github.com/fabctl/fabctl/importer"
	"github.com/fabctl/fabctl/intent"
	"github.com/fabctl/fabctl/internal/testutil"
	"github.com/fabctl/fabctl/plan"
	"github.com/fabctl/fabctl/spec"
	"github.com/fabctl/fabctl/testbed/cumulusemu"
	"github.com/fabctl/fabctl/testbed/eosemu"
	"github.com/fabctl/fabctl/testbed/gnmitarget"
	"github.com/fabctl/fabctl/testbed/nxosemu"
	"github.com/fabctl/fabctl/testbed/sonicemu"
	"github.com/fabctl/fabctl/validate/lint"
	"github.com/fabctl/fabctl/yangval"
)

const emuPassword = "Import-roundtrip-pa55"

type emulator interface {
	Addr() string
	KnownHostsLine() string
	Close() error
}

// sshFabric starts an in-process emulator (127.0.0.1, no root) for each
// switch of the example spec whose platform has one, copies the spec to
// a directory with an override file pointing those switches at their
// emulators (their credentials' known_hosts made the directory's, every
// env() secret set to the emulators' password), and returns the
// directory and the switches' names.
func sshFabric(t *testing.T, example string) (dir string, names []string) {
	t.Helper()
	dir = t.TempDir()
	src := filepath.Join("..", "examples", example)
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".fab.hcl") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range envRef.FindAllStringSubmatch(string(b), -1) {
			t.Setenv(m[1], emuPassword)
		}
		b = knownHosts.ReplaceAll(b, []byte(`known_hosts = ".fabctl/testbed/known_hosts"`))
		b = caFile.ReplaceAll(b, []byte(`ca_file = ".fabctl/testbed/gnmi-ca.pem"`))
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := testutil.Load(t, dir, spec.LoadOptions{})
	var ov, kh strings.Builder
	var pki *gnmitarget.PKI
	for _, sw := range s.Switches {
		var e emulator
		var err error
		ports := 1         // the spec's ports come as ExtraPorts: no more than the example names
		var extra []string // the spec's port names (split lanes, other slots) beside the numbered ones
		for _, p := range sw.Ports {
			extra = append(extra, p.Name)
		}
		user := "admin"
		if c := s.CredentialsByName(sw.Credentials); c != nil && c.Username != "" {
			user = c.Username
		}
		switch sw.Platform {
		case "sonic":
			e, err = sonicemu.Start(sonicemu.Options{Hostname: sw.Name, User: user, ExtraPorts: extraPorts(extra, ports, sw.Platform), Password: emuPassword, Ports: ports})
		case "eos":
			e, err = eosemu.Start(eosemu.Options{Hostname: sw.Name, User: user, ExtraPorts: extraPorts(extra, ports, sw.Platform), Password: emuPassword, Ports: ports, Model: sw.Model})
		case "nxos":
			e, err = nxosemu.Start(nxosemu.Options{Hostname: sw.Name, User: user, ExtraPorts: extraPorts(extra, ports, sw.Platform), Password: emuPassword, Ports: ports})
		case "cumulus":
			e, err = cumulusemu.Start(cumulusemu.Options{Hostname: sw.Name, User: user, Password: emuPassword, Ports: swpCount(extra)})
		case "srlinux", "openconfig":
			if pki == nil {
				pki = fabricPKI(t, dir)
			}
			e, err = gnmiTarget(t, pki, sw.Platform, sw.Name, user, extra)
		default:
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", sw.Name, err)
		}
		t.Cleanup(func() { e.Close() })
		if l := e.KnownHostsLine(); l != "" {
			kh.WriteString(l + "\n")
		}
		fmt.Fprintf(&ov, "switch %q {\n  address = %q\n}\n", sw.Name, e.Addr())
		names = append(names, sw.Name)
	}
	if len(names) == 0 {
		t.Fatalf("examples/%s has no switch an SSH emulator runs", example)
	}
	if err := os.MkdirAll(filepath.Join(dir, ".fabctl", "testbed"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".fabctl", "testbed", "known_hosts"), []byte(kh.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "emulators_override.fab.hcl"), []byte(ov.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, names
}

// gnmiTarget starts a gNMI target for a switch of a gNMI platform, as
// the local testbed serves one (testbed/local/serve.go): the platform's
// YANG model set from ../shared/yang validates every Set, TLS with a CA
// written where the example's credentials look for it
// (fabricPKI), the emulators' password.
func gnmiTarget(t *testing.T, pki *gnmitarget.PKI, platform, name, user string, ports []string) (emulator, error) {
	t.Helper()
	p, ok := builtin.Platform(platform)
	if !ok {
		t.Fatalf("no platform %s", platform)
	}
	cfg := gnmitarget.Config{Name: name, Flavor: p.YANG.Set, TLS: pki.TLS(false), Username: user, Password: emuPassword,
		Interfaces: ports, Profile: &p.YANG.Profile, Schema: yangSchema(t, p.YANG.Set)}
	if p.EmulatorInitial != nil {
		cfg.Initial = p.EmulatorInitial()
	}
	tg, err := gnmitarget.Start(context.Background(), cfg)
	if err != nil {
		return nil, err
	}
	return gnmiEmulator{tg}, nil
}

// fabricPKI writes the gNMI targets' certificates under dir/.fabctl/
// testbed, the CA where the credentials' ca_file points.
func fabricPKI(t *testing.T, dir string) *gnmitarget.PKI {
	t.Helper()
	pki, err := gnmitarget.NewTestPKI(filepath.Join(dir, ".fabctl", "testbed", "pki"))
	if err != nil {
		t.Fatal(err)
	}
	ca := filepath.Join(dir, ".fabctl", "testbed", "gnmi-ca.pem")
	if err := os.Rename(pki.CA, ca); err != nil {
		t.Fatal(err)
	}
	pki.CA = ca
	return pki
}

// gnmiEmulator is a gNMI target as an emulator: no SSH host key (TLS is
// verified against its CA instead).
type gnmiEmulator struct{ *gnmitarget.Target }

func (gnmiEmulator) KnownHostsLine() string { return "" }

var (
	schemaMu sync.Mutex
	schemas  = map[string]*yangval.Schema{}
)

// yangSchema loads a YANG model set of ../shared/yang once per test
// binary (the test skips without ../shared, fails without it in CI).
func yangSchema(t *testing.T, set string) *yangval.Schema {
	t.Helper()
	schemaMu.Lock()
	defer schemaMu.Unlock()
	if s := schemas[set]; s != nil {
		return s
	}
	s, err := yangval.Load(testutil.Shared(t, "yang", set))
	if err != nil {
		t.Fatalf("%s YANG models: %v", set, err)
	}
	schemas[set] = s
	return s
}

// swpCount is how many swpN ports a Cumulus emulator needs for the names
// (swp11s1 is a breakout of swp11).
func swpCount(names []string) int {
	n := 1
	for _, p := range names {
		if m := swpNum.FindStringSubmatch(p); m != nil {
			if k, _ := strconv.Atoi(m[1]); k > n {
				n = k
			}
		}
	}
	return n
}

var swpNum = regexp.MustCompile(`^swp([0-9]+)`)

// extraPorts leaves out the names the emulator has already (its
// numbered front-panel ports).
func extraPorts(names []string, n int, platform string) []string {
	have := map[string]bool{}
	for i := 0; i < n; i++ {
		switch platform {
		case "sonic":
			have[fmt.Sprintf("Ethernet%d", 4*i)] = true
		case "eos":
			have[fmt.Sprintf("Ethernet%d", i+1)] = true
		case "nxos":
			have[fmt.Sprintf("Ethernet1/%d", i+1)] = true
		}
	}
	var out []string
	for _, p := range names {
		if !have[p] {
			out = append(out, p)
		}
	}
	return out
}

var (
	envRef     = regexp.MustCompile(`env\("([A-Z0-9_]+)"\)`)
	knownHosts = regexp.MustCompile(`known_hosts\s*=\s*"[^"]*"`)
	caFile     = regexp.MustCompile(`ca_file\s*=\s*"[^"]*"`)
)

func planOpts(s *spec.Spec, targets []string) plan.Options {
	return plan.Options{Parallelism: 8, Credentials: s.CredentialsByName, Targets: targets}
}

// planDir plans the spec in dir on the targets.
func planDir(t *testing.T, dir string, targets []string) *plan.Plan {
	t.Helper()
	s := testutil.Load(t, dir, spec.LoadOptions{})
	return plan.Make(context.Background(), s, intent.Compile(s), builtin.Registry(), planOpts(s, targets))
}

// applyDir plans and applies the spec in dir on the targets.
func applyDir(t *testing.T, dir string, targets []string) {
	t.Helper()
	if err := tryApply(t, dir, targets); err != nil {
		t.Fatalf("apply: %v", err)
	}
}

// importDir reads the targets of the spec in dir (the inventory) and
// imports; it returns the result and the inventory's files.
func importDir(t *testing.T, dir string, targets []string) *importer.Result {
	t.Helper()
	files, diags := spec.ReadFiles(dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	s := testutil.Load(t, dir, spec.LoadOptions{})
	obs := map[string]*importer.Observed{}
	for _, o := range plan.Observe(context.Background(), intent.Compile(s), builtin.Registry(), planOpts(s, targets)) {
		obs[o.Address] = &importer.Observed{Live: o.Live, Err: o.Err, Fields: o.Fields, Unexpressible: o.Unexpressible, Read: o.Read}
	}
	res, err := importer.Import(files, obs, importer.Options{
		Name: filepath.Join(dir, "imported.fab.hcl"),
		Load: func(files []spec.File) (*spec.Spec, hcl.Diagnostics) {
			return spec.LoadFiles(files, spec.LoadOptions{Platforms: builtin.SpecPlatforms()})
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// replaceSpec puts the imported spec in place of the inventory's files
// (the override file that points at the emulators stays).
func replaceSpec(t *testing.T, dir string, hclSrc []byte) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".fab.hcl") && !spec.IsOverrideFile(e.Name()) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "imported.fab.hcl"), hclSrc, 0o644); err != nil {
		t.Fatal(err)
	}
}

func changesOf(p *plan.Plan, name string) []intent.AttrChange {
	if dp := p.Device(name); dp != nil {
		return dp.Changes
	}
	return nil
}

// customQoS is a fabric QoS unlike fabctl's defaults (applied to the
// testbed's switches, then imported from the example without it): the
// import must find every one of these values on the devices.
const customQoS = `
class "storage" {
  role      = "rdma"
  priority  = 4
  dscp      = ["24-31"]
  lossless  = true
  bandwidth = 60
  ecn {
    min         = "200KB"
    max         = "2MB"
    probability = "50%"
  }
}

class "cnp" {
  role     = "cnp"
  priority = 6
  dscp     = [48]
  strict   = true
}

class "bulk" {
  role      = "other"
  priority  = 0
  default   = true
  bandwidth = 40
}
`

// changeOneClass sets the ECN minimum of the first class with an ecn
// block to 250KB (260KB when it is 250KB already) and returns the spec,
// the state path that changes and its new value.
func changeOneClass(t *testing.T, src []byte) ([]byte, string, string) {
	t.Helper()
	f, diags := hclwrite.ParseConfig(src, "imported.fab.hcl", hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, b := range f.Body().Blocks() {
		if b.Type() != "class" {
			continue
		}
		for _, e := range b.Body().Blocks() {
			if e.Type() != "ecn" {
				continue
			}
			prio := strings.TrimSpace(string(b.Body().GetAttribute("priority").Expr().BuildTokens(nil).Bytes()))
			min, want := "250KB", "250000"
			if strings.Contains(string(e.Body().GetAttribute("min").Expr().BuildTokens(nil).Bytes()), `"250KB"`) {
				min, want = "260KB", "260000"
			}
			e.Body().SetAttributeValue("min", cty.StringVal(min))
			return f.Bytes(), "tc/" + prio + "/ecn/min", want
		}
	}
	// No ECN class (a fabric without DCQCN): one class's ETS share, 10
	// points lower (the shares then sum below 100, as a spec may).
	for _, b := range f.Body().Blocks() {
		if b.Type() != "class" || b.Body().GetAttribute("bandwidth") == nil {
			continue
		}
		prio := strings.TrimSpace(string(b.Body().GetAttribute("priority").Expr().BuildTokens(nil).Bytes()))
		bw, err := strconv.Atoi(strings.TrimSpace(string(b.Body().GetAttribute("bandwidth").Expr().BuildTokens(nil).Bytes())))
		if err != nil || bw < 20 {
			continue
		}
		b.Body().SetAttributeValue("bandwidth", cty.NumberIntVal(int64(bw-10)))
		return f.Bytes(), "tc/" + prio + "/bandwidth", strconv.Itoa(bw - 10)
	}
	t.Fatalf("the imported spec has no class with ECN or an ETS share:\n%s", src)
	return nil, "", ""
}

// TestRoundTripExamples: every example fabric with switches the SSH
// emulators run (SONiC, EOS, NX-OS, Cumulus; the gNMI ones and the hosts
// are not read here) is applied to in-process emulators, as it is and,
// for examples/testbed, with a QoS unlike fabctl's defaults and a slower
// PFC watchdog; import from the example as inventory writes a spec that
// plans clean on every one of those switches; a change of one class in
// it plans exactly that change on every switch.
func TestRoundTripExamples(t *testing.T) {
	for _, tc := range []struct {
		example  string
		qos      string // a file applied beside the example, not in the inventory
		watchdog string // replaces "rdma_mtu = 4096" in the applied spec
	}{
		{example: "testbed"},
		{example: "testbed", qos: customQoS, watchdog: "rdma_mtu = 4096\n  pfc_watchdog {\n    detect  = \"300ms\"\n    restore = \"600ms\"\n  }"},
		{example: "ai-pod"},
		{example: "rocev1-storage"},
		{example: "iwarp-storage"},
		{example: "vm-testbed"},
	} {
		name := tc.example
		if tc.qos != "" {
			name += "-custom"
		}
		t.Run(name, func(t *testing.T) {
			dir, names := sshFabric(t, tc.example)
			t.Logf("switches: %v", names)
			inv := filepath.Join(dir, "testbed.fab.hcl")
			var orig []byte
			if tc.qos != "" {
				var err error
				if orig, err = os.ReadFile(inv); err != nil {
					t.Fatal(err)
				}
				applied := strings.Replace(string(orig), "rdma_mtu = 4096", tc.watchdog, 1)
				os.WriteFile(inv, []byte(applied), 0o644)
				os.WriteFile(filepath.Join(dir, "qos.fab.hcl"), []byte(tc.qos), 0o644)
			}
			applyDir(t, dir, names)
			if tc.qos != "" {
				os.WriteFile(inv, orig, 0o644)
				os.Remove(filepath.Join(dir, "qos.fab.hcl"))
			}

			res := importDir(t, dir, names)
			for _, l := range res.Report.LeftOut {
				t.Errorf("left out: %s %s (live %q, desired %q): %s", l.Device, l.Path, l.Live, l.Desired, l.Reason)
			}
			if len(res.Report.Overrides) != 0 {
				t.Errorf("overrides on a consistent fabric: %+v", res.Report.Overrides)
			}
			if res.Report.Read != len(names) {
				t.Errorf("read %d devices, want %d", res.Report.Read, len(names))
			}
			if strings.Contains(string(res.HCL), emuPassword) || !strings.Contains(string(res.HCL), `env("`) {
				t.Errorf("the written spec does not keep the inventory's env() references:\n%s", res.HCL)
			}
			replaceSpec(t, dir, res.HCL)
			p := planDir(t, dir, names)
			for _, n := range names {
				dp := p.Device(n)
				if dp == nil || dp.Error != "" || dp.HasChanges() {
					t.Fatalf("plan of the imported spec on %s: %+v\n%s", n, dp, res.HCL)
				}
			}
			// One class changed: exactly that setting on every switch.
			changed, path, want := changeOneClass(t, res.HCL)
			replaceSpec(t, dir, changed)
			p = planDir(t, dir, names)
			for _, n := range names {
				cs := changesOf(p, n)
				if len(cs) != 1 || cs[0].Path != path || cs[0].After != want {
					t.Errorf("%s: changes %+v, want exactly %s -> %s", n, cs, path, want)
				}
			}
		})
	}
}

// TestRoundTripBrownfield: one leaf of the testbed maps DSCP 26 to
// priority 4 (typed by hand on that switch); import keeps the majority
// (26 -> 3) as the fabric's class, writes the leaf's entry as its
// dscp_map override, lists the choice with the leaf as dissent, lint
// shows the override as the finding it is, and the plan is empty.
func TestRoundTripBrownfield(t *testing.T) {
	dir, names := sshFabric(t, "testbed")
	applyDir(t, dir, names)
	// The inconsistency, applied to leaf2 (EOS) only.
	src, _ := os.ReadFile(filepath.Join(dir, "testbed.fab.hcl"))
	odd := strings.Replace(string(src), "switch \"leaf2\" {\n", "switch \"leaf2\" {\n  dscp_map = { 26 = 4 }\n", 1)
	if err := os.WriteFile(filepath.Join(dir, "testbed.fab.hcl"), []byte(odd), 0o644); err != nil {
		t.Fatal(err)
	}
	applyDir(t, dir, []string{"leaf2"})
	if err := os.WriteFile(filepath.Join(dir, "testbed.fab.hcl"), src, 0o644); err != nil {
		t.Fatal(err)
	}

	res := importDir(t, dir, names)
	for _, l := range res.Report.LeftOut {
		t.Errorf("left out: %s %s (live %q, desired %q): %s", l.Device, l.Path, l.Live, l.Desired, l.Reason)
	}
	var ov []importer.Override
	for _, o := range res.Report.Overrides {
		ov = append(ov, o)
	}
	if len(ov) != 1 || ov[0].Device != "switch.leaf2" || ov[0].Attribute != "dscp_map" || ov[0].Value != `{ "26" = 4 }` && ov[0].Value != `{
  "26" = 4
}` {
		t.Errorf("overrides %+v, want leaf2's dscp_map { 26 = 4 }", ov)
	}
	found := false
	for _, c := range res.Report.Choices {
		if strings.Contains(c.Setting, "priority 3 dscp") {
			found = true
			if !strings.Contains(c.Value, "26") || len(c.Dissent) != 1 || c.Dissent[0] != "switch.leaf2" {
				t.Errorf("choice %+v: want DSCP 26 on priority 3 with switch.leaf2 dissenting", c)
			}
		}
	}
	if !found {
		t.Errorf("no DSCP choice for priority 3 in %+v", res.Report.Choices)
	}
	replaceSpec(t, dir, res.HCL)
	s := testutil.Load(t, dir, spec.LoadOptions{})
	lr := lint.Run(s)
	shown := false
	for _, d := range lr.Diagnostics {
		if strings.Contains(d.Summary, "dscp_map differs from the classes") && strings.Contains(d.Detail, "leaf2") {
			shown = true
		}
	}
	if !shown {
		t.Errorf("lint does not show leaf2's dscp_map: %v", lr.Diagnostics)
	}
	p := planDir(t, dir, names)
	for _, n := range names {
		if dp := p.Device(n); dp == nil || dp.Error != "" || dp.HasChanges() {
			t.Errorf("plan of the imported spec on %s: %+v", n, dp)
		}
	}
}
